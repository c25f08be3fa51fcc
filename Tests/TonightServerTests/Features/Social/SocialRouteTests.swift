import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TonightServer

/// A signed-up user's id and access token.
struct TestUser: Sendable {
    var id: String
    var token: String
}

extension TestClientProtocol {
    /// Signs up `name` and returns its id and token.
    func member(_ name: String) async throws -> TestUser {
        let tokens = try await signUp(name)
        return TestUser(id: tokens.user["id"] as? String ?? "", token: tokens.accessToken)
    }

    /// The user ids in a page of `{user: …}` items at `path`.
    func listedUsers(_ path: String, as user: TestUser) async throws -> [String] {
        let response = try await send(.get, path, token: user.token)
        #expect(response.status == .ok, "\(path): \(response.text)")
        return (response.json["items"] as? [JSON] ?? []).compactMap { ($0["user"] as? JSON)?["id"] as? String }
    }

    /// The kinds of the user's notifications, newest first.
    func notificationKinds(_ user: TestUser) async throws -> [String] {
        let response = try await send(.get, "/v1/notifications?limit=100", token: user.token)
        return (response.json["items"] as? [JSON] ?? []).compactMap { $0["kind"] as? String }
    }
}

@Suite("Friends, blocks and notifications")
struct SocialRouteTests {
    @Test("request, accept, list, remove; deny and cancel; notifications for both sides", arguments: Backend.available)
    func friendRequests(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let cy = try await client.member("cyd")

            let sent = try await client.send(
                .post, "/v1/me/friend-requests", json: ["userId": ben.id], token: ana.token)
            #expect(sent.status == .ok, "\(sent.text)")
            #expect(sent.json["status"] as? String == "pending")
            // Sending again changes nothing and tells nobody twice.
            let again = try await client.send(
                .post, "/v1/me/friend-requests", json: ["userId": ben.id], token: ana.token)
            #expect(again.json["status"] as? String == "pending")
            #expect(try await client.listedUsers("/v1/me/friend-requests", as: ben) == [ana.id])
            #expect(try await client.listedUsers("/v1/me/friend-requests?direction=outgoing", as: ana) == [ben.id])
            #expect(try await client.notificationKinds(ben) == ["friendRequest"])

            let accepted = try await client.send(.post, "/v1/me/friend-requests/\(ana.id)/accept", token: ben.token)
            #expect(accepted.status == .ok, "\(accepted.text)")
            #expect(accepted.json["status"] as? String == "friends")
            #expect(try await client.listedUsers("/v1/me/friends", as: ana) == [ben.id])
            #expect(try await client.listedUsers("/v1/me/friends", as: ben) == [ana.id])
            #expect(try await client.listedUsers("/v1/me/friend-requests", as: ben).isEmpty)
            #expect(try await client.notificationKinds(ana) == ["friendAccepted"])
            let acceptAgain = try await client.send(.post, "/v1/me/friend-requests/\(ana.id)/accept", token: ben.token)
            #expect(acceptAgain.status == .notFound)

            // Asking a friend again just says you are friends.
            let known = try await client.send(
                .post, "/v1/me/friend-requests", json: ["userId": ana.id], token: ben.token)
            #expect(known.json["status"] as? String == "friends")

            #expect(try await client.send(.delete, "/v1/me/friends/\(ben.id)", token: ana.token).status == .noContent)
            #expect(try await client.listedUsers("/v1/me/friends", as: ben).isEmpty)

            // Deny and cancel.
            _ = try await client.send(.post, "/v1/me/friend-requests", json: ["userId": cy.id], token: ana.token)
            #expect(
                try await client.send(.post, "/v1/me/friend-requests/\(ana.id)/deny", token: cy.token).status
                    == .noContent)
            #expect(try await client.listedUsers("/v1/me/friend-requests", as: cy).isEmpty)
            _ = try await client.send(.post, "/v1/me/friend-requests", json: ["userId": cy.id], token: ben.token)
            #expect(
                try await client.send(.delete, "/v1/me/friend-requests/\(cy.id)", token: ben.token).status == .noContent
            )
            #expect(try await client.listedUsers("/v1/me/friend-requests", as: cy).isEmpty)

            // Bad input.
            let toSelf = try await client.send(
                .post, "/v1/me/friend-requests", json: ["userId": ana.id], token: ana.token)
            #expect(toSelf.status == .badRequest)
            #expect(toSelf.json.fieldErrors == ["userId"])
            let nobody = try await client.send(
                .post, "/v1/me/friend-requests", json: ["userId": "nobody"], token: ana.token)
            #expect(nobody.status == .notFound)
            let device = try await client.send(.post, "/v1/auth/anonymous").json.accessToken
            let anonymous = try await client.send(
                .post, "/v1/me/friend-requests", json: ["userId": ana.id], token: device)
            #expect(anonymous.status == .forbidden)
            #expect(try await client.send(.get, "/v1/me/friends").status == .unauthorized)
        }
    }

    @Test("requests crossing at the same instant make one friendship per pair", arguments: Backend.available)
    func crossingRequests(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            var pairs: [(TestUser, TestUser)] = []
            for index in 0..<40 {
                pairs.append((try await client.member("left\(index)"), try await client.member("right\(index)")))
            }
            let all = pairs
            let statuses = try await client.concurrentStatuses(all.count * 2) { index in
                let (a, b) = all[index / 2]
                let (from, to) = index % 2 == 0 ? (a, b) : (b, a)
                return try await client.send(
                    .post, "/v1/me/friend-requests", json: ["userId": to.id], token: from.token)
            }
            #expect(statuses.allSatisfy { $0 == .ok })
            #expect(try await rowCount("friends", in: services) == all.count * 2)
            #expect(try await rowCount("friend_requests", in: services) == 0)
            for (a, b) in all.prefix(5) {
                #expect(try await client.listedUsers("/v1/me/friends", as: a) == [b.id])
            }
        }
    }

    @Test("a block ends the friendship and hides both ways; unblock brings nothing back", arguments: Backend.available)
    func blocks(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            _ = try await client.send(.post, "/v1/me/friend-requests", json: ["userId": ben.id], token: ana.token)
            _ = try await client.send(.post, "/v1/me/friend-requests/\(ana.id)/accept", token: ben.token)
            #expect(try await client.send(.get, "/v1/users/ana", token: ben.token).status == .ok)

            #expect(try await client.send(.put, "/v1/me/blocks/\(ben.id)", token: ana.token).status == .noContent)
            #expect(try await client.listedUsers("/v1/me/blocks", as: ana) == [ben.id])
            #expect(try await client.listedUsers("/v1/me/friends", as: ben).isEmpty)
            // Neither finds the other, and the blocked one cannot reach the blocker.
            #expect(try await client.send(.get, "/v1/users/ana", token: ben.token).status == .notFound)
            #expect(try await client.send(.get, "/v1/users/ben", token: ana.token).status == .notFound)
            let reach = try await client.send(
                .post, "/v1/me/friend-requests", json: ["userId": ana.id], token: ben.token)
            #expect(reach.status == .notFound)
            #expect(try await client.send(.put, "/v1/me/blocks/\(ana.id)", token: ana.token).status == .badRequest)

            #expect(try await client.send(.delete, "/v1/me/blocks/\(ben.id)", token: ana.token).status == .noContent)
            #expect(try await client.listedUsers("/v1/me/blocks", as: ana).isEmpty)
            #expect(try await client.listedUsers("/v1/me/friends", as: ana).isEmpty)
            #expect(try await client.send(.get, "/v1/users/ana", token: ben.token).status == .ok)
        }
    }

    @Test("inbox: pages, unread count, mark read; muted kinds are not added", arguments: Backend.available)
    func inbox(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let ana = try await client.member("ana")
            var senders: [TestUser] = []
            for index in 0..<5 { senders.append(try await client.member("fan\(index)")) }
            for sender in senders {
                _ = try await client.send(
                    .post, "/v1/me/friend-requests", json: ["userId": ana.id], token: sender.token)
            }
            let first = try await client.send(.get, "/v1/notifications?limit=3", token: ana.token)
            #expect(first.json["unreadCount"] as? Int == 5)
            let firstItems = first.json["items"] as? [JSON] ?? []
            #expect(firstItems.count == 3)
            #expect(((firstItems.first?["actor"] as? JSON)?["username"] as? String) == "fan4")
            let cursor = try #require(first.json["nextCursor"] as? String)
            let second = try await client.send(.get, "/v1/notifications?limit=3&cursor=\(cursor)", token: ana.token)
            let secondItems = second.json["items"] as? [JSON] ?? []
            #expect(secondItems.count == 2)
            #expect(second.json["nextCursor"] == nil)

            let id = try #require(firstItems.first?["id"] as? String)
            let read = try await client.send(.post, "/v1/notifications/\(id)/read", token: ana.token)
            #expect(read.json["unread"] as? Int == 4)
            let unreadOnly = try await client.send(.get, "/v1/notifications?unread=true", token: ana.token)
            #expect((unreadOnly.json["items"] as? [JSON])?.count == 4)
            let other = try await client.send(.post, "/v1/notifications/\(id)/read", token: senders[0].token)
            #expect(other.status == .notFound)
            let all = try await client.send(.post, "/v1/notifications/read-all", token: ana.token)
            #expect(all.json["unread"] as? Int == 0)
            #expect(
                try await client.send(.get, "/v1/notifications/unread-count", token: ana.token).json["unread"] as? Int
                    == 0)

            // Settings: validation, then a muted kind never reaches the inbox.
            let bad = try await client.send(
                .put, "/v1/me/notification-settings",
                json: ["muted": [], "quietHours": ["start": "25:00", "end": "07:00"], "timeZone": "Mars/Base"],
                token: ana.token)
            #expect(bad.status == .badRequest)
            #expect(Set(bad.json.fieldErrors) == ["quietHours", "timeZone"])
            let settings = try await client.send(
                .put, "/v1/me/notification-settings",
                json: [
                    "muted": ["friendRequest", "friendRequest"], "quietHours": ["start": "22:00", "end": "07:00"],
                ],
                token: ana.token)
            #expect(settings.status == .ok, "\(settings.text)")
            #expect(settings.json["muted"] as? [String] == ["friendRequest"])
            let stored = try await client.send(.get, "/v1/me/notification-settings", token: ana.token)
            #expect((stored.json["quietHours"] as? JSON)?["start"] as? String == "22:00")
            let late = try await client.member("late")
            _ = try await client.send(.post, "/v1/me/friend-requests", json: ["userId": ana.id], token: late.token)
            #expect(try await client.listedUsers("/v1/me/friend-requests", as: ana).contains(late.id))
            #expect(try await client.notificationKinds(ana).count == 5)
        }
    }

    @Test(
        "a followed event that moves or is cancelled tells its attendees and followers once per change",
        arguments: Backend.available)
    func eventChanges(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let host = try await client.member("host")
            let event = try await createParty(services, client, host: host)
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let cyd = try await client.member("cyd")
            try await client.going(ana, to: event)
            _ = try await client.send(
                .put, "/v1/events/\(event)/attendance", json: ["status": "following"], token: ben.token)
            let alerts = EventChangeNotifier(
                events: services.events, notifier: services.notifier, interval: .seconds(1),
                logger: services.logger)
            // Changes made before anyone follows are not news.
            #expect(try await alerts.runOnce() == 0)

            let moved = try await client.send(
                .patch, "/v1/events/\(event)", json: ["localTime": "23:15"], token: host.token)
            #expect(moved.status == .ok, "\(moved.text)")
            #expect(try await alerts.runOnce() == 1)
            #expect(try await alerts.runOnce() == 0)
            for user in [ana, ben] {
                let inbox = try await client.send(.get, "/v1/notifications", token: user.token)
                let items = inbox.json["items"] as? [JSON] ?? []
                #expect(items.count == 1)
                #expect(items.first?["kind"] as? String == "eventChanged")
                #expect((items.first?["text"] as? String)?.contains("now starts") == true)
                #expect((items.first?["text"] as? String)?.hasSuffix("at 23:15") == true)
                #expect(items.first?["eventId"] as? String == event)
            }
            #expect(try await client.notificationKinds(host).isEmpty)
            #expect(try await client.notificationKinds(cyd).isEmpty)

            _ = try await client.send(.post, "/v1/events/\(event)/cancel", token: host.token)
            #expect(try await alerts.runOnce() == 1)
            let latest = try await client.send(.get, "/v1/notifications?limit=1", token: ana.token)
            #expect(((latest.json["items"] as? [JSON])?.first?["text"] as? String)?.hasSuffix("is cancelled") == true)
        }
    }
}
