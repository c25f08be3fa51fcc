import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TonightAPI
import TonightCore

@testable import TonightServer

/// Who makes a call in the role matrix: the owner of the thing the path names, another member, a
/// moderator and an administrator (neither of whom owns it).
private enum Caller: String, CaseIterable, CustomStringConvertible {
    case owner, other, moderator, admin
    var description: String { rawValue }
}

/// One request of the matrix.
private struct Call {
    var method: HTTPRequest.Method
    var uri: String
    var json: JSON? = nil
    var token: String
    /// A body sent as it is (uploads), with its content type.
    var raw: (bytes: ByteBuffer, type: String)? = nil
    /// Header fields besides the token (tus).
    var headers: HTTPFields = [:]
}

/// The people and things every case starts from.
private struct World: @unchecked Sendable {
    let client: any TestClientProtocol
    let services: AppServices
    /// The fixed callers; `third` owns what neither owner nor other does (another post's author…).
    let people: [Caller: TestUser]
    let third: TestUser
    let place: String
    let date: String

    func token(_ caller: Caller) -> String { people[caller]!.token }

    /// The location of a new resumable upload of `length` bytes by `caller`.
    func upload(length: Int, _ caller: Caller) async throws -> String {
        let response = try await client.createUpload(
            length: length, fields: ["city": "Halifax$Nova Scotia$CA"], token: token(caller))
        return try #require(response.headers[.location], "\(response.text)")
    }
    func user(_ caller: Caller) -> TestUser { people[caller]! }

    /// The token of a mailed link of `purpose` for a new account with `caller`'s role (the link
    /// itself is the authority: anyone holding it may use it).
    func mailedToken(_ purpose: EmailTokenPurpose, _ caller: Caller) async throws -> String {
        let user = try await fresh(caller)
        let email = try #require(try await services.users.find(id: user.id)?.email)
        let id = Identifier.make()
        let token = services.email.links.token(id: id)
        let now = Clock.millis()
        try await services.email.tokens.issue(
            EmailTokenRecord(
                id: id, userID: user.id, purpose: purpose, email: purpose == .change ? "new-\(email)" : email,
                tokenHash: EmailLinks.hash(token), createdAt: now, expiresAt: now + 600_000, usedAt: nil),
            mail: NewJob(kind: "unused", payload: "{}", runAt: now, maxAttempts: 1), now: now)
        return token
    }

    /// A new account with `caller`'s role (members for owner and other), for calls that end it.
    func fresh(_ caller: Caller) async throws -> TestUser {
        let name = "f" + String(UUID().uuidString.prefix(8)).lowercased()
        switch caller {
        case .owner, .other: return try await client.member(name)
        case .moderator, .admin:
            let id = try await services.createUser(
                username: name, email: "\(name)@example.com", password: "a long enough passphrase",
                role: caller == .admin ? .admin : .moderator)
            return TestUser(id: id, token: try await client.logIn(name).json.accessToken)
        }
    }

    func send(_ method: HTTPRequest.Method, _ uri: String, _ json: JSON? = nil, as user: TestUser) async throws
        -> JSON
    {
        let response = try await client.send(method, uri, json: json, token: user.token)
        #expect((200..<300).contains(response.status.code), "fixture \(method) \(uri): \(response.text)")
        return response.json
    }

    func event(by user: TestUser) async throws -> String {
        try await send(
            .post, "/v1/events", ["name": "Night", "placeId": place, "localDate": date, "localTime": "21:00"], as: user
        )["id"] as? String ?? ""
    }

    func session(by user: TestUser) async throws -> String {
        try await send(
            .post, "/v1/sessions",
            [
                "sport": "tennis", "skill": "any", "placeId": place, "localDate": date, "localTime": "18:00",
                "durationMinutes": 60, "capacity": 4,
            ], as: user)["id"] as? String ?? ""
    }

    func post(by user: TestUser) async throws -> String { try await insertPost(services, author: user.id) }

