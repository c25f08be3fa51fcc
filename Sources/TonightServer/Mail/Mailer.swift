import Crypto
import Foundation
import Logging

/// A mail job: one mail from a ``MailTemplate`` to one address. Written in the same transaction
/// as the change it tells about (the outbox), rendered when it is sent. It holds no secret: a
/// link's token is derived again from ``tokenID`` (``EmailLinks``).
struct MailJob: Codable, Sendable {
    static let kind = "mail"
    /// Attempts before a transient failure (4xx, no connection) is given up: with the queue's
    /// backoff (doubling from 5 s up to an hour), about a day.
    static let maxAttempts = 32

    var template: MailTemplate
    var to: String
    /// How the member is greeted.
    var name: String
    var language: MailLanguage
    /// The email token whose link the mail carries.
    var tokenID: String?
    /// The new address, for the change mails.
    var detail: String?
}

/// The tokens in mailed links and the links themselves.
///
/// A token is an HMAC of its row's id under a key derived from the server's signing key, and only
/// its SHA-256 is stored: the database alone (a backup, a dead mail job) yields no usable link,
/// and the mail job needs no secret in its payload.
struct EmailLinks: Sendable {
    private let key: SymmetricKey
    /// Where people reach the web app (`PUBLIC_URL`), without a trailing slash.
    let publicURL: String

    init(signingKey: [UInt8], publicURL: String) {
        let derived = HMAC<SHA256>.authenticationCode(
            for: Data("tonight email links".utf8), using: SymmetricKey(data: signingKey))
        key = SymmetricKey(data: Data(derived))
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
    }

    /// The token of email token `id` (43 URL-safe characters).
    func token(id: String) -> String {
        Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(id.utf8), using: key)))
    }

    /// What is stored of a token.
    static func hash(_ token: String) -> String { TokenService.hash(token) }

    /// The web app's screen for `template`'s link.
    func link(_ template: MailTemplate, tokenID: String) -> String {
        let screen = template == .passwordReset ? "reset-password" : "verify-email"
        return "\(publicURL)/#/\(screen)/\(token(id: tokenID))"
    }
}

/// Sends mail jobs through the configured transport. A 5xx answer (or an address the server
/// cannot take) gives the job up at once with the server's reason kept on it; a 4xx answer or a
/// lost connection throws, and the queue retries with backoff.
struct Mailer: Sendable {
    let transport: any MailTransport
    let from: MailAddress
    let links: EmailLinks

    /// The handler for ``MailJob/kind``.
    func run(_ job: ClaimedJob) async throws {
        let mail = try JSONDecoder().decode(MailJob.self, from: Data(job.payload.utf8))
        do {
            try await transport.deliver(message(mail, id: job.id))
        } catch let error as SMTPError where error.isPermanent {
            throw JobGivenUp(reason: error.description)
        }
    }

    /// The message of `mail`, its `Message-ID` made from the job's id (the same on every attempt).
    func message(_ mail: MailJob, id: String) -> MailMessage {
        let link = mail.tokenID.map { links.link(mail.template, tokenID: $0) }
        let content = mail.template.render(language: mail.language, name: mail.name, link: link, detail: mail.detail)
        let domain = from.address.split(separator: "@").last.map(String.init) ?? "localhost"
        return MailMessage(
            from: from, to: MailAddress(address: mail.to, name: mail.name), subject: content.subject,
            text: content.text, html: content.html, messageID: "\(id)@\(domain)")
    }
}
