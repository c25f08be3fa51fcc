import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Turns problem+json answers (status ≥ 400) into ``TonightError/problem(_:)``.
struct ProblemMiddleware: ClientMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.code >= 400 else { return (response, responseBody) }
        var data = Data()
        if let responseBody { data = try await Data(collecting: responseBody, upTo: 1 << 20) }
        if let problem = try? JSONDecoder().decode(TonightError.Problem.self, from: data) {
            throw TonightError.problem(problem)
        }
        throw TonightError.unexpectedResponse(status: response.status.code)
    }
}

/// Adds the bearer token, refreshing it when it is about to expire or the server says it
/// expired (then retries once).
struct AuthMiddleware: ClientMiddleware {
    let session: AuthSession
    /// Operations that must not carry a token (a stale one would be refused).
    static let tokenless: Set<String> = ["logIn", "refreshTokens", "signInAnonymously"]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard !Self.tokenless.contains(operationID) else { return try await next(request, body, baseURL) }
        if operationID == "signUp", await session.current()?.isAnonymous != true {
            return try await next(request, body, baseURL)
        }
        guard let token = try await session.accessToken() else { return try await next(request, body, baseURL) }
        var authorized = request
        authorized.headerFields[.authorization] = "Bearer \(token)"
        do {
            return try await next(authorized, body, baseURL)
        } catch let error as TonightError where error.code == "invalid_token" {
            guard let fresh = try await session.refresh(after: token) else { throw error }
            authorized.headerFields[.authorization] = "Bearer \(fresh.accessToken)"
            return try await next(authorized, body, baseURL)
        }
    }
}