    /// `user`, an adult, goes to `event`.
    func going(_ user: TestUser, to event: String) async throws {
        _ = try await send(.patch, "/v1/me", ["birthDate": "1990-01-01"], as: user)
        _ = try await send(.put, "/v1/events/\(event)/attendance", ["status": "going"], as: user)
    }
}

/// A write route and who may make it: the case builds a fresh thing owned by the owner for every
/// call, so a success by one caller never changes what the next one meets.
private struct Case: CustomStringConvertible {
    var route: String
    var allowed: Set<Caller>
    var make: (World, Caller) async throws -> Call
    var description: String { route }
}

private let everyone = Set(Caller.allCases)
private let staff: Set<Caller> = [.moderator, .admin]

/// Every write route of the spec but the four that make a login (sign-up, OIDC, log-in,
/// anonymous: open to anyone, covered by the auth suites).
nonisolated(unsafe) private let cases: [Case] = [
    // The caller's own account: everyone, each on their own.
    Case(route: "POST /v1/auth/refresh", allowed: everyone) { w, c in
        let name = "r" + String(UUID().uuidString.prefix(8)).lowercased()
        let tokens: JSON
        if c == .owner || c == .other {
            tokens = try await w.client.signUp(name)
        } else {
            _ = try await w.services.createUser(
                username: name, email: "\(name)@example.com", password: "a long enough passphrase",
                role: c == .admin ? .admin : .moderator)
            tokens = try await w.client.logIn(name).json
        }
        return Call(method: .post, uri: "/v1/auth/refresh", json: ["refreshToken": tokens.refreshToken], token: "")
    },
    Case(route: "POST /v1/auth/logout", allowed: everyone) { w, c in
        Call(method: .post, uri: "/v1/auth/logout", token: try await w.fresh(c).token)
    },
    Case(route: "POST /v1/auth/logout-all", allowed: everyone) { w, c in
        Call(method: .post, uri: "/v1/auth/logout-all", token: try await w.fresh(c).token)
    },
    Case(route: "PATCH /v1/me", allowed: everyone) { w, c in
        Call(method: .patch, uri: "/v1/me", json: ["bio": "hello"], token: w.token(c))
    },
    Case(route: "DELETE /v1/me", allowed: everyone) { w, c in
        Call(
            method: .delete, uri: "/v1/me", json: ["password": "a long enough passphrase"],
            token: try await w.fresh(c).token)
    },
    Case(route: "POST /v1/me/photo", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/me/photo", token: w.token(c),
            raw: (ByteBuffer(bytes: try await RoleMatrixTests.jpeg()), "image/jpeg"))
    },
    Case(route: "DELETE /v1/me/photo", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/me/photo", token: w.token(c))
    },
    Case(route: "POST /v1/me/password", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/me/password",
            json: ["currentPassword": "a long enough passphrase", "newPassword": "another long passphrase"],
            token: try await w.fresh(c).token)
    },
    Case(route: "POST /v1/auth/password-reset", allowed: everyone) { w, c in
        Call(method: .post, uri: "/v1/auth/password-reset", json: ["email": "someone@example.com"], token: w.token(c))
    },
    Case(route: "POST /v1/auth/password-reset/complete", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/auth/password-reset/complete",
            json: ["token": try await w.mailedToken(.reset, c), "newPassword": "another long passphrase"],
            token: w.token(c))
    },
    Case(route: "POST /v1/auth/email/verify", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/auth/email/verify", json: ["token": try await w.mailedToken(.change, c)],
            token: w.token(c))
    },
    Case(route: "PUT /v1/me/email", allowed: everyone) { w, c in
        Call(
            method: .put, uri: "/v1/me/email",
            json: ["email": "m\(UUID().uuidString.prefix(8))@example.com", "password": "a long enough passphrase"],
            token: w.token(c))
    },
    Case(route: "POST /v1/me/email/verification", allowed: everyone) { w, c in
        Call(method: .post, uri: "/v1/me/email/verification", token: try await w.fresh(c).token)
    },
    Case(route: "POST /v1/me/web-push", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/me/web-push",
            json: [
                "endpoint": "https://push.example.com/\(UUID().uuidString)",
                "keys": [
                    "p256dh": Base64URL.encode(P256.KeyAgreement.PrivateKey().publicKey.x963Representation),
                    "auth": Base64URL.encode(Data(count: 16)),
                ],
            ], token: w.token(c))
    },
    Case(route: "DELETE /v1/me/web-push", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/me/web-push?endpoint=https%3A%2F%2Fpush.example.com%2Fx", token: w.token(c))
    },
    Case(route: "PUT /v1/me/notification-settings", allowed: everyone) { w, c in
        Call(method: .put, uri: "/v1/me/notification-settings", json: ["muted": []], token: w.token(c))
    },
    Case(route: "POST /v1/notifications/read-all", allowed: everyone) { w, c in
        Call(method: .post, uri: "/v1/notifications/read-all", token: w.token(c))
    },
    Case(route: "POST /v1/me/devices", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/me/devices",
            json: ["token": String(repeating: "ab", count: 32), "platform": "apns"], token: w.token(c))
    },
    Case(route: "DELETE /v1/me/devices/{token}", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/me/devices/\(String(repeating: "cd", count: 32))", token: w.token(c))
    },
    Case(route: "POST /v1/me/calendar/subscription", allowed: everyone) { w, c in
        Call(method: .post, uri: "/v1/me/calendar/subscription", token: w.token(c))
    },
    Case(route: "PUT /v1/me/preferences", allowed: everyone) { w, c in
        Call(method: .put, uri: "/v1/me/preferences", json: [:], token: w.token(c))
    },
    Case(route: "POST /v1/me/recommendations/dismissals", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/me/recommendations/dismissals",
            json: ["eventId": try await w.session(by: w.third)], token: w.token(c))
    },
    Case(route: "PUT /v1/me/favorites/artists/{artistId}", allowed: everyone) { w, c in
        Call(method: .put, uri: "/v1/me/favorites/artists/\(RoleMatrixTests.artist)", token: w.token(c))
    },
    Case(route: "DELETE /v1/me/favorites/artists/{artistId}", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/me/favorites/artists/\(RoleMatrixTests.artist)", token: w.token(c))
    },
    Case(route: "POST /v1/events", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/events",
            json: ["name": "Party", "placeId": w.place, "localDate": w.date, "localTime": "22:00"], token: w.token(c))
    },
    Case(route: "POST /v1/sessions", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/sessions",
            json: [
                "sport": "tennis", "skill": "any", "placeId": w.place, "localDate": w.date, "localTime": "19:00",
                "durationMinutes": 60, "capacity": 4,
            ], token: w.token(c))
    },
    Case(route: "POST /v1/posts", allowed: everyone) { w, c in
        let body = multipartBody(
            ["city": "Halifax$Nova Scotia$CA"], file: try await RoleMatrixTests.jpeg(), filename: "p.jpg",
            type: "image/jpeg")
        return Call(method: .post, uri: "/v1/posts", token: w.token(c), raw: (body.body, body.contentType))
    },
    // Resumable uploads: each caller's own (someone else's upload is a 404 to them).
    Case(route: "POST /v1/uploads", allowed: everyone) { w, c in
        Call(method: .post, uri: "/v1/uploads", token: w.token(c), headers: RoleMatrixTests.tus(length: 1000))
    },
    Case(route: "PATCH /v1/uploads/{uploadId}", allowed: everyone) { w, c in
        let jpeg = try await RoleMatrixTests.jpeg()
        let location = try await w.upload(length: jpeg.count, c)
        var headers = RoleMatrixTests.tus()
        headers[.uploadOffset] = "0"
        return Call(
            method: .patch, uri: location, token: w.token(c),
            raw: (ByteBuffer(bytes: jpeg), "application/offset+octet-stream"), headers: headers)
    },
    Case(route: "DELETE /v1/uploads/{uploadId}", allowed: everyone) { w, c in
        Call(
            method: .delete, uri: try await w.upload(length: 1000, c), token: w.token(c),
            headers: RoleMatrixTests.tus())
    },
    Case(route: "POST /v1/posts/views", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/posts/views", json: ["postIds": [try await w.post(by: w.third)]], token: w.token(c)
        )
    },
    Case(route: "POST /v1/analytics/events", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/analytics/events",
            json: ["events": [["name": "app.open", "time": ISO8601DateFormatter().string(from: Date())]]],
            token: w.token(c))
    },
    Case(route: "POST /v1/feedback", allowed: everyone) { w, c in
        Call(method: .post, uri: "/v1/feedback", json: ["text": "Nice"], token: w.token(c))
    },

    // Someone else's things that any member may act on (the author may not vote on or flag their own).
    Case(route: "PUT /v1/events/{eventId}/attendance", allowed: everyone) { w, c in
        Call(
            method: .put, uri: "/v1/events/\(try await w.event(by: w.user(.owner)))/attendance",
            json: ["status": "going"], token: w.token(c))
    },
    Case(route: "DELETE /v1/events/{eventId}/attendance", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/events/\(try await w.event(by: w.user(.owner)))/attendance", token: w.token(c))
    },
    Case(route: "PUT /v1/posts/{postId}/vote", allowed: [.other, .moderator, .admin]) { w, c in
        Call(
            method: .put, uri: "/v1/posts/\(try await w.post(by: w.user(.owner)))/vote", json: ["value": 1],
            token: w.token(c))
    },
    Case(route: "PUT /v1/posts/{postId}/flag", allowed: [.other, .moderator, .admin]) { w, c in
        Call(method: .put, uri: "/v1/posts/\(try await w.post(by: w.user(.owner)))/flag", token: w.token(c))
    },
    Case(route: "DELETE /v1/posts/{postId}/flag", allowed: [.other, .moderator, .admin]) { w, c in
        Call(method: .delete, uri: "/v1/posts/\(try await w.post(by: w.user(.owner)))/flag", token: w.token(c))
    },
    Case(route: "POST /v1/posts/{postId}/comments", allowed: everyone) { w, c in
        Call(
            method: .post, uri: "/v1/posts/\(try await w.post(by: w.user(.owner)))/comments", json: ["text": "Wow"],
            token: w.token(c))
    },
    Case(route: "PUT /v1/posts/{postId}/bookmark", allowed: everyone) { w, c in
        Call(method: .put, uri: "/v1/posts/\(try await w.post(by: w.user(.owner)))/bookmark", token: w.token(c))
    },
    Case(route: "DELETE /v1/posts/{postId}/bookmark", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/posts/\(try await w.post(by: w.user(.owner)))/bookmark", token: w.token(c))
    },
    Case(route: "PUT /v1/users/{username}/follow", allowed: [.other, .moderator, .admin]) { w, c in
        Call(method: .put, uri: "/v1/users/\(RoleMatrixTests.ownerName)/follow", token: w.token(c))
    },
    // Unfollowing oneself changes nothing (200).
    Case(route: "DELETE /v1/users/{username}/follow", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/users/\(RoleMatrixTests.ownerName)/follow", token: w.token(c))
    },
    Case(route: "POST /v1/me/friend-requests", allowed: [.other, .moderator, .admin]) { w, c in
        Call(method: .post, uri: "/v1/me/friend-requests", json: ["userId": w.user(.owner).id], token: w.token(c))
    },
    Case(route: "PUT /v1/me/blocks/{userId}", allowed: everyone) { w, c in
        Call(method: .put, uri: "/v1/me/blocks/\(try await w.fresh(.owner).id)", token: w.token(c))
    },
    Case(route: "DELETE /v1/me/blocks/{userId}", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/me/blocks/\(w.third.id)", token: w.token(c))
    },

    // Things that are the owner's alone (the path names them; others meet 403 or 404).
    Case(route: "PATCH /v1/events/{eventId}", allowed: [.owner, .moderator, .admin]) { w, c in
        Call(
            method: .patch, uri: "/v1/events/\(try await w.event(by: w.user(.owner)))", json: ["name": "Renamed"],
            token: w.token(c))
    },
    Case(route: "POST /v1/events/{eventId}/cancel", allowed: [.owner, .moderator, .admin]) { w, c in
        Call(method: .post, uri: "/v1/events/\(try await w.event(by: w.user(.owner)))/cancel", token: w.token(c))
    },
    Case(route: "PATCH /v1/sessions/{eventId}", allowed: [.owner, .moderator, .admin]) { w, c in
        Call(
            method: .patch, uri: "/v1/sessions/\(try await w.session(by: w.user(.owner)))", json: ["capacity": 6],
            token: w.token(c))
    },
    Case(route: "DELETE /v1/sessions/{eventId}", allowed: [.owner, .moderator, .admin]) { w, c in
        Call(method: .delete, uri: "/v1/sessions/\(try await w.session(by: w.user(.owner)))", token: w.token(c))
    },
    Case(route: "POST /v1/events/{eventId}/invitations", allowed: [.owner]) { w, c in
        let event = try await w.event(by: w.user(.owner))
        let friend = try await w.fresh(.other)
        try await w.client.befriend(w.user(.owner), friend)
        return Call(
            method: .post, uri: "/v1/events/\(event)/invitations", json: ["userIds": [friend.id]], token: w.token(c))
    },
    Case(route: "POST /v1/me/invitations/{invitationId}/{answer}", allowed: [.owner]) { w, c in
        let host = try await w.fresh(.other)
        try await w.client.befriend(host, w.user(.owner))
        let event = try await w.event(by: host)
        let invited = try await w.send(
            .post, "/v1/events/\(event)/invitations", ["userIds": [w.user(.owner).id]], as: host)
        let id = ((invited["items"] as? [JSON])?.first?["id"] as? String) ?? (invited["id"] as? String) ?? ""
        let mine = try await w.send(.get, "/v1/me/invitations", as: w.user(.owner))
        let invitation =
            (mine["items"] as? [JSON])?.first { ($0["eventId"] as? String) == event }?["id"] as? String ?? id
        return Call(method: .post, uri: "/v1/me/invitations/\(invitation)/accept", token: w.token(c))
    },
    Case(route: "POST /v1/me/friend-requests/{userId}/accept", allowed: [.owner]) { w, c in
        let asker = try await w.fresh(.other)
        _ = try await w.send(.post, "/v1/me/friend-requests", ["userId": w.user(.owner).id], as: asker)
        return Call(method: .post, uri: "/v1/me/friend-requests/\(asker.id)/accept", token: w.token(c))
    },
    Case(route: "POST /v1/me/friend-requests/{userId}/deny", allowed: everyone) { w, c in
        // Denying is a no-op for anyone the request was not sent to (204, nothing changes).
        let asker = try await w.fresh(.other)
        _ = try await w.send(.post, "/v1/me/friend-requests", ["userId": w.user(.owner).id], as: asker)
        return Call(method: .post, uri: "/v1/me/friend-requests/\(asker.id)/deny", token: w.token(c))
    },
    Case(route: "DELETE /v1/me/friend-requests/{userId}", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/me/friend-requests/\(w.third.id)", token: w.token(c))
    },
    Case(route: "DELETE /v1/me/friends/{userId}", allowed: everyone) { w, c in
        Call(method: .delete, uri: "/v1/me/friends/\(w.third.id)", token: w.token(c))
    },
    Case(route: "POST /v1/notifications/{notificationId}/read", allowed: [.owner]) { w, c in
        let asker = try await w.fresh(.other)
        _ = try await w.send(.post, "/v1/me/friend-requests", ["userId": w.user(.owner).id], as: asker)
        let inbox = try await w.send(.get, "/v1/notifications", as: w.user(.owner))
        let id = (inbox["items"] as? [JSON])?.first?["id"] as? String ?? ""
        return Call(method: .post, uri: "/v1/notifications/\(id)/read", token: w.token(c))
    },
    Case(route: "POST /v1/conversations", allowed: [.owner]) { w, c in
        let friend = try await w.fresh(.other)
        try await w.client.befriend(w.user(.owner), friend)
        return Call(method: .post, uri: "/v1/conversations", json: ["userId": friend.id], token: w.token(c))
    },
    Case(route: "POST /v1/conversations/{conversationId}/messages", allowed: [.owner]) { w, c in
        let friend = try await w.fresh(.other)
        try await w.client.befriend(w.user(.owner), friend)
        let id = try await w.client.conversation(w.user(.owner), with: friend)
        return Call(method: .post, uri: "/v1/conversations/\(id)/messages", json: ["text": "Hi"], token: w.token(c))
    },
    Case(route: "POST /v1/conversations/{conversationId}/read", allowed: [.owner]) { w, c in
        let friend = try await w.fresh(.other)
        try await w.client.befriend(w.user(.owner), friend)
        let id = try await w.client.conversation(w.user(.owner), with: friend)
        return Call(method: .post, uri: "/v1/conversations/\(id)/read", json: ["seq": 0], token: w.token(c))
    },
    Case(route: "PUT /v1/events/{eventId}/wall/{userId}", allowed: [.owner]) { w, c in
        // Only the people going (adults) swipe on an event's wall: the owner and the one shown.
        let event = try await w.event(by: w.third)
        let shown = try await w.fresh(.other)
        for user in [w.user(.owner), shown] { try await w.going(user, to: event) }
        return Call(
            method: .put, uri: "/v1/events/\(event)/wall/\(shown.id)", json: ["decision": "like"], token: w.token(c))
    },
    Case(route: "DELETE /v1/me/matches/{matchId}", allowed: [.owner]) { w, c in
        let event = try await w.event(by: w.third)
        let liked = try await w.fresh(.other)
        for user in [w.user(.owner), liked] { try await w.going(user, to: event) }
        _ = try await w.send(.put, "/v1/events/\(event)/wall/\(liked.id)", ["decision": "like"], as: w.user(.owner))
        let match = try await w.send(
            .put, "/v1/events/\(event)/wall/\(w.user(.owner).id)", ["decision": "like"], as: liked)
        let id = (match["match"] as? JSON)?["id"] as? String ?? match["matchId"] as? String ?? ""
        return Call(method: .delete, uri: "/v1/me/matches/\(id)", token: w.token(c))
    },
    Case(route: "DELETE /v1/posts/{postId}", allowed: [.owner, .moderator, .admin]) { w, c in
        Call(method: .delete, uri: "/v1/posts/\(try await w.post(by: w.user(.owner)))", token: w.token(c))
    },
    Case(route: "DELETE /v1/posts/{postId}/comments/{commentId}", allowed: [.owner, .moderator, .admin]) { w, c in
        // The owner's comment on a post of a third member's (its author may delete it too).
        let post = try await w.post(by: w.third)
        let comment = try await w.send(.post, "/v1/posts/\(post)/comments", ["text": "Mine"], as: w.user(.owner))
        return Call(
            method: .delete, uri: "/v1/posts/\(post)/comments/\(comment["id"] as? String ?? "")", token: w.token(c))
    },

    // Staff only.
    Case(route: "POST /v1/places", allowed: staff) { w, c in
        Call(
            method: .post, uri: "/v1/places",
            json: ["name": "Bar", "category": "bar", "location": ["lat": 52.52, "lon": 13.40]], token: w.token(c))
    },
    Case(route: "PATCH /v1/places/{placeId}", allowed: staff) { w, c in
        Call(method: .patch, uri: "/v1/places/\(w.place)", json: ["name": "Renamed bar"], token: w.token(c))
    },
    Case(route: "PUT /v1/posts/{postId}/retention", allowed: staff) { w, c in
        Call(
            method: .put, uri: "/v1/posts/\(try await w.post(by: w.user(.owner)))/retention",
            json: ["retention": "favorites"], token: w.token(c))
    },
    Case(route: "POST /v1/moderation/posts/{postId}/restore", allowed: staff) { w, c in
        Call(
            method: .post, uri: "/v1/moderation/posts/\(try await w.post(by: w.user(.owner)))/restore",
            token: w.token(c))
    },
    Case(route: "POST /v1/moderation/posts/{postId}/remove", allowed: staff) { w, c in
        Call(
            method: .post, uri: "/v1/moderation/posts/\(try await w.post(by: w.user(.owner)))/remove",
            token: w.token(c))
    },
    Case(route: "PUT /v1/moderation/users/{userId}/ban", allowed: staff) { w, c in
        Call(method: .put, uri: "/v1/moderation/users/\(try await w.fresh(.other).id)/ban", token: w.token(c))
    },
    Case(route: "DELETE /v1/moderation/users/{userId}/ban", allowed: staff) { w, c in
        let banned = try await w.fresh(.other)
        _ = try await w.send(.put, "/v1/moderation/users/\(banned.id)/ban", as: w.user(.admin))
        return Call(method: .delete, uri: "/v1/moderation/users/\(banned.id)/ban", token: w.token(c))
    },
    Case(route: "DELETE /v1/moderation/users/{userId}/ban (a moderator banned by an admin)", allowed: [.admin]) {
        w, c in
        let banned = try await w.fresh(.moderator)
        _ = try await w.send(.put, "/v1/moderation/users/\(banned.id)/ban", as: w.user(.admin))
        return Call(method: .delete, uri: "/v1/moderation/users/\(banned.id)/ban", token: w.token(c))
    },
    Case(route: "PUT /v1/places/{placeId}/promotion", allowed: [.admin]) { w, c in
        Call(method: .put, uri: "/v1/places/\(w.place)/promotion", json: ["tier": 1], token: w.token(c))
    },
    Case(route: "DELETE /v1/places/{placeId}/promotion", allowed: [.admin]) { w, c in
        Call(method: .delete, uri: "/v1/places/\(w.place)/promotion", token: w.token(c))
    },
    Case(route: "POST /v1/ads", allowed: [.admin]) { w, c in
        Call(method: .post, uri: "/v1/ads", json: RoleMatrixTests.ad, token: w.token(c))
    },
    Case(route: "DELETE /v1/ads/{adId}", allowed: [.admin]) { w, c in
        let ad = try await w.send(.post, "/v1/ads", RoleMatrixTests.ad, as: w.user(.admin))
        return Call(method: .delete, uri: "/v1/ads/\(ad["id"] as? String ?? "")", token: w.token(c))
    },
    Case(route: "PUT /v1/ads/{adId}/creative", allowed: [.admin]) { w, c in
        let ad = try await w.send(.post, "/v1/ads", RoleMatrixTests.ad, as: w.user(.admin))
        let boundary = "matrix-\(UUID().uuidString)"
        var body = ByteBuffer()
        body.writeString(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\n"
                + "Content-Type: image/jpeg\r\n\r\n")
        body.writeBytes(try await RoleMatrixTests.jpeg())
        body.writeString("\r\n--\(boundary)--\r\n")
        return Call(
            method: .put, uri: "/v1/ads/\(ad["id"] as? String ?? "")/creative", token: w.token(c),
            raw: (body, "multipart/form-data; boundary=\(boundary)"))
    },
    Case(route: "POST /v1/sports", allowed: [.admin]) { w, c in
        let slug = "s" + String(UUID().uuidString.prefix(8)).lowercased()
        return Call(method: .post, uri: "/v1/sports", json: ["slug": slug, "name": "Sport \(slug)"], token: w.token(c))
    },
]

