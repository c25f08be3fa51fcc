import Hummingbird

/// Reads request bodies up to the configured limit (413 beyond it), so handlers and the
/// idempotency store see a complete body.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let limit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError(
                status: 413, code: "body_too_large", detail: "The request body is larger than \(limit) bytes.")
        }
        var request = request
        let buffer = try await request.collectBody(upTo: limit)
        request.body = .init(buffer: buffer)
        return try await next(request, context)
    }
}
