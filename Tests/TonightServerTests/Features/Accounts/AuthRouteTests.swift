import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import Testing

@testable import TonightServer

@Suite("Accounts: sign-up, sign-in, tokens")
struct AuthRouteTests {
    @Test("sign up, then read me with the access token", arguments: Backend.available)
    func signUpAndMe(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let tokens = try await client.signUp("Alice")
            #expect(tokens["expiresIn"] as? Int == 900)
            #expect(tokens.user["username"] as? String == "Alice")
            #expect(tokens.user["isAnonymous"] as? Bool == false)

            let me = try await client.send(.get, "/v1/me", token: tokens.accessToken)
            #expect(me.status == .ok)
            #expect(me.json["email"] as? String == "alice@example.com")
            #expect(me.headers[HTTPField.Name("X-Request-Id")!] != nil)
        }
    }

    @Test("usernames that differ only by case or NFKC form are the same", arguments: Backend.available)
    func duplicateUsernames(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            _ = try await client.signUp("alice")
            for (name, email) in [("ALICE", "a1@example.com"), ("ａｌｉｃｅ", "a2@example.com")] {
                let response = try await client.send(
                    .post, "/v1/auth/signup",
                    json: ["username": name, "email": email, "password": "a long enough passphrase"])
                #expect(response.status == .conflict, "\(name)")
                #expect(response.json.fieldErrors == ["username"])
                #expect(response.headers[.contentType]?.hasPrefix("application/problem+json") == true)
            }
            let sameEmail = try await client.send(
                .post, "/v1/auth/signup",
                json: ["username": "bob", "email": "ALICE@Example.com", "password": "a long enough passphrase"])
            #expect(sameEmail.status == .conflict)
            #expect(sameEmail.json.fieldErrors == ["email"])
        }
    }

    @Test("invalid sign-up fields are reported together", arguments: Backend.available)
    func signUpValidation(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let response = try await client.send(
                .post, "/v1/auth/signup", json: ["username": "a!", "email": "not-an-email", "password": "password123"])
            #expect(response.status == .badRequest)
            #expect(response.json["code"] as? String == "validation_failed")
            #expect(Set(response.json.fieldErrors) == ["username", "email", "password"])
            let short = try await client.send(
                .post, "/v1/auth/signup", json: ["username": "abc", "email": "abc@example.com", "password": "short"])
            #expect(short.json.fieldErrors == ["password"])
        }
    }

    @Test("login by username or email; unknown user and wrong password answer alike", arguments: Backend.available)
    func login(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            _ = try await client.signUp("carol")
            for login in ["carol", "CAROL", "carol@example.com"] {
                let ok = try await client.logIn(login, password: "a long enough passphrase")
                #expect(ok.status == .ok, "\(login)")
                #expect(!ok.json.accessToken.isEmpty)
            }
            let wrong = try await client.logIn("carol", password: "not the passphrase")
            let unknown = try await client.logIn("nobody", password: "not the passphrase")
            #expect(wrong.status == .unauthorized)
            #expect(unknown.status == .unauthorized)
            #expect(wrong.json["detail"] as? String == unknown.json["detail"] as? String)
            #expect(wrong.json["code"] as? String == unknown.json["code"] as? String)
        }
    }

    @Test("tampered, expired and alg:none tokens are refused", arguments: Backend.available)
    func badTokens(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let tokens = try await client.signUp("dave")
            let parts = tokens.accessToken.split(separator: ".").map(String.init)
            // Tampered: change the payload, keep the signature.
            var payload = try #require(Data(base64URL: parts[1]))
            var claims = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
            claims["role"] = "admin"
            payload = try JSONSerialization.data(withJSONObject: claims)
            let tampered = [parts[0], payload.base64URL, parts[2]].joined(separator: ".")
            // alg: none, no signature.
            let noneHeader = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64URL
            let none = [noneHeader, parts[1], ""].joined(separator: ".")
            // Expired: signed with the real key but already past its expiry.
            let key = try TokenService.loadKey(configured: "", dataDirectory: services.config.dataDirectory)
            let expiredService = await TokenService(key: key, accessTTL: -60)
            let principal = try #require(await services.tokens.verify(tokens.accessToken))
            // A remembered (already verified) token still expires.
            #expect(await services.tokens.verify(tokens.accessToken, now: Date().addingTimeInterval(901)) == nil)
            let expired = try await expiredService.accessToken(for: principal)
            // Signed with another key.
            let otherService = await TokenService(key: Array(repeating: 7, count: 32), accessTTL: 60)
            let foreign = try await otherService.accessToken(for: principal)

            for token in [tampered, none, expired, foreign, "garbage"] {
                let response = try await client.send(.get, "/v1/me", token: token)
                #expect(response.status == .unauthorized, "\(token)")
                #expect(response.json["code"] as? String == "invalid_token")
            }
            let noBearer = try await client.send(.get, "/v1/me", headers: [.authorization: "Basic abc"])
            #expect(noBearer.status == .unauthorized)
            let missing = try await client.send(.get, "/v1/me")
            #expect(missing.status == .unauthorized)
        }
    }

    @Test("refresh rotates; reusing an old refresh token ends the login", arguments: Backend.available)
    func refreshRotationAndReuse(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let first = try await client.signUp("erin")
            let second = try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": first.refreshToken])
            #expect(second.status == .ok)
            #expect(second.json.refreshToken != first.refreshToken)
            let third = try await client.send(
                .post, "/v1/auth/refresh", json: ["refreshToken": second.json.refreshToken])
            #expect(third.status == .ok)

            // Someone replays the first token: refused, and the whole login ends.
            let replay = try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": first.refreshToken])
            #expect(replay.status == .unauthorized)
            #expect(replay.json["code"] as? String == "refresh_token_reused")
            let latest = try await client.send(
                .post, "/v1/auth/refresh", json: ["refreshToken": third.json.refreshToken])
            #expect(latest.status == .unauthorized)

            let unknown = try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": "nope"])
            #expect(unknown.status == .unauthorized)
        }
    }

    @Test("concurrent refreshes with one token: exactly one wins", arguments: Backend.available)
    func refreshRace(backend: Backend) async throws {
        // 200 requests queue on one login's row lock: with the whole suite on two cores, waiting for
        // one of 8 pooled connections could pass the pool's 10 s request timeout (a 500, not the
        // race this checks), so each gets a connection and waits at the lock instead; on SQLite a queued write waits at the
        // write gate, which under that load can stand still for longer than the default 10 s.
        try await withApp(
            backend,
            configure: {
                $0.databasePoolSize = backend == .postgres ? 200 : 8; $0.databaseBusyTimeoutMilliseconds = 60_000
            }
        ) { _, client in
            let refreshToken = try await client.signUp("frank").refreshToken
            nonisolated(unsafe) let client = client
            let statuses = try await client.concurrentStatuses(200) { _ in
                try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": refreshToken])
            }
            #expect(statuses.filter { $0 == .ok }.count == 1)
            #expect(statuses.filter { $0 == .unauthorized }.count == 199)
        }
    }

    @Test("logout ends this login; logout-all ends every login", arguments: Backend.available)
    func logout(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let a = try await client.signUp("gina")
            let b = try await client.logIn("gina", password: "a long enough passphrase").json
            let c = try await client.logIn("gina", password: "a long enough passphrase").json
            #expect(try await client.send(.post, "/v1/auth/logout", token: a.accessToken).status == .noContent)
            #expect(
                try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": a.refreshToken]).status
                    == .unauthorized)
            #expect(
                try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": b.refreshToken]).status == .ok)
            #expect(try await client.send(.post, "/v1/auth/logout-all", token: c.accessToken).status == .noContent)
            #expect(
                try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": c.refreshToken]).status
                    == .unauthorized)
            #expect(try await client.send(.post, "/v1/auth/logout").status == .unauthorized)
        }
    }

    @Test("anonymous devices read but cannot write; signing up keeps their id", arguments: Backend.available)
    func anonymous(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let device = try await client.send(.post, "/v1/auth/anonymous")
            #expect(device.status == .created)
            let token = device.json.accessToken
            let me = try await client.send(.get, "/v1/me", token: token)
            #expect(me.json["isAnonymous"] as? Bool == true)
            #expect(try await client.send(.get, "/health", token: token).status == .ok)

            let writes: [(HTTPRequest.Method, String, JSON?)] = [
                (.patch, "/v1/me", ["bio": "hi"]),
                (.post, "/v1/me/password", ["currentPassword": "x", "newPassword": "a long enough passphrase"]),
                (.delete, "/v1/me", ["password": "x"]),
            ]
            for (method, path, body) in writes {
                let response = try await client.send(method, path, json: body, token: token)
                #expect(response.status == .forbidden, "\(method) \(path)")
                #expect(response.json["code"] as? String == "anonymous_read_only")
            }

            let upgraded = try await client.signUp("henry", token: token)
            #expect(upgraded.user["id"] as? String == device.json.user["id"] as? String)
            #expect(upgraded.user["isAnonymous"] as? Bool == false)
            // The device's own login ended with the upgrade.
            #expect(
                try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": device.json.refreshToken])
                    .status == .unauthorized)
        }
    }

    @Test("a thousand-way sign-up race for one username creates exactly one account", arguments: Backend.available)
    func signUpRace(backend: Backend) async throws {
        // Patience for the pool: under the whole suite a thousand waiting requests can take longer
        // than the default busy timeout to all get a connection (a 503, which is not the point here).
        try await withApp(backend, configure: { $0.databaseBusyTimeoutMilliseconds = 60_000 }) { _, client in
            nonisolated(unsafe) let client = client
            let statuses = try await client.concurrentStatuses(1000) { index in
                try await client.send(
                    .post, "/v1/auth/signup",
                    json: [
                        "username": index % 2 == 0 ? "racer" : "RACER", "email": "racer\(index)@example.com",
                        "password": "a long enough passphrase",
                    ]
                )
            }
            #expect(statuses.filter { $0 == .created }.count == 1)
            #expect(
                statuses.filter { $0 == .conflict }.count == 999,
                "\(Dictionary(grouping: statuses, by: \.code).mapValues(\.count))")
        }
    }

    @Test("sign-up and login are rate limited with Retry-After", arguments: Backend.available)
    func rateLimits(backend: Backend) async throws {
        try await withApp(
            backend,
            configure: {
                $0.loginsPerMinutePerAccount = 3; $0.signupsPerHourPerIP = 2
            }
        ) {
            _, client in
            _ = try await client.signUp("ivan")
            _ = try await client.signUp("ivy")
            let third = try await client.send(
                .post, "/v1/auth/signup",
                json: ["username": "jack", "email": "jack@example.com", "password": "a long enough passphrase"])
            #expect(third.status == .tooManyRequests)
            #expect(Int(third.headers[.retryAfter] ?? "") ?? 0 > 0)

            var last: TestResponse?
            for _ in 0..<4 {
                last = try await client.logIn("ivan", password: "wrong wrong wrong")
            }
            #expect(last?.status == .tooManyRequests)
            #expect(last?.json["code"] as? String == "rate_limited")
            #expect(Int(last?.headers[.retryAfter] ?? "") ?? 0 > 0)
        }
    }
}
