import Foundation

/// A mailbox: an address and the name shown with it.
struct MailAddress: Sendable, Equatable, Codable {
    var address: String
    var name: String?

    /// The address as a header shows it (`Name <address>`), the name encoded when it is not ASCII.
    var header: String {
        guard let name = name.map(MailMessage.oneLine), !name.isEmpty else { return "<\(address)>" }
        let phrase = MailMessage.encodedPhrase(name)
        // An encoded name is long: the address goes on a folded line of its own.
        return phrase.hasPrefix("=?") ? "\(phrase)\r\n <\(address)>" : "\(phrase) <\(address)>"
    }
}

/// An email with a plain-text and an HTML part, written as RFC 5322 text (``rendered()``):
/// 7-bit only (quoted-printable bodies, RFC 2047 encoded words for non-ASCII headers), CRLF line
/// ends, no line over 78 characters, so any SMTP server takes it without 8BITMIME.
struct MailMessage: Sendable, Equatable {
    var from: MailAddress
    var to: MailAddress
    var subject: String
    var text: String
    var html: String
    /// The `Message-ID` without its angle brackets (the same on every attempt, so a receiver can
    /// recognise a repeat).
    var messageID: String
    var date: Date = Date()

    /// The message as sent after SMTP's `DATA` (before dot-stuffing).
    func rendered() -> String {
        let boundary =
            "tonight-"
            + String(
                messageID.unicodeScalars.filter { $0.isASCII && CharacterSet.alphanumerics.contains($0) }.prefix(50))
        var lines = [
            "From: \(from.header)",
            "To: \(to.header)",
            "Subject: \(Self.encodedText(Self.oneLine(subject)))",
            "Date: \(Self.dateFormatter.string(from: date))",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
            "Content-Type: multipart/alternative;\r\n boundary=\"\(boundary)\"",
            "",
        ]
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines += [
                "--\(boundary)",
                "Content-Type: \(type); charset=utf-8",
                "Content-Transfer-Encoding: quoted-printable",
                "",
                Self.quotedPrintable(body),
            ]
        }
        lines.append("--\(boundary)--")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// RFC 5322 dates, always in UTC.
    private static let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter
    }()

    /// A header value on one line: line breaks and other controls become spaces (no header
    /// injection through a name or subject).
    static func oneLine(_ value: String) -> String {
        String(
            String.UnicodeScalarView(value.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }

    /// `value` as it stands in a header: itself when it is printable ASCII, else RFC 2047 encoded
    /// words (`=?utf-8?B?…?=`) of at most 75 characters, folded onto continuation lines.
    static func encodedText(_ value: String) -> String {
        guard !value.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }) else {
            return value
        }
        // 39 bytes of UTF-8 are 52 of base64: with `=?utf-8?B?`, `?=` and `Subject: ` a line stays
        // under 78.
        var words: [String] = []
        var chunk = Data()
        for character in value {
            let bytes = Data(String(character).utf8)
            if chunk.count + bytes.count > 39, !chunk.isEmpty {
                words.append(chunk.base64EncodedString())
                chunk = Data()
            }
            chunk.append(bytes)
        }
        if !chunk.isEmpty { words.append(chunk.base64EncodedString()) }
        return words.map { "=?utf-8?B?\($0)?=" }.joined(separator: "\r\n ")
    }

    /// A display name as an RFC 5322 phrase: quoted when it has specials, encoded when not ASCII.
    static func encodedPhrase(_ name: String) -> String {
        guard name.unicodeScalars.allSatisfy({ $0.isASCII }) else { return encodedText(name) }
        let atext = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "!#$%&'*+-/=?^_`{|}~ "))
        if name.unicodeScalars.allSatisfy({ $0.isASCII && atext.contains($0) }) { return name }
        return "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }

    /// Quoted-printable (RFC 2045) with CRLF line ends and soft breaks before 76 characters.
    static func quotedPrintable(_ body: String) -> String {
        let source = body.replacingOccurrences(of: "\r\n", with: "\n").split(
            separator: "\n", omittingEmptySubsequences: false)
        return source.map { line in
            var encoded: [String] = []
            var current = ""
            let bytes = Array(line.utf8)
            for (index, byte) in bytes.enumerated() {
                let last = index == bytes.count - 1
                let literal =
                    (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || ((byte == 32 || byte == 9) && !last)
                let piece = literal ? String(UnicodeScalar(byte)) : String(format: "=%02X", byte)
                if current.count + piece.count > 75 {
                    encoded.append(current + "=")
                    current = ""
                }
                current += piece
            }
            encoded.append(current)
            return encoded.joined(separator: "\r\n")
        }.joined(separator: "\r\n")
    }
}
