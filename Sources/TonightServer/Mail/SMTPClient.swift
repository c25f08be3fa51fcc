import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Where and how to hand mail over: parsed from `SMTP_URL`.
///
/// - `smtp://host:587`: plain SMTP, upgraded with STARTTLS whenever the server offers it. With
///   credentials (`smtp://user:pass@host:587`) STARTTLS is required: a password is never sent in
///   the clear.
/// - `smtps://host:465`: TLS from the first byte (RFC 8314's implicit TLS).
///
/// Credentials are URL-encoded in the URL (`%40` for `@`). AUTH PLAIN is used when the server
/// offers it, else AUTH LOGIN. Certificates are checked against the system's roots plus the PEM
/// file `SMTP_CA_FILE` (a private CA, or a test server's own certificate).
struct SMTPConfiguration: Sendable, Equatable {
    enum Security: Sendable, Equatable {
        /// STARTTLS when offered (required when there are credentials).
        case startTLS
        /// TLS before the greeting.
        case implicitTLS
    }

    var host: String
    var port: Int
    var security: Security
    var username: String?
    var password: String?
    /// Extra trusted certificates (a PEM file).
    var caFile: String?
    /// The name this server gives in `EHLO`.
    var heloName: String = "localhost"
    /// The longest one delivery may take, connection to `QUIT`.
    var timeout: Duration = .seconds(30)

    /// Reads `smtp://` or `smtps://` URLs; nil (with no secrets in the reason) for anything else.
    static func parse(_ url: String, caFile: String? = nil, heloName: String = "localhost") throws -> SMTPConfiguration
    {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
            scheme == "smtp" || scheme == "smtps", let host = parts.host, !host.isEmpty
        else {
            throw ConfigurationError("SMTP_URL must look like smtp://user:password@host:587 or smtps://host:465")
        }
        return SMTPConfiguration(
            host: host, port: parts.port ?? (scheme == "smtps" ? 465 : 587),
            security: scheme == "smtps" ? .implicitTLS : .startTLS,
            username: parts.user?.removingPercentEncoding, password: parts.password?.removingPercentEncoding,
            caFile: caFile?.isEmpty == false ? caFile : nil, heloName: heloName)
    }
}

/// Why a delivery failed. ``isPermanent`` says whether trying again can help: a 5xx reply
/// cannot, a 4xx reply or a lost connection can.
enum SMTPError: Error, CustomStringConvertible, Equatable {
    /// The server answered `code` to `command` (`MAIL`, `RCPT`, `DATA`…).
    case reply(command: String, code: Int, text: String)
    /// Credentials are configured but the server offers no STARTTLS (or no AUTH mechanism we speak).
    case cannotAuthenticate(String)
    /// The server's reply is not SMTP, or too long.
    case malformedReply
    /// The connection closed (or the deadline passed) before the conversation ended.
    case connectionClosed
    /// The recipient needs SMTPUTF8, which the server does not offer.
    case needsSMTPUTF8

    /// Only a refusal of this message is final: a 5xx to the greeting, EHLO, STARTTLS or AUTH is
    /// the server's (or its configuration's) state, which an operator fixes, so it is retried.
    var isPermanent: Bool {
        switch self {
        case .reply(let command, let code, _): code >= 500 && ["MAIL", "RCPT", "DATA"].contains(command)
        case .needsSMTPUTF8: true
        case .cannotAuthenticate, .malformedReply, .connectionClosed: false
        }
    }

    var description: String {
        switch self {
        case .reply(let command, let code, let text): "\(command): \(code) \(text.prefix(300))"
        case .cannotAuthenticate(let why): "cannot authenticate: \(why)"
        case .malformedReply: "the server's reply is not SMTP"
        case .connectionClosed: "the connection closed before the message was accepted"
        case .needsSMTPUTF8: "the address needs SMTPUTF8, which the server does not offer"
        }
    }
}

