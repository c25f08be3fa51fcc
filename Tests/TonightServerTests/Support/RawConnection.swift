import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A plain TCP connection to the test server that collects whatever it receives as text.
final class RawConnection: Sendable {
    private let channel: any Channel
    private let received: NIOLockedValueBox<String>

    /// Connects to the test server from `source` (another loopback address, say `127.0.0.2`, is
    /// another client to the server's per-address limits).
    init(port: Int, from source: String? = nil) async throws {
        let received = NIOLockedValueBox("")
        self.received = received
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(TextCollector(received: received))
                }
            }
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
    }

    /// Sends `text` as it is (several requests at once are pipelined).
    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    }

    /// Sends `bytes` as they are.
    func send(bytes: ByteBuffer) async throws {
        try await channel.writeAndFlush(bytes).get()
    }

    /// Closes the sending side (`shutdown(SHUT_WR)`): what a client that gives up after sending its
    /// request, or a half-closing one, does.
    func finishSending() async throws {
        try await channel.close(mode: .output).get()
    }

    /// Waits up to `limit` until `done` holds for what has arrived, or the connection closes, and
    /// returns it.
    func receive(within limit: Duration = .seconds(5), until done: (String) -> Bool) async throws -> String {
        let clock = ContinuousClock()
        let end = clock.now + limit
        while clock.now < end {
            // Nothing more comes once the connection is closed. Asked before reading the text:
            // every read arrives before the close, so a closed connection's text is complete.
            let open = channel.isActive
            let text = received.withLockedValue { $0 }
            if done(text) || !open { return text }
            try await Task.sleep(for: .milliseconds(10))
        }
        return received.withLockedValue { $0 }
    }

    var isOpen: Bool { channel.isActive }
    var closed: EventLoopFuture<Void> { channel.closeFuture }
    func close() async { try? await channel.close() }

}

/// Appends whatever a test connection receives, as text, to `received`.
final class TextCollector: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let received: NIOLockedValueBox<String>
    init(received: NIOLockedValueBox<String>) { self.received = received }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        received.withLockedValue { $0 += String(buffer: buffer) }
    }
}

/// How many complete HTTP/1.1 responses `text` holds (each has a Content-Length).
func responseCount(_ text: String) -> Int {
    text.components(separatedBy: "HTTP/1.1 ").count - 1
}
