import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// Serves repeated anonymous reads of public feeds and comments from memory: the encoded page as
/// the handler made it, tagged with the database's feed version (see `FeedVersion`) read before
/// the handler ran. A page is reused only while the version is unchanged, so it is never stale:
/// any write that could change it (a post, vote, comment, view count, venue or author name) moves
/// the version in its own transaction. Requests with a token (whose pages hold the caller's votes
/// and blocks) always go to the handler.
///
/// SQLite only (on PostgreSQL the middleware is not installed). Memory is bounded: at
/// ``capacity`` pages the cache starts over.
struct FeedCacheMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let database: Database
    /// Signed media URLs change every hour: pages are cached per hour then.
    let signsMedia: Bool
    var capacity = 5000
    private let store = PageStore()

    init(database: Database, signsMedia: Bool) {
        self.database = database
        self.signsMedia = signsMedia
    }

    /// Whether a path is one of the cached public reads.
    static func isCached(_ path: String) -> Bool {
        guard path.hasSuffix("/posts") || path.hasSuffix("/comments") || path == "/v1/feeds/trending" else {
            return false
        }
        return path.hasPrefix("/v1/places/") || path.hasPrefix("/v1/cities/") || path.hasPrefix("/v1/tags/")
            || path.hasPrefix("/v1/users/") || path.hasPrefix("/v1/posts/") || path == "/v1/feeds/trending"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method == .get, request.headers[.authorization] == nil, Self.isCached(request.uri.path),
            let version = try? await currentVersion()
        else { return try await next(request, context) }
        var key = request.uri.string
        if signsMedia { key += "#\(Int(Clock.millis() / 3_600_000))" }
        if let hit = store.pages.withLock({ $0[key] }), hit.version == version {
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
        store.pages.withLock { pages in
            if pages.count >= capacity { pages.removeAll(keepingCapacity: true) }
            pages[key] = (version, body)
        }
        copy.body = .init(byteBuffer: body)
        return copy
    }

    /// The cached pages by request URI.
    private final class PageStore: Sendable {
        let pages = Mutex<[String: (version: Int64, body: ByteBuffer)]>([:])
    }

    /// Gathers a response body in memory (feed pages are small).
    private final class Collector: ResponseBodyWriter, Sendable {
        let buffer = Mutex(ByteBuffer())
        func write(_ part: ByteBuffer) async throws { buffer.withLock { $0.writeImmutableBuffer(part) } }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    private func currentVersion() async throws -> Int64? {
        try await database.sql.raw("SELECT version FROM feed_version WHERE id = 1").first()?
            .decode(column: "version", as: Int64.self)
    }
}
