import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Closes the channel when the server has not written its first answer within `timeout` of the
/// connection opening: armed once when the channel becomes active, and disarmed for good by the
/// first write (a response or a WebSocket upgrade). Reads do not re-arm it: a client trickling a
/// request head a byte at a time gets no more time in all than a silent one. (Later requests on
/// the connection are governed by ``CachedPageHandler``'s idle timeout, which only parsed request
/// parts reset.)
///
/// hummingbird-websocket's upgrade pipeline installs Hummingbird's idle timeout only once the first
/// request head has arrived, so without this a client that connects and sends nothing (or sends
/// something that never parses) would hold the connection, and a graceful shutdown waiting for
/// it, forever.
///
/// It also measures the connection's first line, which tells ``HeadLimitHandler`` whether an
/// oversize first head overflowed in its request line (414) or its header fields (431).
final class FirstRequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let timeout: TimeAmount
    private let onTimeout: () -> Void
    private var deadline: Scheduled<Void>?
    private var answered = false
    /// The bytes before the connection's first line feed: the first request line's length, or
    /// nil while it has not ended.
    private(set) var firstLineLength: Int?
    private var bytesRead = 0

    init(timeout: TimeAmount, onTimeout: @escaping () -> Void = {}) {
        self.timeout = timeout
        self.onTimeout = onTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if firstLineLength == nil {
            let bytes = unwrapInboundIn(data).readableBytesView
            if let lineFeed = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                firstLineLength = bytesRead + (lineFeed - bytes.startIndex)
            } else {
                bytesRead += bytes.count
            }
        }
        context.fireChannelRead(data)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !answered {
            answered = true
            deadline?.cancel()
            deadline = nil
        }
        context.write(data, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard !answered, deadline == nil else { return }
        deadline?.cancel()
        let channel = context.channel
        let onTimeout = onTimeout
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            onTimeout()
            channel.close(promise: nil)
        }
    }
}
