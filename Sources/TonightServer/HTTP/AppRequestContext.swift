import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage and the peer address. Per-request identity lives in ``RequestInfo``.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer's address, without port.
    public let peerAddress: String
    /// The connection.
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        self.channel = source.channel
    }
}
