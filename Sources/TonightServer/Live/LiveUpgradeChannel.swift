import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// Each connection's HTTP/1.1 channel, where `GET /v1/live` with `Upgrade: websocket` becomes a
/// live socket served by SwiftNIO channel handlers (``LiveChannelHandler``) and every other
/// request goes to Hummingbird.
///
/// Why not Hummingbird's WebSocket: it runs each socket in several Swift tasks (the connection,
/// the handler, reading frames, the automatic ping), and a task keeps its stack slabs until it
/// ends — about 30 KB a socket, which put 10,000 open sockets above 300 MB before Tonight held
/// anything (docs/benchmarks.md, "Sockets' memory"). Here an open socket is its channel, its
/// handlers and its ``LiveSocket``: no task waits on it, and work for it (checking a token,
/// reading a conversation) runs in a short task only while that work lasts.
struct LiveUpgradeChannel: ServerChildChannel, HTTPChannelHandler {
    /// What the connection became.
    enum Upgrade: Sendable {
        /// A live socket: its handlers serve it, and the connection's task has nothing to do.
        case live
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade that was refused (another path, or a bad token): 400, then closed.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let upgrade: EventLoopFuture<Upgrade>
        let channel: any Channel
    }

    /// The largest frame a client may send: 16 kB, as Hummingbird's default.
    static let maxFrameSize = 1 << 14

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let live: LiveRoutes

    /// - Parameters:
    ///   - responder: Hummingbird's responder for every request that is not a live socket.
    ///   - http1: The HTTP/1 settings (extra handlers, the decoder's limits).
    ///   - live: What serves `/v1/live`.
    init(responder: @escaping HTTPChannelHandler.Responder, http1: HTTP1Channel.Configuration, live: LiveRoutes) {
        self.http1 = http1
        self.live = live
        // NIO upgrades only a connection's first request. A later request asking to upgrade is sent
        // to the same address on a new connection. One without `Connection: Upgrade` is no
        // handshake, and goes on as a plain request (`/v1/live` answers it 426).
        self.responder = { request, writer, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket",
                request.headers[.connection]?.lowercased().contains("upgrade") == true
            else {
                return try await responder(request, writer, channel)
            }
            var target = request.uri.path
            if let query = request.uri.query { target += "?\(query)" }
            try await writer.writeResponse(
                HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: target]))
            throw CancellationError()
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let attempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            // What the handshake learnt: the caller when the token came in the query.
            let admitted = NIOLockedValueBox<Principal?>(nil)
            let upgrader = NIOTypedWebSocketServerUpgrader<Upgrade>(
                maxFrameSize: Self.maxFrameSize,
                shouldUpgrade: { channel, head in
                    attempted.value = true
                    let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                    promise.completeWithTask {
                        guard let admission = await live.admit(target: head.uri) else { return nil }
                        admitted.withLockedValue { $0 = admission.principal }
                        return [:]
                    }
                    return promise.futureResult
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = LiveChannelHandler(live: live, principal: admitted.withLockedValue { $0 })
                        try channel.pipeline.syncOperations.addHandler(handler)
                        return .live
                    }
                })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<Upgrade>(
                upgradeConfiguration: .init(
                    upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in
                        channel.eventLoop.makeCompletedFuture {
                            let pipeline = channel.pipeline.syncOperations
                            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                            try pipeline.addHandlers(http1.additionalChannelHandlers())
                            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
                            let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                                wrappingChannelSynchronously: channel,
                                configuration: .init(isOutboundHalfClosureEnabled: true))
                            return attempted.value ? .refused(http) : .http(http)
                        }
                    }))
            configuration.enablePipelining = false  // NIOAsyncChannel reads one request at a time
            configuration.enableErrorHandling = false  // Hummingbird and HeadLimitHandler answer errors
            configuration.enableResponseHeaderValidation = false  // HTTPTypes validates them
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let upgrade = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                configuration: configuration)
            return Value(upgrade: upgrade, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgrade.get() {
            case .live:
                return
            case .http(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http):
                try await http.executeThenClose { _, outbound in
                    try await outbound.write(
                        contentsOf: [
                            .head(
                                HTTPResponse(
                                    status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])),
                            .end(nil),
                        ])
                }
            }
        } catch let error as ChannelError where error == .inputClosed {
            return
        } catch {
            // Lowered to debug and counted by ``ConnectionPolicy/errorLogger(_:)``.
            logger.warning("connection ended before its first request", metadata: ["error.type": "\(type(of: error))"])
        }
    }
}
