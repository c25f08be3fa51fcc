import Foundation
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
        /// A handshake that was refused, with its answer (another path or a bad token: 400; see
        /// ``CheckedUpgrader``); the connection closes after it.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, HTTPResponse)
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
            // The answer to a handshake that was refused.
            let refusal = NIOLockedValueBox<HTTPResponse?>(nil)
            // What the handshake learnt: the caller when the token came in the query.
            let admitted = NIOLockedValueBox<Principal?>(nil)
            let upgrader = NIOTypedWebSocketServerUpgrader<Upgrade>(
                maxFrameSize: Self.maxFrameSize,
                shouldUpgrade: { channel, head in
                    refusal.withLockedValue { $0 = HTTPResponse(status: .badRequest) }
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
                    upgraders: [
                        CheckedUpgrader(upgrader: upgrader) { answer in refusal.withLockedValue { $0 = answer } }
                    ],
                    notUpgradingCompletionHandler: { channel in
                        channel.eventLoop.makeCompletedFuture {
                            let pipeline = channel.pipeline.syncOperations
                            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                            try pipeline.addHandlers(http1.additionalChannelHandlers())
                            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
                            let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                                wrappingChannelSynchronously: channel,
                                configuration: .init(isOutboundHalfClosureEnabled: true))
                            return refusal.withLockedValue { $0 }.map { .refused(http, $0) } ?? .http(http)
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
            case .refused(let http, var answer):
                answer.headerFields[.connection] = "close"
                answer.headerFields[.contentLength] = "0"
                try await http.executeThenClose { _, outbound in
                    try await outbound.write(contentsOf: [.head(answer), .end(nil)])
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

/// NIO's WebSocket upgrader, with the handshake's own fields checked first. NIO's fails a handshake
/// without one key or of a version other than 13, and the connection then ended with no answer.
/// Here such a handshake is refused with the answer RFC 6455 asks for (section 4.2.2): 426 naming
/// the version understood, or 400 for a missing or malformed key.
struct CheckedUpgrader: NIOTypedHTTPServerProtocolUpgrader {
    let upgrader: NIOTypedWebSocketServerUpgrader<LiveUpgradeChannel.Upgrade>
    /// Records the answer to a refused handshake.
    let refuse: @Sendable (HTTPResponse) -> Void

    var supportedProtocol: String { upgrader.supportedProtocol }
    var requiredUpgradeHeaders: [String] { upgrader.requiredUpgradeHeaders }

    func buildUpgradeResponse(
        channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders
    ) -> EventLoopFuture<HTTPHeaders> {
        let keys = upgradeRequest.headers["Sec-WebSocket-Key"]
        if upgradeRequest.headers["Sec-WebSocket-Version"] != ["13"] {
            refuse(HTTPResponse(status: .upgradeRequired, headerFields: [.secWebSocketVersion: "13"]))
        } else if keys.count != 1 || Data(base64Encoded: keys[0])?.count != 16 {
            // The key is 16 random bytes in base64.
            refuse(HTTPResponse(status: .badRequest))
        } else {
            return upgrader.buildUpgradeResponse(
                channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
        }
        return channel.eventLoop.makeFailedFuture(NIOWebSocketUpgradeError.invalidUpgradeHeader)
    }

    func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<
        LiveUpgradeChannel.Upgrade
    > {
        upgrader.upgrade(channel: channel, upgradeRequest: upgradeRequest)
    }
}
