import Foundation

/// Where outgoing mail goes: an SMTP server (``SMTPClient``) or, without `SMTP_URL`, a folder.
protocol MailTransport: Sendable {
    /// Hands `message` over; throws ``SMTPError`` (or a connection error) when it was not taken.
    func deliver(_ message: MailMessage) async throws
    /// Where mail goes, for the start-up log (no credentials).
    var summary: String { get }
}

extension SMTPClient: MailTransport {
    func deliver(_ message: MailMessage) async throws { try await send(message) }

    var summary: String {
        let scheme = configuration.security == .implicitTLS ? "smtps" : "smtp"
        return "mail: \(scheme)://\(configuration.host):\(configuration.port)"
            + (configuration.username == nil ? "" : " (with a login)")
    }
}

/// The embedded default: each message is written as an `.eml` file (RFC 5322 text, what the
/// SMTP server would have received) into a folder under the data directory, for a developer or
/// an operator without a mail server to open.
struct MailFolder: MailTransport {
    let path: String

    var summary: String { "mail: no SMTP_URL, so messages are written to \(path) and not sent" }

    func deliver(_ message: MailMessage) async throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
        let name =
            String(Int64(message.date.timeIntervalSince1970 * 1000)) + "-"
            + String(message.messageID.prefix { $0 != "@" }) + ".eml"
        let file = URL(fileURLWithPath: path).appendingPathComponent(name)
        try Data(message.rendered().utf8).write(to: file, options: .atomic)
    }
}
