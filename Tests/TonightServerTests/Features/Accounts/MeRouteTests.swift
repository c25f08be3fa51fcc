import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TonightServer

@Suite("Me, public profiles, password, deletion")
struct MeRouteTests {
    @Test("PATCH /v1/me sets, clears and validates profile fields", arguments: Backend.available)
    func updateProfile(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let token = try await client.signUp("kate").accessToken
            let updated = try await client.send(
                .patch, "/v1/me",
                json: [
                    "displayName": "Kate K", "gender": "female", "birthDate": "1995-06-30", "bio": "Dancer",
                    "homeCity": "Lisbon$Lisbon$PT", "showNameOnPosts": false,
                    "preferences": ["radiusMeters": 5000, "sportsPlayed": ["padel", "padel", "tennis"]],
                ], token: token)
            #expect(updated.status == .ok, "\(updated.text)")
            #expect(updated.json["displayName"] as? String == "Kate K")
            #expect(updated.json["ageGroup"] as? String != nil)
            #expect(updated.json["showNameOnPosts"] as? Bool == false)
            let preferences = updated.json["preferences"] as? JSON ?? [:]
            #expect(preferences["sportsPlayed"] as? [String] == ["padel", "tennis"])

            // Preferences merge: only the fields sent change.
            let merged = try await client.send(
                .patch, "/v1/me", json: ["preferences": ["budget": 40], "clear": ["bio", "gender"]], token: token)
            let mergedPrefs = merged.json["preferences"] as? JSON ?? [:]
            #expect(mergedPrefs["radiusMeters"] as? Int == 5000)
            #expect(mergedPrefs["budget"] as? Double == 40)
            #expect(merged.json["bio"] == nil)
            #expect(merged.json["gender"] == nil)
            #expect(merged.json["displayName"] as? String == "Kate K")

            let invalid = try await client.send(
                .patch, "/v1/me",
                json: ["birthDate": "2023-02-30", "displayName": "  ", "preferences": ["radiusMeters": 5]],
                token: token)
            #expect(invalid.status == .badRequest)
            #expect(Set(invalid.json.fieldErrors) == ["birthDate", "displayName", "preferences.radiusMeters"])
            // Nothing was written by the rejected request.
            let after = try await client.send(.get, "/v1/me", token: token)
            #expect(after.json["displayName"] as? String == "Kate K")

            let unknownField = try await client.send(.patch, "/v1/me", json: ["role": "admin"], token: token)
            #expect(unknownField.status == .badRequest)
            let future = try await client.send(.patch, "/v1/me", json: ["birthDate": "2999-01-01"], token: token)
            #expect(future.json.fieldErrors == ["birthDate"])
            let both = try await client.send(.patch, "/v1/me", json: ["bio": "x", "clear": ["bio"]], token: token)
            #expect(both.status == .badRequest)
        }
    }

    @Test("public profile shows no private data; unknown users are 404", arguments: Backend.available)
    func publicProfile(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let token = try await client.signUp("Liam").accessToken
            try await client.send(.patch, "/v1/me", json: ["bio": "Hi", "birthDate": "1990-01-01"], token: token)
            let profile = try await client.send(.get, "/v1/users/liam")
            #expect(profile.status == .ok)
            #expect(profile.json["username"] as? String == "Liam")
            #expect(profile.json["bio"] as? String == "Hi")
            #expect(profile.json["email"] == nil)
            #expect(profile.json["birthDate"] == nil)
            #expect(profile.json["ageGroup"] as? String != nil)
            let missing = try await client.send(.get, "/v1/users/nobody")
            #expect(missing.status == .notFound)
            #expect(missing.json["code"] as? String == "not_found")
        }
    }

    @Test("changing the password checks the old one and ends other logins", arguments: Backend.available)
    func changePassword(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let a = try await client.signUp("mia")
            let b = try await client.logIn("mia", password: "a long enough passphrase").json
            let wrong = try await client.send(
                .post, "/v1/me/password",
                json: ["currentPassword": "not it at all", "newPassword": "another long passphrase"],
                token: a.accessToken)
            #expect(wrong.status == .forbidden)
            let weak = try await client.send(
                .post, "/v1/me/password",
                json: ["currentPassword": "a long enough passphrase", "newPassword": "1234567890"],
                token: a.accessToken)
            #expect(weak.status == .badRequest)
            #expect(weak.json.fieldErrors == ["newPassword"])
            let ok = try await client.send(
                .post, "/v1/me/password",
                json: ["currentPassword": "a long enough passphrase", "newPassword": "another long passphrase"],
                token: a.accessToken)
            #expect(ok.status == .noContent)
            #expect(
                try await client.logIn("mia", password: "a long enough passphrase").status == .unauthorized)
            #expect(
                try await client.logIn("mia", password: "another long passphrase").status == .ok)
            #expect(
                try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": b.refreshToken]).status
                    == .unauthorized)
            #expect(
                try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": a.refreshToken]).status
                    == .ok)
        }
    }

    @Test("deleting the account removes it and its logins", arguments: Backend.available)
    func deleteAccount(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let tokens = try await client.signUp("noah")
            #expect(
                try await client.send(
                    .delete, "/v1/me", json: ["password": "a long enough passphrase"], token: tokens.accessToken
                ).status == .noContent)
            #expect(try await client.send(.get, "/v1/me", token: tokens.accessToken).status == .unauthorized)
            #expect(try await client.send(.get, "/v1/users/noah").status == .notFound)
            #expect(
                try await client.logIn("noah", password: "a long enough passphrase").status == .unauthorized)
            #expect(
                try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": tokens.refreshToken]).status
                    == .unauthorized)
            // The name is free again.
            _ = try await client.signUp("noah")
        }
    }
}

@Suite("Account writes and the SQLite write gate")
struct AccountWriteGateTests {
    /// Failed before: `PATCH /v1/me` wrote past the gate, straight into SQLite, while another
    /// writer of the process held it (so it met SQLite's busy handler instead of the queue).
    @Test("profile, password and logout writes queue at the write gate like every other write")
    func accountWritesAreGated() async throws {
        try await withApp(.sqlite) { services, client in
            nonisolated(unsafe) let client = client
            let alice = try await client.member("alice")
            await services.database.enterWriteGate()
            let patch = Task {
                try await client.send(.patch, "/v1/me", json: ["bio": "queued"], token: alice.token).status
            }
            let logout = Task { try await client.send(.post, "/v1/auth/logout", token: alice.token).status }
            try await Task.sleep(for: .milliseconds(400))
            // Both still wait at the gate: nothing was written.
            #expect(try await services.users.find(id: alice.id)?.bio == nil)
            await services.database.leaveWriteGate()
            #expect(try await patch.value == .ok)
            #expect(try await logout.value == .noContent)
            #expect(try await services.users.find(id: alice.id)?.bio == "queued")
        }
    }
}
