import Hummingbird

/// Tells the caches kept per member (``RecommendationCache``) when a member wrote, once the write
/// is done: every request that is not a `GET` or `HEAD`, by a signed-in member, whatever its
/// outcome (a failed request may have committed part of its work first). Their next answer is
/// then made again although others' changes are tolerated for a moment. A change to blocks drops
/// every kept answer: who blocked whom must not wait for the moment to pass.
struct OwnWritesMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let caches: [any KeptPerMember]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method != .get && request.method != .head, let userID = RequestInfo.current?.principal?.userID
        else { return try await next(request, context) }
        let blocks = request.uri.path.hasPrefix("/v1/me/blocks")
        defer {
            for cache in caches {
                cache.wrote(userID)
                if blocks { cache.forgetEveryone() }
            }
        }
        return try await next(request, context)
    }
}
