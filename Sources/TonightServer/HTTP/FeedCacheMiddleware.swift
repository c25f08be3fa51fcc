import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// Serves repeated anonymous reads of public feeds and comments from memory: the encoded page as
/// the handler made it, kept in ``FeedPageCache`` with the database's feed version read before the
/// handler ran, and reused only while the version read for the request is the same, so it is
/// never stale. Requests with a token (whose pages hold the caller's votes and blocks) always go
/// to the handler. Every request that may write (any method but GET and HEAD) is told to the cache
/// as it starts and ends, which is what lets ``CachedPageHandler`` answer on the event loop.
///
/// SQLite only (on PostgreSQL the middleware is not installed).
struct FeedCacheMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let database: Database
    let cache: FeedPageCache

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method == .get || request.method == .head else {
            cache.noteWrite()
            defer { cache.noteWrite() }
            return try await next(request, context)
        }
        let writes = cache.writeCount()
        guard request.method == .get, request.headers[.authorization] == nil,
            FeedPageCache.isCached(request.uri.path), let version = try? await currentVersion()
        else { return try await next(request, context) }
        cache.confirm(version: version, writesBefore: writes)
        let key = cache.key(request.uri.string)
        if let hit = cache.page(key, at: version) {
            return Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: hit.body))
        }
        let response = try await next(request, context)
        guard response.status == .ok else { return response }
        var copy = response
        let collector = Collector()
        try await response.body.write(collector)
        let body = collector.buffer.withLock { $0 }
        cache.store(key, version: version, body: body, route: context.endpointPath ?? "Unknown")
        copy.body = .init(byteBuffer: body)
        return copy
    }

    /// Gathers a response body in memory (feed pages are small).
    private final class Collector: ResponseBodyWriter, Sendable {
        let buffer = Mutex(ByteBuffer())
        func write(_ part: ByteBuffer) async throws { buffer.withLock { $0.writeImmutableBuffer(part) } }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    private func currentVersion() async throws -> Int64? {
        try await FeedVersionWatcher.read(database)
    }
}
