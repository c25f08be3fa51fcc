import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Each HTTP/1 connection's handler between HTTP decoding and Hummingbird. It does two things:
///
/// - Answers an anonymous `GET` of a cached feed page or artist suggestion straight from the
///   event loop when ``PageCache/trustedPage(_:)`` has it: no task, no database read, no
///   encoding. This is what keeps a hot venue feed and search-as-you-type fast under load. Only
///   when nothing else is in flight on the connection (so pipelined requests are still answered
///   in order), and never for requests with a token or `Connection: close` (which the framework
///   handles). Such answers carry the same headers and count in the same request metrics as the
///   framework's.
/// - Closes the connection after `idleTimeout` without a request or response, which the
///   framework cannot do for connections whose requests it never sees (its own idle timeout is
///   therefore off; ``FirstRequestDeadline`` covers connections that never send a request).
final class CachedPageHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum Reading {
        case idle
        case forwarding
        case answering(PageCache.Page, requestID: String, start: NIODeadline)
    }

    let cache: PageCache?
    let idleTimeout: TimeAmount
    private var reading = Reading.idle
    /// Requests handed to the framework whose responses have not ended yet.
    private var forwarded = 0
    private var lastActivity = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?

    init(cache: PageCache?, idleTimeout: TimeAmount) {
        self.cache = cache
        self.idleTimeout = idleTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActivity = .now()
        switch unwrapInboundIn(data) {
        case .head(let request):
            if forwarded == 0, let page = cachedPage(for: request) {
                reading = .answering(
                    page, requestID: RequestMiddleware.requestID(from: request.headerFields[.xRequestID]),
                    start: lastActivity)
                return
            }
            forwarded += 1
            reading = .forwarding
        case .body:
            if case .answering = reading { return }
        case .end:
            if case .answering(let page, let requestID, let start) = reading {
                reading = .idle
                answer(page, requestID: requestID, start: start, context: context)
                return
            }
            reading = .idle
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            forwarded = max(0, forwarded - 1)
            lastActivity = .now()
        }
        context.write(data, promise: promise)
    }

    private func cachedPage(for request: HTTPRequest) -> PageCache.Page? {
        guard let cache, request.method == .get, let target = request.path,
            request.headerFields[.authorization] == nil,
            request.headerFields[.connection]?.lowercased().contains("close") != true,
            PageCache.isCached(target.prefix { $0 != "?" })
        else { return nil }
        return cache.trustedPage(cache.key(target))
    }

    private func answer(
        _ page: PageCache.Page, requestID: String, start: NIODeadline, context: ChannelHandlerContext
    ) {
        let fields: HTTPFields = [
            .contentType: "application/json; charset=utf-8", .contentLength: String(page.body.readableBytes),
            .xRequestID: requestID, .date: ResponseDate.now(), .server: "Tonight", .xContentTypeOptions: "nosniff",
        ]
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(page.body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        cache?.loopAnswers.add(1, ordering: .relaxed)
        page.requests.increment()
        page.duration.recordNanoseconds(Int64(NIODeadline.now().uptimeNanoseconds - start.uptimeNanoseconds))
    }

    // MARK: Idle timeout

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { scheduleIdleCheck(context, in: idleTimeout) }
    }

    func channelActive(context: ChannelHandlerContext) {
        scheduleIdleCheck(context, in: idleTimeout)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
    }

    private func scheduleIdleCheck(_ context: ChannelHandlerContext, in delay: TimeAmount) {
        idleCheck?.cancel()
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            let idle = NIODeadline.now() - lastActivity
            if forwarded == 0, case .idle = reading, idle >= idleTimeout {
                context.close(promise: nil)
            } else {
                scheduleIdleCheck(context, in: max(idleTimeout - idle, .milliseconds(100)))
            }
        }
    }
}

/// The `Date` header of answers made here: formatted once per second.
private enum ResponseDate {
    private static let current = Mutex<(second: Int, text: String)>((-1, ""))

    static func now() -> String {
        let second = time(nil)
        return current.withLock { current in
            if current.second != second {
                current = (second, HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(second))))
            }
            return current.text
        }
    }
}
