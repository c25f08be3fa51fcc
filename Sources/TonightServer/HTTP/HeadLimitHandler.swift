import NIOCore
import NIOHTTP1

/// Sits right after the HTTP/1 decoder and answers request heads the server will not read,
/// instead of leaving the connection hanging (the framework drops decoder errors on a connection
/// that has not finished its first request):
///
/// - a request target longer than `maxTarget` bytes: 414 `uri_too_long`;
/// - a head over the decoder's limits (``ConnectionPolicy/decoderLimits``): 414 when it is the
///   connection's first and its request line is what overflowed, else 431 `headers_too_large`;
/// - any other decoding error: 400 `bad_request`.
///
/// Each answer carries `Connection: close`. The connection then stops sending and reads (and drops)
/// what the client still sends for up to two seconds before it closes: closing with unread bytes
/// would reset the connection, and the client could lose the answer. When an earlier request on
/// the connection is still being answered, the refusal follows that answer. On a WebSocket
/// upgrade it leaves the pipeline with the `101` answer, as the HTTP codec does.
final class HeadLimitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let maxTarget: Int
    private let connection: FirstRequestDeadlineHandler
    private let onRefusal: () -> Void
    /// Requests read whose answers have not ended.
    private var unanswered = 0
    private var refused = false
    /// The refusal waiting for earlier answers to end.
    private var pending: APIError?

    init(maxTarget: Int, connection: FirstRequestDeadlineHandler, onRefusal: @escaping () -> Void) {
        self.maxTarget = maxTarget
        self.connection = connection
        self.onRefusal = onRefusal
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head(let head) = unwrapInboundIn(data) {
            if head.uri.utf8.count > maxTarget { return refuse(ConnectionAnswer.uriTooLong, context: context) }
            unanswered += 1
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        if refused { return }
        switch error {
        case .headerOverflow:
            let lineLimit = ConnectionPolicy.decoderLimits.maxHeaderFieldSize
            let requestLineOverflowed = (connection.firstLineLength ?? .max) > lineLimit
            refuse(
                requestLineOverflowed ? ConnectionAnswer.uriTooLong : ConnectionAnswer.headersTooLarge, context: context
            )
        default:
            refuse(ConnectionAnswer.unreadable, context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status == .switchingProtocols:
            // Flushed here: a flush that follows the write would reach this handler's context
            // after it left the pipeline, and be lost.
            context.write(data, promise: promise)
            context.flush()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        case .end:
            unanswered = max(0, unanswered - 1)
            context.write(data, promise: promise)
            if unanswered == 0, let pending {
                self.pending = nil
                answer(pending, context: context)
            }
            return
        default:
            break
        }
        context.write(data, promise: promise)
    }

    private func refuse(_ answer: APIError, context: ChannelHandlerContext) {
        refused = true
        onRefusal()
        if unanswered == 0 { self.answer(answer, context: context) } else { pending = answer }
    }

    /// Writes `answer`, stops sending and closes after a grace period.
    private func answer(_ answer: APIError, context: ChannelHandlerContext) {
        let (head, body) = ConnectionAnswer.parts(answer)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            context.close(mode: .output, promise: nil)
            context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(2)) { context.close(promise: nil) }
        }
    }
}
