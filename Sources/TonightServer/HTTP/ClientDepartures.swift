import NIOCore
import Synchronization

/// Which connections' clients have closed their side while the server still works on their
/// request. The server allows half-closed connections (a client may send its request and then
/// `shutdown(SHUT_WR)`), so the channel stays active: the closed input is the only sign. A handler
/// that does costly work after reading the whole request (an upload to S3, say) asks
/// ``RequestInfo/clientGone`` before committing it, and abandons it when nobody waits for the answer.
enum ClientDepartures {
    private static let departed = Mutex<Set<ObjectIdentifier>>([])

    /// Whether the client of `channel` has closed its side of the connection.
    static func hasLeft(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        return departed.withLock { $0.contains(id) }
    }

    /// Notes the closed input of its channel (first in every connection's pipeline).
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event {
                let id = ObjectIdentifier(context.channel)
                _ = ClientDepartures.departed.withLock { $0.insert(id) }
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelInactive(context: ChannelHandlerContext) {
            let id = ObjectIdentifier(context.channel)
            _ = ClientDepartures.departed.withLock { $0.remove(id) }
            context.fireChannelInactive()
        }
    }
}
