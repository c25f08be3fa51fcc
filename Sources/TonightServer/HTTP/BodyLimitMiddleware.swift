import Hummingbird
import NIOCore

/// Reads request bodies up to the configured limit (413 beyond it), so handlers and the
/// idempotency store see a complete body.
///
/// Uploads (`POST` to a path in ``streamingLimits``, `PATCH` under a prefix in
/// ``streamingPatchPrefixes``) are not collected: they stream to their handler, which writes them
/// to disk and enforces its own limit as the bytes arrive; here only a declared `Content-Length`
/// above that limit is refused up front.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let limit: Int
    /// Upload paths and the largest body each accepts.
    var streamingLimits: [String: Int] = [:]
    /// Path prefixes whose `PATCH` bodies stream (resumable uploads), and the largest each accepts.
    var streamingPatchPrefixes: [String: Int] = [:]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let streamingLimit: Int? =
            switch request.method {
            case .post: streamingLimits[request.uri.path]
            case .patch: streamingPatchPrefixes.first { request.uri.path.hasPrefix($0.key) }?.value
            default: nil
            }
        let limit = streamingLimit ?? self.limit
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError(
                status: 413, code: .bodyTooLarge, detail: "The request body is larger than \(limit) bytes.")
        }
        if streamingLimit != nil { return try await next(request, context) }
        var request = request
        do {
            // Without a Content-Length (chunked), the limit is met while reading.
            request.body = .init(buffer: try await request.collectBody(upTo: limit))
        } catch is NIOTooManyBytesError {
            throw APIError(
                status: 413, code: .bodyTooLarge, detail: "The request body is larger than \(limit) bytes.")
        }
        return try await next(request, context)
    }
}
