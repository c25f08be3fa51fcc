import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing

@testable import TonightServer

/// The mail each test's server wrote into its mail folder (no `SMTP_URL`), after running the
/// queued mail jobs.
private func deliveredMail(_ services: AppServices) async throws -> [String] {
    let worker = JobWorker(queue: services.jobs, handlers: services.jobHandlers, logger: services.logger)
    while try await worker.runOnce() > 0 {}
    let folder = services.config.mailFolder
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    return names.compactMap { try? String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }
}

private func mails(to address: String, in all: [String]) -> [String] {
    all.filter {
        $0.contains("\r\nTo: ")
            && $0.components(separatedBy: "\r\n").contains { $0.hasPrefix("To: ") && $0.contains("<\(address)>") }
    }
}

@Suite("Email: verification, change of address, password reset (mail folder)")
struct EmailFlowTests {
    @Test("sign-up mails a link that verifies the address once", arguments: Backend.available)
    func verifyAfterSignUp(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let token = try await client.signUp("vera").accessToken
            let me = try await client.send(.get, "/v1/me", token: token)
            #expect(me.json["emailVerified"] as? Bool == false)
            let mail = try #require(mails(to: "vera@example.com", in: try await deliveredMail(services)).first)
            #expect(mail.contains("Subject: Confirm your email address"))
            #expect(mail.contains("Content-Type: text/html; charset=utf-8"))
            let link = try #require(mailToken(mail, screen: "verify-email"))

            let verified = try await client.send(.post, "/v1/auth/email/verify", json: ["token": link])
            #expect(verified.status == .ok, "\(verified.text)")
            #expect(verified.json["email"] as? String == "vera@example.com")
            #expect(try await client.send(.get, "/v1/me", token: token).json["emailVerified"] as? Bool == true)

            let again = try await client.send(.post, "/v1/auth/email/verify", json: ["token": link])
            #expect(again.status == .badRequest)
            #expect(again.json["code"] as? String == "invalid_link")
            let unknown = try await client.send(
                .post, "/v1/auth/email/verify", json: ["token": String(repeating: "a", count: 43)])
            #expect(unknown.json["code"] as? String == "invalid_link")
            let resend = try await client.send(.post, "/v1/me/email/verification", token: token)
            #expect(resend.status == .conflict)
            #expect(resend.json["code"] as? String == "already_verified")
        }
    }

    @Test("mail is written in the member's language; a newer link replaces the older", arguments: Backend.available)
    func languageAndReplacement(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let signUp = try await client.send(
                .post, "/v1/auth/signup",
                json: ["username": "greta", "email": "greta@example.com", "password": "a long enough passphrase"],
                headers: [.acceptLanguage: "fr-CH, de;q=0.9, en;q=0.8"])
            let token = signUp.json.accessToken
            let first = try #require(mails(to: "greta@example.com", in: try await deliveredMail(services)).first)
            #expect(first.contains("Hallo greta,"))
            #expect(first.contains("Subject: =?utf-8?B?"))
            // Asked again (in English this time): still German, the account's language; the old link is dead.
            let resend = try await client.send(
                .post, "/v1/me/email/verification", token: token, headers: [.acceptLanguage: "en"])
            #expect(resend.status == .accepted)
            let both = mails(to: "greta@example.com", in: try await deliveredMail(services))
            #expect(both.count == 2)
            #expect(both.allSatisfy { $0.contains("Hallo greta,") })
            let old = try #require(mailToken(both[0], screen: "verify-email"))
            let new = try #require(mailToken(both[1], screen: "verify-email"))
            #expect(old != new)
            let stale = try await client.send(.post, "/v1/auth/email/verify", json: ["token": old])
            #expect(stale.json["code"] as? String == "invalid_link")
            #expect(try await client.send(.post, "/v1/auth/email/verify", json: ["token": new]).status == .ok)
        }
    }

    @Test(
        "password reset: same answer for anyone, single use, 30 minutes, ends every login", arguments: Backend.available
    )
    func passwordReset(backend: Backend) async throws {
        try await withApp(backend, configure: { $0.mailsPerHourPerAccount = 3 }) { services, client in
            let signedUp = try await client.signUp("rita")
            _ = try await deliveredMail(services)
            let before = try await deliveredMail(services).count

            let nobody = try await client.send(.post, "/v1/auth/password-reset", json: ["email": "nobody@example.com"])
            #expect(nobody.status == .accepted)
            #expect(try await deliveredMail(services).count == before)
            let invalid = try await client.send(.post, "/v1/auth/password-reset", json: ["email": "not an address"])
            #expect(invalid.status == .badRequest)

            let asked = try await client.send(.post, "/v1/auth/password-reset", json: ["email": " Rita@Example.com"])
            #expect(asked.status == .accepted)
            #expect(asked.body.readableBytes == 0)
            let mail = try #require(mails(to: "rita@example.com", in: try await deliveredMail(services)).last)
            #expect(mail.contains("Subject: Choose a new password"))
            let link = try #require(mailToken(mail, screen: "reset-password"))

            let weak = try await client.send(
                .post, "/v1/auth/password-reset/complete", json: ["token": link, "newPassword": "short"])
            #expect(weak.status == .badRequest)
            #expect(weak.json.fieldErrors == ["newPassword"])
            let done = try await client.send(
                .post, "/v1/auth/password-reset/complete",
                json: ["token": link, "newPassword": "a brand new passphrase"])
            #expect(done.status == .noContent, "\(done.text)")
            let refresh = try await client.send(
                .post, "/v1/auth/refresh", json: ["refreshToken": signedUp.refreshToken])
            #expect(refresh.status == .unauthorized)
            #expect(try await client.logIn("rita").status == .unauthorized)
            let newLogin = try await client.logIn("rita", password: "a brand new passphrase")
            #expect(newLogin.status == .ok)
            // The link reached the address: it counts as verified.
            #expect(newLogin.json.user["emailVerified"] as? Bool == true)
            let reused = try await client.send(
                .post, "/v1/auth/password-reset/complete", json: ["token": link, "newPassword": "another passphrase 2"])
            #expect(reused.json["code"] as? String == "invalid_link")

            // An expired link: 410, and the password stays.
            #expect(
                try await client.send(.post, "/v1/auth/password-reset", json: ["email": "rita@example.com"]).status
                    == .accepted)
            let lateMail = try #require(mails(to: "rita@example.com", in: try await deliveredMail(services)).last)
            let late = try #require(mailToken(lateMail, screen: "reset-password"))
            #expect(late != link)
            try await services.database.sql.raw(
                "UPDATE email_tokens SET expires_at = \(bind: Clock.millis() - 1) WHERE used_at IS NULL"
            ).run()
            let expired = try await client.send(
                .post, "/v1/auth/password-reset/complete", json: ["token": late, "newPassword": "another passphrase 2"])
            #expect(expired.status == .gone)
            #expect(expired.json["code"] as? String == "link_expired")
            #expect(try await client.logIn("rita", password: "a brand new passphrase").status == .ok)

            // The account's hourly mail limit (3: sign-up and two resets so far) holds silently.
            let count = mails(to: "rita@example.com", in: try await deliveredMail(services)).count
            #expect(count == 3)
            for _ in 0..<3 {
                let more = try await client.send(.post, "/v1/auth/password-reset", json: ["email": "rita@example.com"])
                #expect(more.status == .accepted)
            }
            #expect(mails(to: "rita@example.com", in: try await deliveredMail(services)).count == count)
        }
    }

    /// Failed before: a reset left a change of address waiting (made by whoever had the password)
    /// and the browsers subscribed to the account; and every reset request replaced the owner's link.
    @Test("a reset takes back what the password gave; asking again mails the same link", arguments: Backend.available)
    func resetTakesBack(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let zoe = try await client.signUp("zoe")
            let id = zoe.user["id"] as? String ?? ""
            let change = try await client.send(
                .put, "/v1/me/email", json: ["email": "thief@example.com", "password": "a long enough passphrase"],
                token: zoe.accessToken)
            #expect(change.status == .accepted)
            try await services.push.subscriptions.register(
                WebPushSubscriptionRecord(
                    endpoint: "https://push.example.com/thief", userID: id, p256dh: "x", auth: "y", createdAt: 0))
            let thiefMail = try #require(mails(to: "thief@example.com", in: try await deliveredMail(services)).last)
            let stolen = try #require(mailToken(thiefMail, screen: "verify-email"))

            for _ in 0..<2 {
                #expect(
                    try await client.send(.post, "/v1/auth/password-reset", json: ["email": "zoe@example.com"]).status
                        == .accepted)
            }
            let resets = mails(to: "zoe@example.com", in: try await deliveredMail(services)).filter {
                $0.contains("Subject: Choose a new password")
            }
            #expect(resets.count == 2)
            let links = Set(resets.compactMap { mailToken($0, screen: "reset-password") })
            #expect(links.count == 1)
            let done = try await client.send(
                .post, "/v1/auth/password-reset/complete",
                json: ["token": links.first ?? "", "newPassword": "a brand new passphrase"])
            #expect(done.status == .noContent)
            let late = try await client.send(.post, "/v1/auth/email/verify", json: ["token": stolen])
            #expect(late.json["code"] as? String == "invalid_link")
            #expect(try await services.push.subscriptions.subscriptions(of: id).isEmpty)
        }
    }

    @Test("one reset link used by twenty clients at once sets one password", arguments: Backend.available)
    func racingReset(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            _ = try await client.signUp("rosa")
            #expect(
                try await client.send(.post, "/v1/auth/password-reset", json: ["email": "rosa@example.com"]).status
                    == .accepted)
            let sent = mails(to: "rosa@example.com", in: try await deliveredMail(services))
            let link = try #require(sent.lazy.compactMap { mailToken($0, screen: "reset-password") }.first)
            let statuses = try await client.concurrentStatuses(20) { n in
                try await client.send(
                    .post, "/v1/auth/password-reset/complete",
                    json: ["token": link, "newPassword": "racing passphrase \(n)"])
            }
            #expect(statuses.filter { $0 == .noContent }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == .badRequest }.count == 19, "\(statuses)")
            var winners = 0
            for n in 0..<20 where try await client.logIn("rosa", password: "racing passphrase \(n)").status == .ok {
                winners += 1
            }
            #expect(winners == 1)
        }
    }

    @Test("reset requests are limited per client address", arguments: [Backend.sqlite])
    func resetLimitedPerAddress(backend: Backend) async throws {
        try await withApp(backend, configure: { $0.passwordResetsPerHourPerIP = 2 }) { _, client in
            for _ in 0..<2 {
                #expect(
                    try await client.send(.post, "/v1/auth/password-reset", json: ["email": "a@example.com"]).status
                        == .accepted)
            }
            let limited = try await client.send(.post, "/v1/auth/password-reset", json: ["email": "a@example.com"])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] != nil)
        }
    }

    @Test(
        "change of address: confirmed on the new one, notice to the old, races end in one owner",
        arguments: Backend.available)
    func changeEmail(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let carl = try await client.signUp("carl").accessToken
            let dora = try await client.signUp("dora").accessToken
            let wrong = try await client.send(
                .put, "/v1/me/email", json: ["email": "carl.new@example.com", "password": "not my password"],
                token: carl)
            #expect(wrong.status == .forbidden)
            let missing = try await client.send(
                .put, "/v1/me/email", json: ["email": "carl.new@example.com"], token: carl)
            #expect(missing.json.fieldErrors == ["password"])
            let same = try await client.send(
                .put, "/v1/me/email", json: ["email": "CARL@example.com", "password": "a long enough passphrase"],
                token: carl)
            #expect(same.json.fieldErrors == ["email"])
            let taken = try await client.send(
                .put, "/v1/me/email", json: ["email": "dora@example.com", "password": "a long enough passphrase"],
                token: carl)
            #expect(taken.status == .conflict)

            let asked = try await client.send(
                .put, "/v1/me/email", json: ["email": "carl.new@example.com", "password": "a long enough passphrase"],
                token: carl)
            #expect(asked.status == .accepted, "\(asked.text)")
            let pending = try await client.send(.get, "/v1/me", token: carl)
            #expect(pending.json["email"] as? String == "carl@example.com")
            #expect(pending.json["pendingEmail"] as? String == "carl.new@example.com")
            let mail = try #require(mails(to: "carl.new@example.com", in: try await deliveredMail(services)).first)
            #expect(mail.contains("Subject: Confirm your new email address"))
            let link = try #require(mailToken(mail, screen: "verify-email"))

            // Dora asks for the same address; Carl confirms first, so hers is refused.
            let doraAsked = try await client.send(
                .put, "/v1/me/email", json: ["email": "carl.new@example.com", "password": "a long enough passphrase"],
                token: dora)
            #expect(doraAsked.status == .accepted)
            let doraMail = try #require(mails(to: "carl.new@example.com", in: try await deliveredMail(services)).last)
            let doraLink = try #require(mailToken(doraMail, screen: "verify-email"))

            let confirmed = try await client.send(.post, "/v1/auth/email/verify", json: ["token": link])
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            #expect(confirmed.json["email"] as? String == "carl.new@example.com")
            let after = try await client.send(.get, "/v1/me", token: carl)
            #expect(after.json["email"] as? String == "carl.new@example.com")
            #expect(after.json["emailVerified"] as? Bool == true)
            #expect(after.json["pendingEmail"] == nil)
            let notice = try #require(mails(to: "carl@example.com", in: try await deliveredMail(services)).last)
            #expect(notice.contains("Subject: Your email address was changed"))
            #expect(mailText(notice).contains("carl.new@example.com"))
            #expect(try await client.logIn("carl.new@example.com").status == .ok)

            let lost = try await client.send(.post, "/v1/auth/email/verify", json: ["token": doraLink])
            #expect(lost.status == .conflict)
            #expect(lost.json["code"] as? String == "taken")
            #expect(try await client.send(.get, "/v1/me", token: dora).json["email"] as? String == "dora@example.com")
        }
    }
}

