import Foundation
import HTTPTypes
import Hummingbird
import Logging
import OpenAPIRuntime
import PostgresNIO
import TonightAPI
import TonightCore

/// Outermost middleware: gives each request an id (`X-Request-Id`, on every log line), works out
/// the client address, sets ``RequestInfo`` for the handlers, and renders any error that escapes
/// as problem+json, so no client mistake becomes a 500 and no stack trace leaves the server.
struct RequestMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    /// Whose `X-Forwarded-For` names the client.
    let proxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let requestID = Self.requestID(from: request.headers[.xRequestID])
        var context = context
        context.logger[metadataKey: "request_id"] = .string(requestID)
        var info = RequestInfo(
            requestID: requestID, clientAddress: clientAddress(request, context: context),
            userAgent: request.headers[.userAgent], logger: context.logger)
        let channel = context.channel
        info.clientGone = { ClientDepartures.hasLeft(channel) }
        var response: Response
        do {
            response = try await RequestInfo.$current.withValue(info) { try await next(request, context) }
        } catch {
            response = ProblemRenderer.response(for: error, requestID: requestID, logger: context.logger)
        }
        response.headers[.xRequestID] = requestID
        // No answer is ever to be read as another type than it says (uploaded media included).
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }

    private func clientAddress(_ request: Request, context: Context) -> String {
        proxies.client(peer: context.peerAddress, forwardedFor: request.headers[.xForwardedFor])
    }

    /// A caller's id if it is short and printable, otherwise a new one.
    static func requestID(from header: String?) -> String {
        if let header, (1...100).contains(header.utf8.count),
            header.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f })
        {
            return header
        }
        return Identifier.make()
    }
}

/// Renders whatever a handler throws (``APIError``, ``FieldIssue``, the OpenAPI runtime's decoding
/// errors) as problem+json. It sits inside ``IdempotencyMiddleware``, so a refused request is an
/// answer like any other: stored with its key and replayed (except the kinds that middleware never
/// keeps). Handlers therefore return only the success responses the spec documents.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            return ProblemRenderer.response(
                for: error, requestID: RequestInfo.current?.requestID ?? Identifier.make(), logger: context.logger)
        }
    }
}

/// Turns errors into problem+json responses.
enum ProblemRenderer {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The problem response for `error`. Server-side failures are logged (what ``LoggedError``
    /// allows: never the request's headers or input) and answered without their details.
    static func response(for error: any Error, requestID: String, logger: Logger) -> Response {
        let apiError = classify(error)
        if apiError.status.code >= 500 {
            var metadata = LoggedError.metadata(error)
            metadata["status"] = .stringConvertible(apiError.status.code)
            (RequestInfo.current?.logger ?? logger).error("request failed", metadata: metadata)
        }
        return response(for: apiError, requestID: requestID)
    }

    /// The problem response for an ``APIError``.
    static func response(for error: APIError, requestID: String) -> Response {
        let body = (try? encoder.encode(error.problem(requestID: requestID))) ?? Data()
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(
            status: error.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// Maps framework and runtime errors to client-facing problems.
    static func classify(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let issue as FieldIssue:
            return .validation([issue])
        case let error as ServerError:
            return classify(serverError: error)
        case let error as HTTPError:
            return classify(httpError: error)
        case is DecodingError:
            return .badRequest("The request body is not valid for this operation.", code: .invalidBody)
        default:
            return outage(error) ?? .internalError
        }
    }

    /// The 503 for a dependency that is busy or away (the database, media storage), if `error` is one.
    private static func outage(_ error: any Error) -> APIError? {
        if Database.isBusy(error) { return .databaseBusy }
        if Database.isUnavailable(error) { return .databaseUnavailable }
        if case BlobError.unavailable = error { return .storageUnavailable }
        return nil
    }

    private static func classify(serverError error: ServerError) -> APIError {
        if let inner = error.underlyingError as? APIError { return inner }
        if let issue = error.underlyingError as? FieldIssue { return .validation([issue]) }
        if let inner = error.underlyingError as? HTTPError { return classify(httpError: inner) }
        let cause = error.causeDescription
        // The handler itself failed with something other than an APIError: our fault, not the
        // client's (the body was already read by then).
        if cause.hasPrefix("User handler threw") {
            if let outage = outage(error.underlyingError) { return outage }
            if let database = error.underlyingError as? PSQLError, Self.isTextEncodingError(database) {
                return .badRequest("The request contains a NUL or other invalid character.", code: .invalidCharacters)
            }
            return .internalError
        }
        if cause.contains("Content-Type") || cause.contains("content type") {
            return APIError(
                status: .unsupportedMediaType, code: .unsupportedMediaType,
                detail: "Send the body in the content type the operation takes (\(cause)).")
        }
        if cause.contains("Accept") {
            return APIError(
                status: .notAcceptable, code: .notAcceptable, detail: "This operation answers application/json.")
        }
        if case DecodingError.dataCorrupted(let context) = error.underlyingError, context.codingPath.isEmpty {
            return .badRequest("The request body is not valid JSON.", code: .malformedJson)
        }
        if let described = describe(error.underlyingError) {
            return .badRequest("The request body is invalid: \(described)", code: .invalidBody)
        }
        return .badRequest("The request could not be read: \(cause).", code: .invalidRequest)
    }

    /// PostgreSQL refuses text with a NUL byte (`22021`) or that cannot be encoded (`22P05`);
    /// such a value came from the request (nothing stored contains one), so it is the client's
    /// mistake, whatever field carried it to the query.
    static func isTextEncodingError(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state == "22021" || state == "22P05"
    }

    private static func classify(httpError error: HTTPError) -> APIError {
        switch error.status {
        case .contentTooLarge:
            return APIError(status: .contentTooLarge, code: .bodyTooLarge, detail: "The request body is too large.")
        case .notFound:
            return .notFound("There is nothing at this address.")
        case .methodNotAllowed:
            return APIError(
                status: .methodNotAllowed, code: .methodNotAllowed, detail: "This method is not allowed here.")
        case .badRequest:
            return .badRequest(error.body ?? error.status.reasonPhrase)
        default:
            return APIError(status: error.status, code: .httpError, detail: error.body ?? error.status.reasonPhrase)
        }
    }

    private static func describe(_ error: any Error) -> String? {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            let path = (context.codingPath + [key]).map(\.stringValue).filter { !$0.isEmpty }
            return "field \(path.joined(separator: ".")) is missing."
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).filter { !$0.isEmpty }.joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "field \(path): \(context.debugDescription)"
        default:
            return nil
        }
    }
}

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-Id")!
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let idempotencyKey = Self("Idempotency-Key")!
    static let idempotentReplayed = Self("Idempotent-Replayed")!
}
