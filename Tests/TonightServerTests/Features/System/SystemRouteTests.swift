import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TonightServer

@Suite("System routes and request hygiene")
struct SystemRouteTests {
    @Test("health, metrics, the spec and client config", arguments: Backend.available)
    func systemRoutes(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let health = try await client.send(.get, "/health")
            #expect(health.status == .ok)
            #expect(health.json["database"] as? String == "ok")
            #expect(health.json["databaseKind"] as? String == backend.rawValue)

            let metrics = try await client.send(.get, "/metrics")
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains("hb_requests"))

            let spec = try await client.send(.get, "/openapi.yaml")
            #expect(spec.status == .ok)
            #expect(spec.text.hasPrefix("openapi: 3.1.0"))

            let config = try await client.send(.get, "/v1/config")
            #expect(config.json["passwordMinLength"] as? Int == 10)
            #expect(config.json["maxBodyBytes"] as? Int == 1 << 20)
        }
    }

    @Test("a failure inside a handler is a 500 problem, not a client error", arguments: Backend.available)
    func handlerFailure(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let token = try await client.signUp("ana").accessToken
            try await services.database.sql.raw("DROP TABLE notifications").run()
            let broken = try await client.send(.get, "/v1/notifications/unread-count", token: token)
            #expect(broken.status == .internalServerError)
            #expect(broken.json["code"] as? String == "internal_error")
            #expect(broken.headers[.contentType] == "application/problem+json")
        }
    }

    @Test("malformed, mistyped, oversize and mislabelled bodies get clear 4xx problems", arguments: Backend.available)
    func badBodies(backend: Backend) async throws {
        try await withApp(backend, configure: { $0.bodyLimit = 1024 }) { services, client in
            let malformed = try await client.send(.post, "/v1/auth/login", raw: #"{"username": "x", "#)
            #expect(malformed.status == .badRequest)
            #expect(malformed.json["code"] as? String == "malformed_json")
            #expect(malformed.headers[.contentType]?.hasPrefix("application/problem+json") == true)

            let mistyped = try await client.send(.post, "/v1/auth/login", json: ["username": 5, "password": true])
            #expect(mistyped.status == .badRequest)
            #expect(mistyped.json["code"] as? String == "invalid_body")

            let missing = try await client.send(.post, "/v1/auth/login", json: ["username": "x"])
            #expect(missing.status == .badRequest)

            let huge = String(repeating: "x", count: 4096)
            let oversize = try await client.send(
                .post, "/v1/auth/signup", json: ["username": huge, "email": "a@b.cd", "password": huge])
            #expect(oversize.status == .contentTooLarge)
            #expect(oversize.json["code"] as? String == "body_too_large")

            // Fields the operation does not have are refused, not ignored.
            let unknown = try await client.send(
                .post, "/v1/auth/signup",
                json: [
                    "username": "eve", "email": "eve@example.com", "password": "a long enough passphrase",
                    "role": "admin",
                ])
            #expect(unknown.status == .badRequest && unknown.json["code"] as? String == "invalid_body")
            #expect(unknown.json["detail"] as? String ?? "" != "", "\(unknown.text)")

            let wrongType = try await client.send(
                .post, "/v1/auth/login", raw: "username=x", headers: [.contentType: "application/x-www-form-urlencoded"]
            )
            #expect(wrongType.status == .unsupportedMediaType)

            let notFound = try await client.send(.get, "/v1/nothing-here")
            #expect(notFound.status == .notFound)
            #expect(notFound.json["code"] as? String == "not_found")

            // Nothing was written by any of these.
            let count = try await rowCount("users", in: services)
            #expect(count == 0)
        }
    }

    @Test("the spec's limits on query parameters and bodies are refused with field errors, never a 500")
    func specLimits() async throws {
        try await withApp(.sqlite, configure: { $0.bodyLimit = 1 << 20 }) { _, client in
            let token = try await client.signUp("sam").accessToken
            func refused(_ method: HTTPRequest.Method, _ path: String, _ body: JSON? = nil) async throws -> [String] {
                let response = try await client.send(method, path, json: body, token: token)
                #expect(response.status == .badRequest, "\(path.prefix(60)): \(response.text.prefix(300))")
                return response.json.fieldErrors
            }
            // Query parameters: each error names its parameter.
            #expect(try await refused(.get, "/v1/users?q=" + String(repeating: "a", count: 70_000)) == ["q"])
            #expect(try await refused(.get, "/v1/places?near=44.6,-63.5&radius=1e9") == ["radius"])
            #expect(try await refused(.get, "/v1/events?limit=abc") == ["limit"])
            let radius = try await client.send(.get, "/v1/places?near=44.6,-63.5&radius=1e9", token: token)
            #expect(radius.text.contains("radius parameter must be a whole number"))
            // Bodies: lengths, item counts and ranges, with the path of each field.
            let ids = (0..<25_000).map { "u\($0)" }
            #expect(try await refused(.post, "/v1/events/feed:E1/invitations", ["userIds": ids]) == ["userIds"])
            let events: [JSON] = (0..<3).map { _ in
                ["name": String(repeating: "n", count: 300), "time": "2026-11-25T20:00:00Z"]
            }
            #expect(
                try await refused(.post, "/v1/analytics/events", ["events": events])
                    == ["events[0].name", "events[1].name", "events[2].name"])
            #expect(try await refused(.post, "/v1/feedback", ["text": String(repeating: "é", count: 8001)]) == ["text"])
        }
    }

    @Test("a chunked body over the limit is a 413, like one that says its length")
    func chunkedOversize() async throws {
        try await withLiveApp(.sqlite, configure: { $0.bodyLimit = 1024 }) { services, client in
            let connection = try await RawConnection(port: try #require(client.port))
            let chunk = "{\"text\": \"" + String(repeating: "x", count: 3000) + "\"}"
            try await connection.send(
                "POST /v1/feedback HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n\(String(chunk.utf8.count, radix: 16))\r\n\(chunk)\r\n0\r\n\r\n"
            )
            let answer = try await connection.receive { $0.contains("}") }
            await connection.close()
            #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
            #expect(answer.contains("body_too_large"))
            #expect(try await rowCount("feedback", in: services) == 0)
        }
    }

    @Test("a retried POST with the same Idempotency-Key changes nothing again", arguments: Backend.available)
    func idempotency(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let body: JSON = ["username": "olga", "email": "olga@example.com", "password": "a long enough passphrase"]
            let key: HTTPFields = [.init("Idempotency-Key")!: "signup-olga-1"]
            let first = try await client.send(.post, "/v1/auth/signup", json: body, headers: key)
            let second = try await client.send(.post, "/v1/auth/signup", json: body, headers: key)
            #expect(first.status == .created)
            // The sign-up ran once; its tokens are never handed out again, to anyone.
            #expect(second.status == .conflict && second.json["code"] as? String == "answer_withheld")
            #expect(!second.text.contains(first.json.accessToken) && !second.text.contains("refreshToken"))
            let count = try await rowCount("users", in: services)
            #expect(count == 1)

            // Another caller's key of the same text is theirs alone: an address or a member each.
            let poll: JSON = ["text": "same key, other callers"]
            let pollKey: HTTPFields = [.init("Idempotency-Key")!: "fb-1"]
            let asGuest = try await client.send(.post, "/v1/feedback", json: poll, headers: pollKey)
            let asOlga = try await client.send(
                .post, "/v1/feedback", json: poll, token: first.json.accessToken, headers: pollKey)
            #expect(asGuest.status.code < 300 && asOlga.status.code < 300, "\(asGuest.text) \(asOlga.text)")
            #expect(asOlga.headers[.init("Idempotent-Replayed")!] == nil)

            var other = body
            other["username"] = "olga2"
            let reused = try await client.send(.post, "/v1/auth/signup", json: other, headers: key)
            #expect(reused.status == .unprocessableContent)
            #expect(reused.json["code"] as? String == "idempotency_key_reused")

            // A failed attempt (wrong password) is kept too; a new key runs again.
            let token = first.json.accessToken
            let bad = try await client.send(
                .post, "/v1/me/password", json: ["currentPassword": "no no no no no", "newPassword": "x"],
                token: token, headers: [.init("Idempotency-Key")!: "pw-1"])
            #expect(bad.status == .forbidden)

            let invalidKey = try await client.send(
                .post, "/v1/auth/anonymous", headers: [.init("Idempotency-Key")!: String(repeating: "k", count: 300)])
            #expect(invalidKey.status == .badRequest)
        }
    }

    @Test("concurrent retries with one Idempotency-Key run the request once", arguments: Backend.available)
    func idempotencyRace(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            nonisolated(unsafe) let client = client
            let key: HTTPFields = [.init("Idempotency-Key")!: "device-1"]
            let statuses = try await client.concurrentStatuses(50) { _ in
                try await client.send(.post, "/v1/auth/anonymous", headers: key)
            }
            // With the whole suite on two cores, the one request that ran may have waited past the
            // busy timeout for a connection (503, its key released): its retry then runs it.
            #expect(statuses.allSatisfy { $0 == .created || $0 == .conflict || $0 == .serviceUnavailable })
            #expect(statuses.filter { $0 == .created }.count <= 1)
            if !statuses.contains(.created) {
                #expect(try await client.send(.post, "/v1/auth/anonymous", headers: key).status == .created)
            }
            let count = try await rowCount("users", in: services)
            #expect(count == 1)
        }
    }

    @Test("NUL and control characters are refused at the edge, never a 500", arguments: Backend.available)
    func controlCharacters(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let token = try await client.signUp("ruth").accessToken
            let nul = "a\u{0}b"
            let signup = try await client.send(
                .post, "/v1/auth/signup",
                json: [
                    "username": "ruth2", "email": "r2@example.com", "password": "long pass \(nul) word",
                    "displayName": nul,
                ])
            #expect(signup.status == .badRequest)
            #expect(Set(signup.json.fieldErrors) == ["password", "displayName"])
            let login = try await client.send(.post, "/v1/auth/login", json: ["username": nul, "password": nul])
            #expect(login.status == .unauthorized)
            let refresh = try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": nul])
            #expect(refresh.status == .unauthorized)
            let profile = try await client.send(.get, "/v1/users/a%00b")
            #expect(profile.status == .notFound)
            let patch = try await client.send(
                .patch, "/v1/me", json: ["bio": nul, "homeCity": nul, "preferences": ["sportsPlayed": [nul]]],
                token: token)
            #expect(patch.status == .badRequest)
            #expect(Set(patch.json.fieldErrors) == ["bio", "homeCity", "preferences.sportsPlayed"])
            // Ids and filters that only travel to a query: a client error on either database.
            let conversation = try await client.send(.post, "/v1/conversations", json: ["userId": nul], token: token)
            #expect((400..<500).contains(conversation.status.code), "\(conversation.text)")
            let artists = try await client.send(.get, "/v1/artists?category=a%00b")
            #expect((400..<500).contains(artists.status.code) || artists.status == .ok, "\(artists.text)")
            let event = try await client.send(.get, "/v1/events/a%00b")
            #expect((400..<500).contains(event.status.code), "\(event.text)")
        }
    }

    @Test("the CLI's create-user makes an admin who can sign in", arguments: Backend.available)
    func createAdmin(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            _ = try await services.createUser(
                username: "root", email: "root@example.com", password: "an admin passphrase", role: .admin)
            let login = try await client.logIn("root", password: "an admin passphrase")
            #expect(login.json.user["role"] as? String == "admin")
            await #expect(throws: APIError.self) {
                _ = try await services.createUser(
                    username: "ROOT", email: "other@example.com", password: "an admin passphrase", role: .user)
            }
        }
    }
}
