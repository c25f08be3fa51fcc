import Foundation

/// Rules for usernames, emails and passwords. Pure functions; the server reports their
/// issues as problem+json field errors.
public enum AccountRules {
    /// Shortest accepted password, in characters.
    public static let passwordMinLength = 10
    /// Longest accepted password, in characters (bcrypt reads at most 72 bytes).
    public static let passwordMaxLength = 200
    /// The username pattern, as published in `/v1/config`.
    public static let usernamePattern = "^[a-z0-9_.]{3,30}$"

    /// A username as stored (NFKC form, case kept) and its comparison key (NFKC, lower-cased).
    public struct Username: Sendable, Hashable {
        public let display: String
        public let key: String
    }

    /// Normalises a username: Unicode NFKC, then lower-case for comparison. Two usernames that
    /// differ only by case or by compatibility form (full-width letters, ligatures) share a key.
    public static func usernameKey(_ raw: String) -> String {
        raw.trimmingCharacters(in: .whitespaces).precomposedStringWithCompatibilityMapping.lowercased()
    }

    /// Validates a username: 3–30 of `a-z 0-9 _ .` after normalisation.
    public static func username(_ raw: String, field: String = "username") -> Result<Username, FieldIssue> {
        let display = raw.trimmingCharacters(in: .whitespaces).precomposedStringWithCompatibilityMapping
        let key = display.lowercased()
        let count = key.unicodeScalars.count
        if count < 3 {
            return .failure(.init(field: field, code: "too_short", message: "A username has at least 3 characters."))
        }
        if count > 30 {
            return .failure(.init(field: field, code: "too_long", message: "A username has at most 30 characters."))
        }
        let allowed = key.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "."
        }
        guard allowed else {
            return .failure(
                .init(field: field, code: "invalid_characters", message: "A username uses only a-z, 0-9, _ and ."))
        }
        return .success(Username(display: display, key: key))
    }

    /// Validates an email address (a practical subset of RFC 5321) and returns its comparison
    /// key (trimmed, lower-cased).
    public static func email(_ raw: String, field: String = "email") -> Result<String, FieldIssue> {
        let email = raw.trimmingCharacters(in: .whitespaces)
        let invalid = FieldIssue(field: field, code: "invalid_email", message: "This is not a valid email address.")
        guard email.utf8.count <= 254 else { return .failure(invalid) }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .failure(invalid) }
        let local = parts[0]
        let domain = parts[1]
        guard !local.isEmpty, local.utf8.count <= 64, !local.hasPrefix("."), !local.hasSuffix("."),
            !local.contains("..")
        else { return .failure(invalid) }
        let localAllowed = local.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "!#$%&'*+/=?^_`{|}~.-".unicodeScalars.contains(scalar))
        }
        guard localAllowed else { return .failure(invalid) }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return .failure(invalid) }
        for label in labels {
            guard !label.isEmpty, label.utf8.count <= 63, !label.hasPrefix("-"), !label.hasSuffix("-") else {
                return .failure(invalid)
            }
            let ok = label.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-")
            }
            guard ok else { return .failure(invalid) }
        }
        guard let tld = labels.last, tld.count >= 2, tld.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic })
        else { return .failure(invalid) }
        return .success(email.lowercased())
    }

    /// Checks a new password: 10–200 characters, not a well-known password, not too simple,
    /// and not the username.
    public static func password(_ password: String, username: String? = nil, field: String = "password") -> FieldIssue?
    {
        if password.count < passwordMinLength {
            return .init(
                field: field, code: "too_short", message: "A password has at least \(passwordMinLength) characters.")
        }
        if password.count > passwordMaxLength {
            return .init(
                field: field, code: "too_long", message: "A password has at most \(passwordMaxLength) characters.")
        }
        if password.unicodeScalars.contains(where: { $0.value == 0 }) {
            return .init(field: field, code: "invalid_characters", message: "A password may not contain NUL.")
        }
        let lowered = password.lowercased()
        if CommonPasswords.all.contains(lowered) || Set(lowered).count < 4 {
            return .init(
                field: field, code: "too_common",
                message: "This password is too common or too simple; choose another.")
        }
        if let username, usernameKey(username) == usernameKey(password) {
            return .init(field: field, code: "same_as_username", message: "The password may not be the username.")
        }
        return nil
    }

    /// A username to start from for an account made from an outside identity: the letters and
    /// digits of the person's name or email's local part, lower-cased, 3–20 characters
    /// (`user` when nothing usable is left). Callers add digits until it is free.
    public static func suggestedUsername(name: String?, email: String?) -> String {
        for source in [name, email.map { String($0.prefix { $0 != "@" }) }] {
            guard let source else { continue }
            // Any script to Latin, then Latin to ASCII (ë → e, Ø → O, ß → ss).
            let folded =
                source.applyingTransform(StringTransform("Any-Latin; Latin-ASCII"), reverse: false)
                ?? source.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
            let kept = String(
                folded.lowercased().unicodeScalars.filter {
                    ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "."
                }.prefix(20).map(Character.init))
            if kept.count >= 3 { return kept }
        }
        return "user"
    }
}
