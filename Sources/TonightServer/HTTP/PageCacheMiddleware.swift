import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// Serves repeated anonymous reads of public feeds, comments and artist suggestions from memory
/// (``PageCache``): the encoded answer as the handler made it. A feed page is reused only while the
/// feed version read for the request is the one it was made at, so it is never stale; a suggestion
/// while nothing it shows can have changed. Requests with a token (whose answers hold the caller's
/// votes, blocks and favourites) always go to the handler. Every request that may write (any
/// method but GET and HEAD) is told to the cache as it starts and ends, which is what lets
/// ``CachedPageHandler`` answer on the event loop.
///
/// On PostgreSQL the version is the instance's ``ClusterFeedVersion`` and suggestions are not kept.
struct PageCacheMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let database: Database
    let cache: PageCache

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method == .get || request.method == .head else {
            cache.noteWrite()
            defer { cache.noteWrite() }
            return try await next(request, context)
        }
        let writes = cache.writeCount()
        guard request.method == .get, request.headers[.authorization] == nil else {
            return try await next(request, context)
        }
        if request.uri.path == PageCache.suggestPath {
            guard cache.cluster == nil else { return try await next(request, context) }
            return try await suggestion(request, context: context, writes: writes, next: next)
        }
        guard PageCache.isFeed(request.uri.path), let version = try? await currentVersion() else {
            return try await next(request, context)
        }
        if cache.cluster == nil { cache.confirm(version: version, writesBefore: writes) }
        let key = cache.key(request.uri.string)
        if let hit = cache.page(key, at: version) { return Self.answer(hit) }
        let response = try await next(request, context)
        guard response.status == .ok else { return response }
        return try await kept(response, key: key, .feedVersion(version), context: context)
    }

    /// An artist suggestion: from the cache while it holds, otherwise made and kept as long as
    /// the handler says it stays true, within the suggester's generation and until a write.
    private func suggestion(
        _ request: Request, context: Context, writes: UInt64, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let key = cache.key(request.uri.string)
        if let hit = cache.trustedPage(key) { return Self.answer(hit) }
        let generation = cache.suggestions.current
        let lifetime = AnswerLifetime()
        let response = try await AnswerLifetime.$current.withValue(lifetime) { try await next(request, context) }
        guard response.status == .ok, let until = lifetime.deadline else { return response }
        let left = until - Clock.millis()
        guard left > 0 else { return response }
        let deadline = NIODeadline.now().uptimeNanoseconds + UInt64(min(left, 86_400_000)) * 1_000_000
        return try await kept(
            response, key: key, .until(writes: writes, generation: generation, deadline: deadline), context: context)
    }

    /// Stores the response's body and answers with it.
    private func kept(_ response: Response, key: String, _ validity: PageCache.Validity, context: Context)
        async throws -> Response
    {
        var copy = response
        let collector = Collector()
        try await response.body.write(collector)
        let body = collector.buffer.withLock { $0 }
        cache.store(key, validity, body: body, route: context.endpointPath ?? "Unknown")
        copy.body = .init(byteBuffer: body)
        return copy
    }

    private static func answer(_ page: PageCache.Page) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: page.body))
    }

    /// Gathers a response body in memory (feed pages are small).
    private final class Collector: ResponseBodyWriter, Sendable {
        let buffer = Mutex(ByteBuffer())
        func write(_ part: ByteBuffer) async throws { buffer.withLock { $0.writeImmutableBuffer(part) } }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    private func currentVersion() async throws -> Int64? {
        if let cluster = cache.cluster { return cluster.current }
        return try await database.feedVersion()
    }
}
