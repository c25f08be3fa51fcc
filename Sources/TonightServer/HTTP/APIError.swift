import HTTPTypes
import Hummingbird
import TonightAPI
import TonightCore

/// The stable codes of problem documents, generated from the `ErrorCode` schema of openapi.yaml:
/// a code the spec does not document cannot be thrown.
typealias ErrorCode = Components.Schemas.ErrorCode

/// An error a client caused (or a known server condition), rendered as problem+json.
///
/// Services and handlers throw it; ``ProblemMiddleware`` renders it (inside the idempotency
/// middleware, so a refused request is stored and replayed like any answer), and Hummingbird's
/// ``HTTPResponseError`` lets anything else render it the same way.
public struct APIError: Error, Sendable, HTTPResponseError {
    /// HTTP status.
    public var status: HTTPResponse.Status
    /// Stable machine-readable code.
    public var code: Components.Schemas.ErrorCode
    /// A sentence for people.
    public var detail: String
    /// Per-field problems, for validation failures.
    public var fields: [FieldIssue]
    /// Seconds to wait, for 429 and 503.
    public var retryAfter: Int?

    /// Creates an error.
    public init(
        status: HTTPResponse.Status, code: Components.Schemas.ErrorCode, detail: String, fields: [FieldIssue] = [],
        retryAfter: Int? = nil
    ) {
        self.status = status
        self.code = code
        self.detail = detail
        self.fields = fields
        self.retryAfter = retryAfter
    }

    /// The problem+json response (Hummingbird's ``HTTPResponseError``).
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        ProblemRenderer.response(for: self, requestID: RequestInfo.current?.requestID ?? Identifier.make())
    }

    /// 400 with field errors.
    public static func validation(_ fields: [FieldIssue]) -> APIError {
        APIError(
            status: 400, code: .validationFailed,
            detail: fields.count == 1 ? fields[0].message : "Some fields are invalid.", fields: fields)
    }

    /// 400 for a request that cannot be read.
    public static func badRequest(_ detail: String, code: Components.Schemas.ErrorCode = .badRequest) -> APIError {
        APIError(status: 400, code: code, detail: detail)
    }

    /// 401: missing or invalid credentials.
    public static func unauthorized(
        _ detail: String = "Sign in to do this.", code: Components.Schemas.ErrorCode = .unauthorized
    )
        -> APIError
    {
        APIError(status: 401, code: code, detail: detail)
    }

    /// 403: the caller may not do this.
    public static func forbidden(_ detail: String, code: Components.Schemas.ErrorCode = .forbidden) -> APIError {
        APIError(status: 403, code: code, detail: detail)
    }

    /// 403 for anonymous devices on write routes.
    public static let anonymousReadOnly = APIError(
        status: 403, code: .anonymousReadOnly,
        detail: "Anonymous devices can only read. Sign up to do this.")

    /// 401: the account behind a valid token was deleted since the token was issued.
    public static let accountGone = APIError.unauthorized("This account no longer exists.", code: .accountGone)

    /// 401: a moderator banned this account; its tokens, logins and sockets no longer count.
    public static let accountSuspended = APIError.unauthorized("This account is suspended.", code: .accountSuspended)

    /// 404.
    public static func notFound(_ detail: String) -> APIError {
        APIError(status: 404, code: .notFound, detail: detail)
    }

    /// 409.
    public static func conflict(
        _ detail: String, code: Components.Schemas.ErrorCode = .conflict, fields: [FieldIssue] = []
    ) -> APIError {
        APIError(status: 409, code: code, detail: detail, fields: fields)
    }

    /// 503 with Retry-After: another process (a first import, say) held SQLite's write lock for
    /// longer than `DATABASE_BUSY_TIMEOUT_MS`. Nothing was written; the same request can be sent again.
    public static let databaseBusy = APIError(
        status: 503, code: .databaseBusy,
        detail: "The database is busy with another writer (an import, say). Nothing was changed; try again shortly.",
        retryAfter: 2)

    /// 503 with Retry-After: the database could not be reached or did not answer in time.
    public static let databaseUnavailable = APIError(
        status: 503, code: .databaseUnavailable,
        detail: "The database cannot be reached right now. Try again shortly; repeating a write is safe.",
        retryAfter: 5)

    /// 503 with Retry-After: media storage (S3) refused, failed or did not answer within its
    /// deadline. Nothing was stored.
    public static let storageUnavailable = APIError(
        status: 503, code: .storageUnavailable,
        detail: "Media storage cannot be reached right now. Nothing was stored; try again shortly.",
        retryAfter: 5)

    /// 500: something failed on our side (the cause is logged, never sent).
    public static let internalError = APIError(
        status: .internalServerError, code: .internalError, detail: "Something went wrong on our side.")

    /// 429 with Retry-After.
    public static func rateLimited(retryAfter: Int) -> APIError {
        APIError(
            status: 429, code: .rateLimited, detail: "Too many attempts. Try again in \(retryAfter) seconds.",
            retryAfter: retryAfter)
    }

    /// The standard reason phrase of the status, used as the problem's title.
    public var title: String {
        switch status.code {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 503: "Service Unavailable"
        case 500...599: "Server Error"
        default: "Error"
        }
    }

    /// The problem document.
    public func problem(requestID: String? = RequestInfo.current?.requestID) -> Components.Schemas.Problem {
        Components.Schemas.Problem(
            _type: "https://tonight.dev/problems/\(code.rawValue)",
            title: title,
            status: Int(status.code),
            detail: detail,
            code: code.rawValue,
            requestId: requestID,
            errors: fields.isEmpty
                ? nil : fields.map { .init(field: $0.field, code: $0.code, message: $0.message) }
        )
    }
}
