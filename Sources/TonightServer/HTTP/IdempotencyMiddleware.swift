import Crypto
import Foundation
import Hummingbird
import Logging

/// Makes every POST with an `Idempotency-Key` safe to retry: the first answer is stored and
/// replayed for the same key and body (with `Idempotent-Replayed: true`); the same key with
/// another body is a 422; a retry while the first is still running is a 409.
///
/// Answers that a retry might legitimately change are not kept: 5xx, 401 (the client may refresh
/// its token and retry) and 429 (it may wait and retry). A success of `/v1/auth/…` carries tokens,
/// which are never stored nor repeated: a retry of it is a 409 `answer_withheld` (the request
/// ran once; the client signs in). Keys are
/// per caller: the member or device, or for signed-out callers their address (one caller's key
/// never replays another's answer). They are kept ``ttl`` seconds.
struct IdempotencyMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let repository: IdempotencyRepository
    let ttl: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method == .post, let key = request.headers[.idempotencyKey] else {
            return try await next(request, context)
        }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else {
            throw APIError.validation([
                .init(
                    field: "Idempotency-Key", code: "invalid", message: "Use 1–255 visible ASCII characters.")
            ])
        }
        let issuesTokens = request.uri.path.hasPrefix(Self.tokenPaths)
        let scope =
            RequestInfo.current.map { info in info.principal?.userID ?? "address:" + info.clientAddress } ?? "public"
        if let boundary = UploadFingerprint.boundary(of: request.headers[.contentType]) {
            return try await upload(request, context: context, scope: scope, key: key, boundary: boundary, next: next)
        }
        var request = request
        let body = try await request.collectBody(upTo: .max)
        let hash = Self.hash(method: request.method.rawValue, path: request.uri.string, body: body)
        let now = Clock.millis()
        if try await !repository.reserve(scope: scope, key: key, requestHash: hash, now: now) {
            switch try await taken(scope: scope, key: key, now: now, issuesTokens: issuesTokens, hash: { hash }) {
            case .expired: return try await handle(request, context: context, next: next)
            case .answer(let response): return response
            }
        }
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            try? await repository.release(scope: scope, key: key)
            throw error
        }
        let status = Int(response.status.code)
        if status >= 500 || status == 401 || status == 429 {
            try? await repository.release(scope: scope, key: key)
            return response
        }
        if issuesTokens, (200..<300).contains(status) {
            try await repository.complete(
                scope: scope, key: key, status: status, contentType: nil, retryAfter: nil, body: "")
            return response
        }
        return try await store(response, scope: scope, key: key)
    }

    /// An upload (`multipart/form-data`) with a key is never held in memory: its fingerprint
    /// (``UploadFingerprint``) is taken as it streams to the handler, or, for a retry of a stored
    /// answer, as it is read and dropped. Only a success is kept: a refusal can come before the
    /// body was read to its end, and refusing again costs nothing.
    private func upload(
        _ request: Request, context: Context, scope: String, key: String, boundary: String,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let fingerprint = UploadFingerprint(
            method: request.method.rawValue, path: request.uri.string, boundary: boundary)
        let now = Clock.millis()
        if try await !repository.reserve(scope: scope, key: key, requestHash: Self.streaming, now: now) {
            let answer = try await taken(scope: scope, key: key, now: now, issuesTokens: false) {
                for try await chunk in request.body { fingerprint.update(chunk) }
                return fingerprint.finish()
            }
            switch answer {
            case .expired:
                return try await upload(
                    request, context: context, scope: scope, key: key, boundary: boundary, next: next)
            case .answer(let response): return response
            }
        }
        let body = FingerprintedBody(source: .init(request.body, fingerprint: fingerprint))
        var streamed = request
        streamed.body = RequestBody(asyncSequence: body)
        let response: Response
        do {
            response = try await next(streamed, context)
            guard (200..<300).contains(Int(response.status.code)) else {
                try? await repository.release(scope: scope, key: key)
                return response
            }
            try await body.drain()
        } catch {
            try? await repository.release(scope: scope, key: key)
            throw error
        }
        return try await store(response, scope: scope, key: key, requestHash: fingerprint.finish())
    }

    /// The request hash an upload's key holds until its answer is stored.
    private static let streaming = "streaming"

    /// What a request gets whose key is already taken.
    private enum Taken {
        /// The stored key had expired and is gone: run the request afresh.
        case expired
        case answer(Response)
    }

    /// The answer to a request whose key is already taken: 409 while the first still runs, 422
    /// for another request (`hash` is asked for only once the first has finished), else the
    /// stored answer (a token-bearing success is withheld).
    private func taken(
        scope: String, key: String, now: Int64, issuesTokens: Bool, hash: () async throws -> String
    ) async throws -> Taken {
        guard let existing = try await repository.find(scope: scope, key: key) else {
            throw APIError.conflict("This Idempotency-Key is being used right now; retry shortly.", code: .inProgress)
        }
        if existing.createdAt < now - Int64(ttl) * 1000 {
            try await repository.release(scope: scope, key: key)
            return .expired
        }
        guard let status = existing.status else {
            var error = APIError.conflict(
                "A request with this Idempotency-Key is still in progress.", code: .inProgress)
            error.retryAfter = 1
            throw error
        }
        guard existing.requestHash == (try await hash()) else {
            throw APIError(
                status: 422, code: .idempotencyKeyReused,
                detail: "This Idempotency-Key was already used with a different request.")
        }
        if issuesTokens, (200..<300).contains(status) {
            throw APIError.conflict(
                "This request already succeeded; its answer held tokens, which are never repeated. Sign in.",
                code: .answerWithheld)
        }
        return .answer(
            Self.replay(
                status: status, contentType: existing.contentType, retryAfter: existing.retryAfter,
                body: existing.body ?? ""))
    }

    /// Stores `response` as the key's answer (and the request's fingerprint, when it was taken
    /// while streaming) and returns it, its body now in memory.
    private func store(_ response: Response, scope: String, key: String, requestHash: String? = nil) async throws
        -> Response
    {
        let collector = BodyCollector()
        var stored = response
        try await response.body.write(collector)
        stored.body = .init(byteBuffer: collector.buffer)
        try await repository.complete(
            scope: scope, key: key, status: Int(response.status.code), contentType: response.headers[.contentType],
            retryAfter: response.headers[.retryAfter], body: Data(buffer: collector.buffer).base64EncodedString(),
            requestHash: requestHash)
        return stored
    }

    /// Where answers carry tokens.
    static let tokenPaths = "/v1/auth/"

    /// Fingerprint of a request: method, path and body. A JSON body is compared by content
    /// (keys sorted), so a client that re-serialises the same document is still a retry.
    static func hash(method: String, path: String, body: ByteBuffer) -> String {
        var hasher = SHA256()
        hasher.update(data: Data("\(method) \(path)\n".utf8))
        let bytes = Data(buffer: body)
        if let object = try? JSONSerialization.jsonObject(with: bytes, options: [.fragmentsAllowed]),
            let canonical = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        {
            hasher.update(data: canonical)
        } else {
            hasher.update(data: bytes)
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    static func replay(status: Int, contentType: String?, retryAfter: String?, body: String) -> Response {
        var headers: HTTPFields = [.idempotentReplayed: "true"]
        if let contentType { headers[.contentType] = contentType }
        if let retryAfter { headers[.retryAfter] = retryAfter }
        let bytes = Data(base64Encoded: body) ?? Data()
        return Response(
            status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// Collects a response body in memory (responses here are small JSON documents).
final class BodyCollector: ResponseBodyWriter, @unchecked Sendable {
    var buffer = ByteBuffer()

    func write(_ buffer: ByteBuffer) async throws {
        var copy = buffer
        self.buffer.writeBuffer(&copy)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