/// One reply of an SMTP server: its code and text lines (RFC 5321 §4.2).
struct SMTPReply: Sendable, Equatable {
    var code: Int
    var lines: [String]
    var text: String { lines.joined(separator: " ") }
}

/// Splits the server's bytes into replies: `250-…` lines continue one, `250 …` ends it. A line
/// over 2,000 bytes or a reply over 100 lines is refused (a hostile server cannot grow memory).
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply
    private var lines: [String] = []

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let end = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > 2000 { throw SMTPError.malformedReply }
            return .needMoreData
        }
        let bytes = buffer.readBytes(length: end - buffer.readerIndex + 1) ?? []
        let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
        let chars = Array(line.utf8)
        guard bytes.count <= 2000, chars.count >= 3, let code = Int(String(line.prefix(3))), (200...599).contains(code),
            chars.count == 3 || chars[3] == UInt8(ascii: " ") || chars[3] == UInt8(ascii: "-"), lines.count < 100
        else { throw SMTPError.malformedReply }
        lines.append(chars.count > 4 ? String(line.dropFirst(4)) : "")
        if chars.count > 3 && chars[3] == UInt8(ascii: "-") { return .continue }
        context.fireChannelRead(wrapInboundOut(SMTPReply(code: code, lines: lines)))
        lines = []
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        try decode(context: context, buffer: &buffer)
    }
}

/// Sends one message per connection over SMTP (RFC 5321) with SwiftNIO: EHLO, STARTTLS,
/// AUTH PLAIN/LOGIN, MAIL, RCPT, DATA (dot-stuffed), QUIT. Every delivery has a deadline
/// (``SMTPConfiguration/timeout``): past it the connection is closed and the attempt fails as
/// a transient error. Nothing of the message or the credentials is logged.
struct SMTPClient: Sendable {
    let configuration: SMTPConfiguration
    private let tls: NIOSSLContext

    init(configuration: SMTPConfiguration) throws {
        self.configuration = configuration
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = configuration.caFile {
            tls.additionalTrustRoots = [.file(caFile)]
        }
        self.tls = try NIOSSLContext(configuration: tls)
    }

    /// Delivers `message` to its recipient; returns the server's final answer to `DATA`.
    @discardableResult
    func send(_ message: MailMessage) async throws -> String {
        let host = configuration.host
        let implicit = configuration.security == .implicitTLS
        let tls = self.tls
        let sni = Self.isAddress(host) ? nil : host
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if implicit {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: sni))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                    return try NIOAsyncChannel<SMTPReply, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let seconds = configuration.timeout.components.seconds
        let deadline = channel.channel.eventLoop.scheduleTask(in: .seconds(max(1, seconds))) {
            channel.channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        do {
            return try await converse(over: channel, message: message, sni: sni)
        } catch let error as ChannelError {
            // Closed under the conversation: by the deadline, or by the server.
            throw error == .ioOnClosedChannel || error == .eof ? SMTPError.connectionClosed : error
        }
    }

    private func converse(
        over channel: NIOAsyncChannel<SMTPReply, ByteBuffer>, message: MailMessage, sni: String?
    ) async throws -> String {
        let implicit = configuration.security == .implicitTLS
        let tls = self.tls
        return try await channel.executeThenClose { inbound, outbound in
            var session = Conversation(replies: inbound.makeAsyncIterator(), outbound: outbound)
            try await session.expect("greeting", 220)
            var features = try await session.hello(configuration.heloName)
            var secure = implicit
            if !implicit, features.has("STARTTLS") {
                try await session.command("STARTTLS", expect: 220)
                try await channel.channel.pipeline.addHandler(
                    NIOSSLClientHandler(context: tls, serverHostname: sni), position: .first)
                features = try await session.hello(configuration.heloName)
                secure = true
            }
            if let username = configuration.username {
                guard secure else { throw SMTPError.cannotAuthenticate("the server offers no STARTTLS") }
                try await session.authenticate(
                    username: username, password: configuration.password ?? "", features: features)
            }
            let unicode = !(message.from.address + message.to.address).unicodeScalars.allSatisfy(\.isASCII)
            if unicode && !features.has("SMTPUTF8") { throw SMTPError.needsSMTPUTF8 }
            try await session.command(
                "MAIL FROM:<\(message.from.address)>\(unicode ? " SMTPUTF8" : "")", name: "MAIL", expect: 250)
            try await session.command("RCPT TO:<\(message.to.address)>", name: "RCPT", expect: 250, 251)
            try await session.command("DATA", expect: 354)
            try await session.write(Self.dotStuffed(message.rendered()) + ".\r\n")
            let accepted = try await session.expect("DATA", 250)
            try? await session.command("QUIT", expect: 221)
            return accepted.text
        }
    }

