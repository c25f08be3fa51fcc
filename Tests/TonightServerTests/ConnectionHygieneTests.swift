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
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: "127.0.0.1", port: port).get()
                if !payload.isEmpty { try await channel.writeAndFlush(ByteBuffer(string: payload)).get() }
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
