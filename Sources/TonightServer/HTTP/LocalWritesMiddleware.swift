import Hummingbird

/// On PostgreSQL, moves this instance's cluster versions (those of the ``RecommendationCache``s
/// and the ``NearbyIndex``) before and after each request that is not a `GET` or `HEAD`: a
/// change's notification arrives a moment after its commit, so without this an answer made while a
/// write of this instance was under way could be kept, or a member could read what they had just
/// changed as it was.
struct LocalWritesMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let versions: [ClusterFeedVersion]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method != .get && request.method != .head else { return try await next(request, context) }
        for version in versions { version.advance() }
        defer { for version in versions { version.advance() } }
        return try await next(request, context)
    }
}
