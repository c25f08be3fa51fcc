import Hummingbird

/// On PostgreSQL, moves this instance's cluster versions before and after each request that may
/// change what they stand for: a change's notification arrives a moment after its commit, so
/// without this an answer made while a write of this instance was under way could be kept, or a
/// member could read what they had just changed as it was. The recommendation version (both
/// ``RecommendationCache``s) moves for every request that is not a `GET` or `HEAD`; the places
/// version (``NearbyIndex``) only for those under `/v1/places` (moving it for every chat message
/// and vote would empty the index all the time; places change through that path, and by imports,
/// whose notification is then what tells every instance).
struct LocalWritesMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    /// Each version, and the path prefix of the requests that move it (`nil`: every write).
    let versions: [(version: ClusterFeedVersion, prefix: String?)]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method != .get && request.method != .head else { return try await next(request, context) }
        let path = request.uri.path
        let moved = versions.filter { $0.prefix.map(path.hasPrefix) ?? true }.map(\.version)
        for version in moved { version.advance() }
        defer { for version in moved { version.advance() } }
        return try await next(request, context)
    }
}
