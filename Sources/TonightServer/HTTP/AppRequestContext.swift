import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context: Hummingbird's core storage, the WebSocket upgrade slot, and the peer
/// address. Per-request identity lives in ``RequestInfo``.
public struct AppRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    /// The TCP peer's address, without port.
    public let peerAddress: String
    /// The connection (a live socket closes it when its peer stops reading).
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        self.channel = source.channel
    }
}
