import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Closes connections that send no request within a deadline.
///
/// hummingbird-websocket's upgrade pipeline installs Hummingbird's idle timeout only once the first
/// request head has arrived, so a client that connects and sends nothing (or sends something that
/// never parses) would hold the connection, and a graceful shutdown waiting for it, forever.
/// This wrapper puts a deadline in front of that gap; established connections are then governed
/// by the HTTP idle timeout.
struct FirstRequestDeadline<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(
                FirstRequestDeadlineHandler(timeout: timeout), position: .first)
        }.flatMap { base.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Closes the channel when the server has not written its first answer within `timeout` of the
/// connection opening: armed once when the channel becomes active, and disarmed for good by the
/// first write (a response or a WebSocket upgrade). Reads do not re-arm it: a client trickling a
/// request head a byte at a time gets no more time in all than a silent one. (Later requests on
/// the connection are governed by ``CachedPageHandler``'s idle timeout, which only parsed request
/// parts reset.)
final class FirstRequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var answered = false

    init(timeout: TimeAmount) { self.timeout = timeout }

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
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }
}