    /// Lines that begin with "." get another (RFC 5321 §4.5.2), so none ends the data early.
    static func dotStuffed(_ text: String) -> String {
        var stuffed = text.replacingOccurrences(of: "\r\n.", with: "\r\n..")
        if stuffed.hasPrefix(".") { stuffed = "." + stuffed }
        return stuffed
    }

    static func isAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    /// The EHLO keywords of a server (`STARTTLS`, `AUTH PLAIN LOGIN`, …).
    struct Features {
        var lines: [String]

        func has(_ keyword: String) -> Bool {
            lines.contains { $0.uppercased().split(separator: " ").first.map(String.init) == keyword }
        }

        var authMechanisms: [String] {
            lines.compactMap { line -> [String]? in
                let words = line.uppercased().split(separator: " ").map(String.init)
                return words.first == "AUTH" ? Array(words.dropFirst()) : nil
            }.flatMap { $0 }
        }
    }

    /// The command-and-reply half of a session.
    private struct Conversation {
        var replies: NIOAsyncChannelInboundStream<SMTPReply>.AsyncIterator
        let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

        func write(_ text: String) async throws {
            try await outbound.write(ByteBuffer(string: text))
        }

        /// The next reply, which must have one of `codes`.
        @discardableResult
        mutating func expect(_ command: String, _ codes: Int...) async throws -> SMTPReply {
            guard let reply = try await replies.next() else { throw SMTPError.connectionClosed }
            guard codes.contains(reply.code) else {
                throw SMTPError.reply(command: command, code: reply.code, text: reply.text)
            }
            return reply
        }

        @discardableResult
        mutating func command(_ line: String, name: String? = nil, expect codes: Int...) async throws -> SMTPReply {
            try await write(line + "\r\n")
            guard let reply = try await replies.next() else { throw SMTPError.connectionClosed }
            guard codes.contains(reply.code) else {
                throw SMTPError.reply(
                    command: name ?? String(line.prefix { $0 != " " }), code: reply.code, text: reply.text)
            }
            return reply
        }

        mutating func hello(_ name: String) async throws -> Features {
            // An address literal goes in brackets (RFC 5321 §4.1.3).
            let literal = name.contains(":") ? "[IPv6:\(name)]" : "[\(name)]"
            let helo = SMTPClient.isAddress(name) ? literal : name
            return Features(lines: Array(try await command("EHLO \(helo)", expect: 250).lines.dropFirst()))
        }

        mutating func authenticate(username: String, password: String, features: Features) async throws {
            let encode = { (text: String) in Data(text.utf8).base64EncodedString() }
            let mechanisms = features.authMechanisms
            if mechanisms.contains("PLAIN") {
                try await command("AUTH PLAIN " + encode("\0\(username)\0\(password)"), name: "AUTH", expect: 235)
            } else if mechanisms.contains("LOGIN") {
                try await command("AUTH LOGIN", name: "AUTH", expect: 334)
                try await command(encode(username), name: "AUTH", expect: 334)
                try await command(encode(password), name: "AUTH", expect: 235)
            } else {
                throw SMTPError.cannotAuthenticate("the server offers neither AUTH PLAIN nor AUTH LOGIN")
            }
        }
    }
}