/// Every write route as its owner, another member, a moderator and an administrator, each with a
/// valid request on a thing made for that call: exactly the callers the route allows get a 2xx,
/// everyone else a 4xx, and nobody a 5xx. (``AuthorizationMatrixTests`` covers callers without a
/// member's token.)
@Suite("Role matrix")
struct RoleMatrixTests {
    static let ownerName = "rmowner"
    static let artist = "matrix-artist"
    nonisolated(unsafe) static let ad: JSON = [
        "area": "Berlin$DE", "mediaUrl": "https://ads.example/page", "feeds": ["a:.*"], "pages": [1], "style": 0,
    ]

    /// A small real JPEG.
    /// tus 1.0 headers, with a length and a city when `length` is given.
    static func tus(length: Int? = nil) -> HTTPFields {
        var headers: HTTPFields = [.tusResumable: "1.0.0"]
        if let length {
            headers[.uploadLength] = "\(length)"
            headers[.uploadMetadata] = "city " + Data("Halifax$Nova Scotia$CA".utf8).base64EncodedString()
        }
        return headers
    }

    static func jpeg() async throws -> [UInt8] {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let file = dir.file("p.jpg")
        try await MediaFixture.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64", "-frames:v", "1", file.path])
        return [UInt8](try Data(contentsOf: file))
    }

