import Hummingbird

/// Verifies `Authorization: Bearer …` and puts the caller into ``RequestInfo``. A request
/// without the header goes on anonymously (routes decide); a bad token, or a banned or deleted user's, is a 401.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let tokens: TokenService
    /// Banned and deleted users' tokens are refused.
    let bans: BanList

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let header = request.headers[.authorization], var info = RequestInfo.current else {
            return try await next(request, context)
        }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw APIError.unauthorized("Use an Authorization: Bearer <token> header.", code: .invalidToken)
        }
        guard let principal = await tokens.verify(String(header.dropFirst(7))) else {
            throw APIError.unauthorized("The access token is invalid or expired.", code: .invalidToken)
        }
        if let refusal = bans.refusal(for: principal.userID) { throw refusal }
        info.principal = principal
        info.logger[metadataKey: "user_id"] = .string(principal.userID)
        return try await RequestInfo.$current.withValue(info) { try await next(request, context) }
    }
}
