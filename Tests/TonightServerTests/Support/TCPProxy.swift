import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

@testable import TonightServer

/// A TCP proxy a test puts between the server and PostgreSQL, to take the database away and
/// bring it back: ``cut()`` closes every connection and refuses new ones, ``restore()`` listens
/// again on the same port; ``freeze(_:)`` holds every byte in flight without closing anything
/// (a network path that died without a reset), until it is thawed.
final class TCPProxy: Sendable {
    let port: Int
    private let target: SocketAddress
    private let server = NIOLockedValueBox<(any Channel)?>(nil)
    private let open = NIOLockedValueBox<[any Channel]>([])
    /// While true, nothing is forwarded (bytes are kept, in order, for the thaw).
    let frozen = NIOLockedValueBox(false)

    /// A proxy on a free loopback port to `host:port`.
    init(to host: String, port: Int) async throws {
        target = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let channel = try await Self.listen(port: 0, to: target, open: open, frozen: frozen)
        self.port = channel.localAddress?.port ?? 0
        server.withLockedValue { $0 = channel }
    }

    /// Closes every connection and stops listening: connecting is refused until ``restore()``.
    func cut() async {
        let channels = server.withLockedValue { $0.take() }.map { [$0] } ?? []
        for channel in channels + open.withLockedValue({ $0 }) { try? await channel.close() }
        open.withLockedValue { $0.removeAll() }
    }

    /// Stops (true) or resumes (false) forwarding on every connection.
    func freeze(_ on: Bool) {
        frozen.withLockedValue { $0 = on }
        if !on {
            for channel in open.withLockedValue({ $0 }) { channel.pipeline.fireUserInboundEventTriggered(Thaw()) }
        }
    }

    /// Listens again on the same port.
    func restore() async throws {
        let channel = try await Self.listen(port: port, to: target, open: open, frozen: frozen)
        server.withLockedValue { $0 = channel }
    }

    private static func listen(
        port: Int, to target: SocketAddress, open: NIOLockedValueBox<[any Channel]>, frozen: NIOLockedValueBox<Bool>
    ) async throws -> any Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                let forward = Forward(frozen: frozen)
                open.withLockedValue { $0.append(inbound) }
                return inbound.pipeline.addHandler(forward).flatMap {
                    ClientBootstrap(group: inbound.eventLoop)
                        .channelInitializer { $0.pipeline.addHandler(Forward(peer: inbound, frozen: frozen)) }
                        .connect(to: target)
                        .map { outbound in
                            open.withLockedValue { $0.append(outbound) }
                            forward.connect(outbound)
                        }
                        .flatMapErrorThrowing { error in
                            inbound.close(promise: nil)
                            throw error
                        }
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
    }
}

private struct Thaw {}

/// Copies what one side reads to the other (holding it while frozen); closes the other side when
/// this one closes.
private final class Forward: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private var peer: (any Channel)?
    private var pending: [ByteBuffer] = []
    private let frozen: NIOLockedValueBox<Bool>

    init(peer: (any Channel)? = nil, frozen: NIOLockedValueBox<Bool>) {
        self.peer = peer
        self.frozen = frozen
    }

    /// Sets the other side (on this side's event loop) and sends what arrived before it.
    func connect(_ peer: any Channel) {
        self.peer = peer
        flush()
    }

    private func flush() {
        guard let peer, !frozen.withLockedValue({ $0 }) else { return }
        for buffer in pending { peer.write(buffer, promise: nil) }
        peer.flush()
        pending.removeAll()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending.append(unwrapInboundIn(data))
        flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is Thaw { flush() } else { context.fireUserInboundEventTriggered(event) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        peer?.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

/// A fresh PostgreSQL database for one test, reached through a ``TCPProxy``: the proxy and the
/// database's URL through it.
func postgresBehindProxy() async throws -> (proxy: TCPProxy, url: String) {
    try await behindProxy(try await freshPostgresDatabase())
}

/// A ``TCPProxy`` in front of the PostgreSQL at `databaseURL`, and that URL through it.
func behindProxy(_ databaseURL: String) async throws -> (proxy: TCPProxy, url: String) {
    guard var url = URLComponents(string: databaseURL) else { throw ConfigurationError("bad PostgreSQL URL") }
    let proxy = try await TCPProxy(to: url.host ?? "127.0.0.1", port: url.port ?? 5432)
    url.port = proxy.port
    guard let viaProxy = url.string else { throw ConfigurationError("bad PostgreSQL URL") }
    return (proxy, viaProxy)
}
