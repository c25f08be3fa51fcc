import Foundation
import HTTPTypes
import Testing

@testable import TonightServer

@Suite("Logs carry no secrets")
struct LogSecretsTests {
    @Test("failed auth requests, 4xx and 5xx, log no password, token or request header", arguments: Backend.available)
    func noSecretsInLogs(backend: Backend) async throws {
        let capture = LogCapture()
        try await withApp(backend, logger: capture.logger()) { services, client in
            let password = "correct horse battery staple 7f3a"
            let tokens = try await client.signUp("victim", password: password)
            let access = tokens.accessToken
            let refresh = tokens.refreshToken
            let wrong = "wrong-password-91c2"

            // Client mistakes.
            #expect(try await client.logIn("victim", password: wrong).status == .unauthorized)
            #expect(
                try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": refresh + "x"]).status
                    == .unauthorized)
            #expect(
                try await client.send(.patch, "/v1/me", raw: "{\"displayName\": \"\(password)\"", token: access).status
                    == .badRequest)

            // Server failures: the users table is gone for a moment.
            try await services.database.sql.raw("ALTER TABLE users RENAME TO users_away").run()
            var failures: [HTTPResponse.Status] = []
            failures.append(try await client.logIn("victim", password: password).status)
            failures.append(try await client.send(.get, "/v1/me", token: access).status)
            failures.append(
                try await client.send(.patch, "/v1/me", json: ["displayName": password], token: access).status)
            failures.append(try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": refresh]).status)
            try await services.database.sql.raw("ALTER TABLE users_away RENAME TO users").run()
            #expect(failures.allSatisfy { $0.code >= 500 }, "\(failures)")

            let lines = capture.text
            #expect(lines.filter { $0.contains("request failed") }.count >= 3, "\(lines)")
            for secret in [password, wrong, access, refresh, String(access.prefix(24)), "Bearer", "authorization"] {
                let leaking = lines.filter { $0.localizedCaseInsensitiveContains(secret) }
                #expect(leaking.isEmpty, "\(secret.prefix(12))… logged: \(leaking)")
            }
            // What a line does say: the operation and the error's kind.
            #expect(lines.contains { $0.contains("operation_id=logIn") && $0.contains("error.type=") }, "\(lines)")
        }
    }
}
