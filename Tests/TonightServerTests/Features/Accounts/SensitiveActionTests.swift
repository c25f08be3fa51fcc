import HTTPTypes
import Testing

@testable import TonightServer

/// Requests from `address` (on a real port from loopback, which these tests trust as a proxy).
private func from(_ address: String) -> HTTPFields { [HTTPField.Name("X-Forwarded-For")!: address] }

@Suite("Sensitive actions: the password again, and limits that spare the owner")
struct SensitiveActionTests {
    private static func configure(_ config: inout AppConfig) {
        config.trustedProxies = "127.0.0.1, ::1"
        // One failure per account a minute: the bucket refills far slower than these few requests
        // take, however busy the machine (at three a minute, one every 20 s, a stalled CI run let a
        // guess through).
        config.loginsPerMinutePerAccount = 1
    }

    @Test(
        "deleting the account needs the current password; wrong ones are limited like sign-ins",
        arguments: Backend.available)
    func deleteNeedsPassword(_ backend: Backend) async throws {
        try await withLiveApp(backend, configure: Self.configure) { _, client in
            let tokens = try await client.signUp("noah")
            let token = tokens.accessToken
            // A stolen access token alone is not enough.
            let bare = try await client.send(.delete, "/v1/me", json: [:], token: token, headers: from("10.0.0.1"))
            #expect(bare.status == .badRequest)
            #expect((bare.json["errors"] as? [JSON])?.first?["field"] as? String == "password")
            let wrong = try await client.send(
                .delete, "/v1/me", json: ["password": "guess"], token: token, headers: from("10.0.0.1"))
            #expect(wrong.status == .forbidden && wrong.json["code"] as? String == "wrong_password")
            // The guessing address is refused, even with the right password…
            let limited = try await client.send(
                .delete, "/v1/me", json: ["password": "a long enough passphrase"], token: token,
                headers: from("10.0.0.1"))
            #expect(limited.status == .tooManyRequests, "\(limited.text)")
            #expect(limited.headers[.retryAfter] != nil)
            // …and so is the password change from there, which shares the limit.
            let change = try await client.send(
                .post, "/v1/me/password", json: ["currentPassword": "guess", "newPassword": "another long passphrase"],
                token: token, headers: from("10.0.0.1"))
            #expect(change.status == .tooManyRequests)
            // The owner, from an address without failures, is not locked out.
            #expect(try await client.logIn("noah", headers: from("10.0.0.2")).status == .ok)
            let deleted = try await client.send(
                .delete, "/v1/me", json: ["password": "a long enough passphrase"], token: token,
                headers: from("10.0.0.2"))
            #expect(deleted.status == .noContent, "\(deleted.text)")
            #expect(try await client.send(.get, "/v1/me", token: token).status == .unauthorized)
        }
    }

    @Test(
        "a username and its email share one limit; guessing addresses are slowed, the owner's is not",
        arguments: Backend.available)
    func loginLimits(_ backend: Backend) async throws {
        try await withLiveApp(backend, configure: Self.configure) { _, client in
            _ = try await client.signUp("mia")
            let attacker = from("10.0.1.1")
            #expect(try await client.logIn("mia", password: "guess 1", headers: attacker).status == .unauthorized)
            // The failure counts for the name in any case and for the email: each is refused now.
            #expect(try await client.logIn("MIA", password: "guess 2", headers: attacker).status == .tooManyRequests)
            #expect(
                try await client.logIn("mia@example.com", password: "guess 3", headers: attacker).status
                    == .tooManyRequests)
            #expect(try await client.logIn("mia", headers: attacker).status == .tooManyRequests)
            // The account's failures are spent: a second guessing address gets one failure, then 429.
            let second = from("10.0.1.2")
            #expect(try await client.logIn("mia", password: "guess 4", headers: second).status == .unauthorized)
            #expect(try await client.logIn("mia", password: "guess 5", headers: second).status == .tooManyRequests)
            // The owner, from an address with no failures, signs in.
            #expect(try await client.logIn("mia", headers: from("10.0.1.3")).status == .ok)
            // Successes draw nothing: the owner signs in again and again.
            for _ in 0..<5 {
                #expect(try await client.logIn("mia@example.com", headers: from("10.0.1.3")).status == .ok)
            }
        }
    }
}
