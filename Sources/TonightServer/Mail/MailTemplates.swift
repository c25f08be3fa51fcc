import Foundation

/// The languages mail is written in. English is the default.
enum MailLanguage: String, Codable, Sendable, CaseIterable {
    case en
    case de

    /// The first language of an `Accept-Language` header (by weight) that mail is written in.
    static func preferred(_ header: String?) -> MailLanguage? {
        guard let header else { return nil }
        let ranked = header.split(separator: ",").enumerated().compactMap {
            (index, item) -> (tag: String, weight: Double, index: Int)? in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, !tag.isEmpty else { return nil }
            let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return (tag.lowercased(), weight, index)
        }
        return
            ranked
            .filter { $0.weight > 0 }
            .sorted { $0.weight != $1.weight ? $0.weight > $1.weight : $0.index < $1.index }
            .lazy.compactMap { MailLanguage(rawValue: String($0.tag.prefix { $0 != "-" })) }.first
    }
}

/// What a mail says. Every text people receive by mail is written here, in every language of
/// ``MailLanguage``.
enum MailTemplate: String, Codable, Sendable {
    /// A new account's address (or one asked again): its link verifies it.
    case verifyEmail
    /// A new address for an account: its link makes it the account's.
    case confirmNewEmail
    /// To the old address, once the change is done.
    case emailChanged
    /// Its link sets a new password.
    case passwordReset

    /// Subject, plain text and HTML, for `name` (how the member is greeted), with `link` (the
    /// mail's button) and `detail` (the new address, for the change mails).
    func render(language: MailLanguage, name: String, link: String?, detail: String?) -> (
        subject: String, text: String, html: String
    ) {
        let words = wording(language, detail: detail ?? "")
        let greeting = language == .de ? "Hallo \(name)," : "Hi \(name),"
        let sign = language == .de ? "Bis heute Abend\nTonight" : "See you tonight\nTonight"
        var text = "\(greeting)\n\n\(words.body)\n\n"
        if let link { text += "\(words.action):\n\(link)\n\n" }
        text += "\(words.footer)\n\n\(sign)\n"
        let escape = { (value: String) in
            value.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        var html = """
            <!doctype html>
            <html lang="\(language.rawValue)"><head><meta charset="utf-8"><title>\(escape(words.subject))</title></head>
            <body style="font-family: system-ui, sans-serif; color: #1a1a1a; max-width: 34em; margin: 0 auto; padding: 1em;">
            <p>\(escape(greeting))</p>
            <p>\(escape(words.body))</p>

            """
        if let link {
            html += """
                <p><a href="\(escape(link))" style="display: inline-block; background: #b3134f; color: #ffffff; \
                padding: 0.8em 1.4em; border-radius: 0.5em; text-decoration: none;">\(escape(words.action))</a></p>
                <p style="font-size: 0.9em; color: #555555;">\(escape(link))</p>

                """
        }
        html += """
            <p style="font-size: 0.9em; color: #555555;">\(escape(words.footer))</p>
            <p>\(escape(sign).replacingOccurrences(of: "\n", with: "<br>"))</p>
            </body></html>
            """
        return (words.subject, text, html)
    }

    private func wording(_ language: MailLanguage, detail: String) -> (
        subject: String, body: String, action: String, footer: String
    ) {
        switch (self, language) {
        case (.verifyEmail, .en):
            (
                "Confirm your email address", "Please confirm that this is your email address.",
                "Confirm my address", "The link works once, for 7 days. If you did not sign up, ignore this mail."
            )
        case (.verifyEmail, .de):
            (
                "Bestätige deine E-Mail-Adresse", "Bitte bestätige, dass dies deine E-Mail-Adresse ist.",
                "Adresse bestätigen",
                "Der Link gilt einmal, 7 Tage lang. Wenn du dich nicht angemeldet hast, ignoriere diese Mail."
            )
        case (.confirmNewEmail, .en):
            (
                "Confirm your new email address", "You asked to use this address for your Tonight account.",
                "Use this address", "The link works once, for 24 hours. Until then your old address stays."
            )
        case (.confirmNewEmail, .de):
            (
                "Bestätige deine neue E-Mail-Adresse",
                "Du möchtest diese Adresse für dein Tonight-Konto verwenden.", "Diese Adresse verwenden",
                "Der Link gilt einmal, 24 Stunden lang. Bis dahin bleibt deine alte Adresse."
            )
        case (.emailChanged, .en):
            (
                "Your email address was changed", "Your Tonight account now uses \(detail) instead of this address.",
                "", "If this was not you, choose a new password at once with “Forgot password?” on the sign-in screen."
            )
        case (.emailChanged, .de):
            (
                "Deine E-Mail-Adresse wurde geändert",
                "Dein Tonight-Konto verwendet jetzt \(detail) statt dieser Adresse.", "",
                "Warst du das nicht? Wähle sofort ein neues Passwort mit „Passwort vergessen?“ bei der Anmeldung."
            )
        case (.passwordReset, .en):
            (
                "Choose a new password", "Someone, hopefully you, asked to choose a new password for your account.",
                "Choose a new password",
                "The link works once, for 30 minutes, and signs you out everywhere. If it was not you, ignore this mail."
            )
        case (.passwordReset, .de):
            (
                "Wähle ein neues Passwort",
                "Jemand, hoffentlich du, möchte ein neues Passwort für dein Konto wählen.", "Neues Passwort wählen",
                "Der Link gilt einmal, 30 Minuten lang, und meldet dich überall ab. Warst du das nicht, ignoriere diese Mail."
            )
        }
    }
}
