import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import TonightCore

/// The connection layer in front of Hummingbird's HTTP/1 + WebSocket channel. For every accepted
/// connection it:
///
/// - refuses it (503 `too_many_connections`, then closes) when its address already holds
///   ``ConnectionPolicy/perAddress`` connections, so one address can never take the file
///   descriptors every other client needs;
/// - closes it when no answer was written within the first-request deadline
///   (``FirstRequestDeadlineHandler``);
/// - answers an oversize or unreadable request head 414, 431 or 400 and closes it
///   (``HeadLimitHandler``) instead of leaving it hanging;
/// - notes when its client closes its side (``ClientDepartures``);
/// - logs what went wrong with it at debug, with a summary at most once a minute
///   (``ConnectionPolicy/errorLogger(_:)``), so a flood of bad connections cannot flood the log.
struct ConnectionGuard<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let policy: ConnectionPolicy

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let deadline = FirstRequestDeadlineHandler(timeout: policy.firstRequestTimeout) { [policy] in
                policy.count(\.timedOut)
            }
            try channel.pipeline.syncOperations.addHandler(deadline, position: .first)
            try channel.pipeline.syncOperations.addHandler(ClientDepartures.Handler(), position: .first)
            if !policy.admit(channel) {
                try channel.pipeline.syncOperations.addHandler(
                    RefusingHandler(answer: ConnectionAnswer.raw(ConnectionAnswer.tooManyConnections)),
                    position: .first)
            }
            return deadline
        }.flatMap { deadline in
            base.setup(channel: channel, logger: logger).flatMapThrowing { value in
                let pipeline = channel.pipeline.syncOperations
                let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                try pipeline.addHandler(
                    HeadLimitHandler(maxTarget: policy.maxTarget, connection: deadline) { [policy] in
                        policy.count(\.refusedHeads)
                    }, position: .after(decoder))
                return value
            }
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: policy.errorLogger(logger))
    }
}

/// What the connection layer allows, shared by all connections of one server.
final class ConnectionPolicy: Sendable {
    /// Open connections one address may hold (0 = no cap).
    let perAddress: Int
    /// Addresses the cap does not apply to: trusted proxies carry many clients' connections.
    let exempt: TrustedProxies
    /// How long a new connection may take to get its first answer.
    let firstRequestTimeout: TimeAmount
    /// The longest request target (path and query) read, in bytes: as nginx's default
    /// `large_client_header_buffers`, far above the longest URL the API documents.
    let maxTarget: Int
    /// The decoder's limits: 16 kB per header line (and request line), 64 kB and 256 lines per head.
    static let decoderLimits = HTTP1Channel.Configuration.DecoderConfiguration(
        maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 64 * 1024, maxHeaderFieldCount: 256)

    private let open = Mutex<[String: Int]>([:])
    private let summary: Mutex<Summary>
    private let summaryInterval: TimeInterval
    private let logger: Logger

    /// What went wrong with connections since the last summary line.
    struct Summary {
        var since: Date
        var failed = 0
        var timedOut = 0
        var refusedHeads = 0
        var overCap = 0
        var total: Int { failed + timedOut + refusedHeads + overCap }
    }

    init(
        perAddress: Int, exempt: TrustedProxies = .none, firstRequestTimeout: TimeAmount, maxTarget: Int = 8192,
        summaryInterval: TimeInterval = 60, logger: Logger
    ) {
        self.perAddress = perAddress
        self.exempt = exempt
        self.firstRequestTimeout = firstRequestTimeout
        self.maxTarget = maxTarget
        self.summaryInterval = summaryInterval
        self.summary = Mutex(Summary(since: Date()))
        self.logger = logger
    }

    /// Counts `channel` against its address; false when the address is already at the cap. The
    /// count is released when the channel closes (a refused channel is not counted).
    func admit(_ channel: any Channel) -> Bool {
        guard perAddress > 0 else { return true }
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        if exempt.contains(address) { return true }
        let admitted = open.withLock { open in
            let count = open[address, default: 0]
            guard count < perAddress else { return false }
            open[address] = count + 1
            return true
        }
        guard admitted else {
            count(\.overCap)
            return false
        }
        channel.closeFuture.whenComplete { [self] _ in
            open.withLock { open in
                let left = (open[address] ?? 1) - 1
                open[address] = left > 0 ? left : nil
            }
        }
        return true
    }

    /// Open connections of `address` (for tests and diagnostics).
    func openConnections(of address: String) -> Int { open.withLock { $0[address] ?? 0 } }