@Suite("Mail: messages, templates, languages")
struct MailMessageTests {
    @Test("a rendered message is 7-bit, CRLF, folded, its headers encoded and free of injected lines")
    func rendering() {
        let message = MailMessage(
            from: MailAddress(address: "no-reply@tonight.example", name: "Tonight"),
            to: MailAddress(address: "zoe@example.com", name: "Zoë \"Z\"\r\nBcc: evil@example.com"),
            subject: "Bestätige deine E-Mail-Adresse – jetzt, bitte, mit einem ziemlich langen Betreff",
            text: "Hallo Zoë,\n.a line starting with a dot\n" + String(repeating: "x", count: 200) + " \n",
            html: "<p>Hallo</p>", messageID: "job1@tonight.example",
            date: Date(timeIntervalSince1970: 1_800_000_000))
        let raw = message.rendered()
        #expect(raw.unicodeScalars.allSatisfy { $0.isASCII })
        #expect(!raw.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        #expect(raw.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 78 })
        #expect(!raw.contains("\r\nBcc:"))
        #expect(raw.contains("Date: Fri, 15 Jan 2027 08:00:00 +0000"))
        #expect(raw.contains("Subject: =?utf-8?B?"))
        #expect(raw.contains("Message-ID: <job1@tonight.example>"))
        #expect(raw.contains("Hallo Zo=C3=AB,\r\n.a line starting with a dot\r\n"))
        // A space at a line's end is encoded, so no transport can strip it.
        #expect(raw.contains("x=20\r\n"))
        let subject = raw.components(separatedBy: "\r\n").drop { !$0.hasPrefix("Subject:") }.prefix {
            !$0.hasPrefix("Date:")
        }
        let decoded = subject.joined().replacingOccurrences(of: "Subject: ", with: "")
            .components(separatedBy: " ").compactMap { word -> String? in
                guard word.hasPrefix("=?utf-8?B?"), word.hasSuffix("?=") else { return nil }
                return Data(base64Encoded: String(word.dropFirst(10).dropLast(2))).map {
                    String(decoding: $0, as: UTF8.self)
                }
            }.joined()
        #expect(decoded == message.subject)
        #expect(SMTPClient.dotStuffed(raw).contains("\r\n..a line starting"))
        #expect(SMTPClient.dotStuffed(".x\r\n") == "..x\r\n")
    }

    @Test("Accept-Language picks the first language mail is written in, by weight")
    func languages() {
        #expect(MailLanguage.preferred("de-DE,de;q=0.9,en;q=0.8") == .de)
        #expect(MailLanguage.preferred("fr, en;q=0.5, de;q=0.7") == .de)
        #expect(MailLanguage.preferred("fr, es") == nil)
        #expect(MailLanguage.preferred("de;q=0, en") == .en)
        #expect(MailLanguage.preferred(nil) == nil)
    }

    @Test("SMTP_URL: STARTTLS or implicit TLS, percent-encoded login, default ports")
    func smtpURL() throws {
        let plain = try SMTPConfiguration.parse("smtp://mail.example.com")
        #expect(plain.port == 587)
        #expect(plain.security == .startTLS)
        #expect(plain.username == nil)
        let login = try SMTPConfiguration.parse("smtps://me%40example.com:p%3Ass@mail.example.com")
        #expect(login.port == 465)
        #expect(login.security == .implicitTLS)
        #expect(login.username == "me@example.com")
        #expect(login.password == "p:ss")
        #expect(throws: ConfigurationError.self) { try SMTPConfiguration.parse("http://mail.example.com") }
    }
}