    @Test(
        "every write route allows exactly its owner, other members, moderators and admins as documented",
        arguments: Backend.available)
    func matrix(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let admin = try await Self.staff(.admin, "rmadmin", services, client)
            let moderator = try await Self.staff(.moderator, "rmmod", services, client)
            let owner = try await client.member(Self.ownerName)
            let other = try await client.member("rmother")
            let third = try await client.member("rmthird")
            let place = try await createPlace(client, token: admin.token, name: "Matrix bar", lat: 52.52, lon: 13.405)
            try await services.database.sql.raw(
                "INSERT INTO artists (id, name, name_folded, created_at, updated_at) VALUES (\(bind: Self.artist), 'Matrix', 'matrix', 0, 0)"
            ).run()
            let world = World(
                client: client, services: services,
                people: [.owner: owner, .other: other, .moderator: moderator, .admin: admin], third: third,
                place: place["id"] as? String ?? "", date: localDate(daysFromNow: 2, zone: "Europe/Berlin"))
            var failures: [String] = []
            for entry in cases {
                for caller in Caller.allCases {
                    let call = try await entry.make(world, caller)
                    var headers = call.headers
                    if !call.token.isEmpty { headers[.authorization] = "Bearer \(call.token)" }
                    var body: ByteBuffer?
                    if let raw = call.raw {
                        headers[.contentType] = raw.type
                        body = raw.bytes
                    } else if let json = call.json {
                        headers[.contentType] = "application/json"
                        body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
                    }
                    let response = try await client.execute(
                        uri: call.uri, method: call.method, headers: headers, body: body)
                    let status = Int(response.status.code)
                    let ok = (200..<300).contains(status)
                    if ok != entry.allowed.contains(caller) || status >= 500 {
                        failures.append("\(entry) as \(caller): \(status) \(response.text.prefix(200))")
                    }
                }
            }
            #expect(failures.isEmpty, "\(failures.count) failures:\n\(failures.joined(separator: "\n"))")
        }
    }

    /// Every write route of the spec is in the matrix (but the four that make a login).
    @Test func everyRouteIsCovered() throws {
        let listed = Set(cases.map { $0.route.split(separator: " ").prefix(2).joined(separator: " ") })
        let logins: Set<String> = [
            "POST /v1/auth/signup", "POST /v1/auth/oidc", "POST /v1/auth/login", "POST /v1/auth/anonymous",
        ]
        let missing = try specWriteRoutes().filter { !listed.contains($0) && !logins.contains($0) }
        #expect(missing.isEmpty, "not in the matrix: \(missing)")
    }

    static func staff(_ role: Role, _ name: String, _ services: AppServices, _ client: any TestClientProtocol)
        async throws -> TestUser
    {
        let id = try await services.createUser(
            username: name, email: "\(name)@example.com", password: "a long enough passphrase", role: role)
        return TestUser(id: id, token: try await client.logIn(name).json.accessToken)
    }
}
