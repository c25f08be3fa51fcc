import Foundation
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket
import Testing
import TonightAPI

@testable import TonightServer

/// A `/v1/live` socket that reads its handshake answer and then never reads again, with a small
/// receive buffer: what a stalled phone or a hostile client looks like to the server.
final class StalledSocket: Sendable {
    private let channel: any Channel
    private let received: NIOLockedValueBox<String>

    init(port: Int, token: String) async throws {
        let received = NIOLockedValueBox("")
        self.received = received
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: false)
            .channelOption(.socketOption(.so_rcvbuf), value: 4096)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(TextCollector(received: received))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        let request =
            "GET /v1/live?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: request)).get()
        channel.read()
    }

    /// What arrived in the one read.
    var text: String { received.withLockedValue { $0 } }
    func close() async { try? await channel.close() }
}

/// The decoded messages of an open socket.
final class SocketReader: @unchecked Sendable {
    private var iterator: WebSocketInboundMessageStream.AsyncIterator

    init(_ inbound: WebSocketInboundStream) {
        iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
    }

    /// The next message (nil when the socket closed).
    func next() async throws -> LiveMessage? {
        guard case .text(let text) = try await iterator.next() else { return nil }
        return try JSONDecoder().decode(LiveMessage.self, from: Data(text.utf8))
    }

    /// The next message of `type`, passing over others (a notification about the same message
    /// may come first or after, depending on when the socket's presence was recorded).
    func next(_ type: String) async throws -> LiveMessage? {
        while let message = try await next() {
            if message.type == type { return message }
        }
        return nil
    }
}

/// Opens `/v1/live` with `token`, waits for `ready`, runs `body`, then closes.
func withSocket(
    port: Int, host: String = "127.0.0.1", token: String,
    _ body: @escaping @Sendable (SocketReader, WebSocketOutboundWriter) async throws -> Void
) async throws {
    try await WebSocketClient.connect(
        url: "ws://\(host):\(port)/v1/live?token=\(token)", logger: Logger(label: "ws")
    ) { inbound, outbound, _ in
        let reader = SocketReader(inbound)
        let ready = try await reader.next()
        #expect(ready?.type == "ready")
        try await body(reader, outbound)
        try await outbound.close(.normalClosure, reason: nil)
    }
}
