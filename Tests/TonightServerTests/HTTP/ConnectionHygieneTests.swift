import Foundation
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import TonightServer

@Suite("Connection hygiene")
struct ConnectionHygieneTests {
    @Test("a connection that sends no request, or an unparseable one, is closed after the idle timeout")
    func silentConnectionsAreClosed() async throws {
        try await withLiveApp(.sqlite, configure: { $0.idleTimeout = 1 }) { _, client in
            let port = try #require(client.port)
            for payload in ["", "GARBAGE\r\n"] {
                // Sent from the event loop as the connection opens: a write from the test after
                // `connect` returned could come later than the 1 s idle timeout on a loaded machine.
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .channelInitializer { $0.pipeline.addHandler(SendOnConnect(payload: payload)) }
                    .connect(host: "127.0.0.1", port: port).get()
                // If the server does not close it within 10 s, the test closes it and fails.
                let forced = NIOLockedValueBox(false)
                let timer = channel.eventLoop.scheduleTask(in: .seconds(10)) {
                    forced.withLockedValue { $0 = true }
                    channel.close(promise: nil)
                }
                try await channel.closeFuture.get()
                timer.cancel()
                #expect(!forced.withLockedValue { $0 }, "payload \(payload.debugDescription)")
            }
        }
    }
}

extension ConnectionHygieneTests {
    @Test("a request head trickled a byte at a time gets no more time than the idle timeout in all")
    func trickledHeadIsCutOff() async throws {
        try await withLiveApp(.sqlite, configure: { $0.idleTimeout = 2 }) { _, client in
            let connection = try await RawConnection(port: try #require(client.port))
            // One byte every 0.5 s of a head that never ends: 30 bytes would take 15 s.
            var sent = 0
            for byte in String(repeating: "GET /health HTTP/1.1\r\nX-Slow: ", count: 2).prefix(30) {
                do {
                    try await connection.send(String(byte))
                } catch {
                    break
                }
                sent += 1
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(!connection.isOpen, "still open after \(sent) bytes")
            #expect(sent < 30)
            await connection.close()
        }
    }
}

/// Writes `payload` (if any) the moment its connection is active.
private final class SendOnConnect: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let payload: String

    init(payload: String) { self.payload = payload }

    func channelActive(context: ChannelHandlerContext) {
        if !payload.isEmpty { context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: payload)), promise: nil) }
        context.fireChannelActive()
    }
}