    /// Counts one connection that ended badly, and logs the summary when the interval has passed.
    func count(_ kind: WritableKeyPath<Summary, Int>) {
        let now = Date()
        let due: Summary? = summary.withLock { summary in
            summary[keyPath: kind] += 1
            guard now.timeIntervalSince(summary.since) >= summaryInterval else { return nil }
            defer { summary = Summary(since: now) }
            return summary
        }
        if let due {
            logger.notice(
                "connections ended badly",
                metadata: [
                    "seconds": "\(Int(now.timeIntervalSince(due.since)))", "failed": "\(due.failed)",
                    "timed_out": "\(due.timedOut)", "refused_heads": "\(due.refusedHeads)",
                    "over_address_cap": "\(due.overCap)",
                ])
        }
    }

    /// `logger` for one connection's handling: every warning or error Hummingbird's connection
    /// code (`HummingbirdCore`, ``LiveUpgradeChannel``) logs for it — in practice "connection ended
    /// before its first request", once per connection that closed before it finished one — is logged
    /// at debug and counted in the summary. This logger reaches only the connection's own
    /// handling: request errors are logged by ``RequestMiddleware`` with their own logger and are
    /// never lowered; lines from other sources pass unchanged.
    func errorLogger(_ logger: Logger) -> Logger {
        var wrapped = logger
        wrapped.handler = ConnectionErrorLogHandler(base: logger.handler, policy: self)
        return wrapped
    }
}

/// See ``ConnectionPolicy/errorLogger(_:)``.
private struct ConnectionErrorLogHandler: LogHandler {
    var base: any LogHandler
    let policy: ConnectionPolicy

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    /// The modules whose connection handling logs through this handler.
    static let connectionSources: Set<String> = ["HummingbirdCore", "TonightServer"]

    func log(event: LogEvent) {
        var event = event
        if event.level >= .warning, Self.connectionSources.contains(event.source) {
            policy.count(\.failed)
            event.level = .debug
        }
        guard event.level >= base.logLevel else { return }
        base.log(event: event)
    }
}

/// Problem answers written by the connection layer itself, before or outside Hummingbird.
enum ConnectionAnswer {
    static let tooManyConnections = APIError(
        status: .serviceUnavailable, code: .tooManyConnections,
        detail: "This address holds too many open connections. Reuse one, or retry later.", retryAfter: 10)
    static let uriTooLong = APIError(
        status: .uriTooLong, code: .uriTooLong, detail: "The request target is longer than the server reads.")
    static let headersTooLarge = APIError(
        status: .requestHeaderFieldsTooLarge, code: .headersTooLarge,
        detail: "The request's header fields are larger than the server reads.")
    static let unreadable = APIError.badRequest("The request cannot be read as HTTP/1.1.")

    /// The head (always `Connection: close`) and problem+json body of `error`.
    static func parts(_ error: APIError) -> (head: HTTPResponseHead, body: ByteBuffer) {
        let body = (try? ProblemRenderer.encoder.encode(error.problem(requestID: Identifier.make()))) ?? Data()
        var headers: HTTPHeaders = [
            "Content-Type": "application/problem+json", "Content-Length": String(body.count),
            "Connection": "close", "X-Content-Type-Options": "nosniff",
        ]
        if let retryAfter = error.retryAfter { headers.add(name: "Retry-After", value: String(retryAfter)) }
        let status = HTTPResponseStatus(statusCode: Int(error.status.code), reasonPhrase: error.title)
        return (HTTPResponseHead(version: .http1_1, status: status, headers: headers), ByteBuffer(bytes: body))
    }

    /// `error` as the bytes of an HTTP/1.1 response, for writing below the HTTP codec.
    static func raw(_ error: APIError) -> ByteBuffer {
        let (head, body) = parts(error)
        var buffer = ByteBuffer(string: "HTTP/1.1 \(head.status.code) \(head.status.reasonPhrase)\r\n")
        for (name, value) in head.headers { buffer.writeString("\(name): \(value)\r\n") }
        buffer.writeString("\r\n")
        buffer.writeImmutableBuffer(body)
        return buffer
    }
}

/// Answers a refused connection with a prepared response as soon as it is active, then closes it.
private final class RefusingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let answer: ByteBuffer
    private var refused = false

    init(answer: ByteBuffer) { self.answer = answer }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context) }
    }

    func channelActive(context: ChannelHandlerContext) { refuse(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func refuse(_ context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        context.writeAndFlush(NIOAny(answer)).whenComplete { _ in context.close(promise: nil) }
    }
}
