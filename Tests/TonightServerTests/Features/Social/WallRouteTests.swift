import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TonightServer

/// Creates a party tomorrow at a new place and returns its id.
func createParty(_ services: AppServices, _ client: any TestClientProtocol, host: TestUser) async throws -> String {
    let mod = try await moderatorToken(services, client)
    let place = try await createPlace(client, token: mod, name: "Paradiso", lat: 52.3622, lon: 4.8838)
    let created = try await client.send(
        .post, "/v1/events",
        json: [
            "name": "Pala night", "placeId": place["id"] as? String ?? "",
            "localDate": localDate(daysFromNow: 1, zone: "Europe/Amsterdam"), "localTime": "22:00",
        ], token: host.token)
    #expect(created.status == .created, "\(created.text)")
    return created.json["id"] as? String ?? ""
}

extension TestClientProtocol {
    /// Sets profile fields of `user` (`PATCH /v1/me`).
    func profile(_ user: TestUser, _ fields: JSON) async throws {
        let response = try await send(.patch, "/v1/me", json: fields, token: user.token)
        #expect(response.status == .ok, "\(response.text)")
    }

    func going(_ user: TestUser, to eventID: String) async throws {
        let response = try await send(
            .put, "/v1/events/\(eventID)/attendance", json: ["status": "going"], token: user.token)
        #expect(response.status == .ok, "\(response.text)")
    }

    func swipe(_ user: TestUser, _ target: TestUser, at eventID: String, _ decision: String) async throws
        -> TestResponse
    {
        try await send(.put, "/v1/events/\(eventID)/wall/\(target.id)", json: ["decision": decision], token: user.token)
    }
}

@Suite("Event wall and matches")
struct WallRouteTests {
    @Test("the wall filters by both sides' gender preferences, age, swipes and blocks", arguments: Backend.available)
    func wall(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let host = try await client.member("host")
            let event = try await createParty(services, client, host: host)
            let ana = try await client.member("ana")  // woman looking for men
            let ben = try await client.member("ben")  // man looking for women
            let cal = try await client.member("cal")  // man looking for men: not for ana, and ana not for him
            let dan = try await client.member("dan")  // man open to everyone
            let eve = try await client.member("eve")  // woman: not ana's preference
            let kid = try await client.member("kid")  // a man under 18
            let stay = try await client.member("stay")  // a man who is only interested
            try await client.profile(ana, ["gender": "female", "preferences": ["genderPreference": ["male"]]])
            try await client.profile(ben, ["gender": "male", "preferences": ["genderPreference": ["female"]]])
            try await client.profile(cal, ["gender": "male", "preferences": ["genderPreference": ["male"]]])
            try await client.profile(dan, ["gender": "male", "avatarUrl": "/v1/media/avatars/\(dan.id)/photo.jpg"])
            try await client.profile(eve, ["gender": "female"])
            try await client.profile(
                kid, ["gender": "male", "birthDate": "\(Calendar.current.component(.year, from: Date()) - 15)-01-01"])
            try await client.profile(stay, ["gender": "male"])
            for user in [ana, ben, cal, dan, eve, kid] { try await client.going(user, to: event) }
            _ = try await client.send(
                .put, "/v1/events/\(event)/attendance", json: ["status": "interested"], token: stay.token)

            let wall = try await client.send(.get, "/v1/events/\(event)/wall", token: ana.token)
            #expect(wall.status == .ok, "\(wall.text)")
            let cards = wall.json["items"] as? [JSON] ?? []
            #expect(cards.compactMap { ($0["user"] as? JSON)?["id"] as? String } == [ben.id, dan.id])
            #expect(cards.last?["gender"] as? String == "male")
            #expect((cards.last?["user"] as? JSON)?["avatarUrl"] as? String == "/v1/media/avatars/\(dan.id)/photo.jpg")
            // Ben sees the women; Dan, open to everyone, sees whoever is open to men (not Ben).
            #expect(try await client.listedUsers("/v1/events/\(event)/wall", as: ben) == [ana.id, eve.id])
            #expect(try await client.listedUsers("/v1/events/\(event)/wall", as: dan) == [ana.id, cal.id, eve.id])

            // Paging.
            let page = try await client.send(.get, "/v1/events/\(event)/wall?limit=1", token: ana.token)
            let cursor = try #require(page.json["nextCursor"] as? String)
            #expect(
                try await client.listedUsers("/v1/events/\(event)/wall?limit=1&cursor=\(cursor)", as: ana) == [dan.id])

            // A pass hides; a block hides both ways.
            #expect(try await client.swipe(ana, dan, at: event, "pass").status == .ok)
            #expect(try await client.listedUsers("/v1/events/\(event)/wall", as: ana) == [ben.id])
            _ = try await client.send(.put, "/v1/me/blocks/\(ana.id)", token: ben.token)
            #expect(try await client.listedUsers("/v1/events/\(event)/wall", as: ana).isEmpty)
            #expect(try await client.listedUsers("/v1/events/\(event)/wall", as: ben) == [eve.id])
            #expect(try await client.swipe(ana, ben, at: event, "like").status == .notFound)

            // Who may look: only people going, only adults.
            let notGoing = try await client.send(.get, "/v1/events/\(event)/wall", token: stay.token)
            #expect(notGoing.status == .forbidden)
            #expect(try await client.send(.get, "/v1/events/\(event)/wall", token: kid.token).status == .forbidden)
            #expect(try await client.swipe(ana, stay, at: event, "like").status == .notFound)
            #expect(try await client.swipe(ana, ana, at: event, "like").status == .badRequest)
            let badDecision = try await client.send(
                .put, "/v1/events/\(event)/wall/\(dan.id)", json: ["decision": "maybe"], token: ana.token)
            #expect(badDecision.status == .badRequest)
            #expect(try await client.send(.get, "/v1/events/nope/wall", token: ana.token).status == .notFound)
        }
    }

    @Test("a like back makes one match, both are told; unmatch ends it for both", arguments: Backend.available)
    func matching(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let host = try await client.member("host")
            let event = try await createParty(services, client, host: host)
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            for user in [ana, ben] { try await client.going(user, to: event) }

            let first = try await client.swipe(ana, ben, at: event, "like")
            #expect(first.status == .ok)
            #expect(first.json["match"] == nil)
            let second = try await client.swipe(ben, ana, at: event, "like")
            let match = try #require(second.json["match"] as? JSON, "\(second.text)")
            #expect((match["user"] as? JSON)?["id"] as? String == ana.id)
            #expect(match["eventName"] as? String == "Pala night")
            #expect(try await client.notificationKinds(ana) == ["match"])
            #expect(try await client.notificationKinds(ben) == ["match"])

            let list = try await client.send(.get, "/v1/me/matches", token: ana.token)
            let items = list.json["items"] as? [JSON] ?? []
            #expect(items.count == 1)
            #expect((items.first?["user"] as? JSON)?["id"] as? String == ben.id)
            #expect(items.first?["eventId"] as? String == event)
            #expect(try await client.swipe(ana, ben, at: event, "pass").status == .conflict)
            #expect(try await client.listedUsers("/v1/events/\(event)/wall", as: ana).isEmpty)

            let matchID = try #require(match["id"] as? String)
            let outsider = try await client.member("outsider")
            #expect(
                try await client.send(.delete, "/v1/me/matches/\(matchID)", token: outsider.token).status == .notFound)
            #expect(try await client.send(.delete, "/v1/me/matches/\(matchID)", token: ben.token).status == .noContent)
            #expect(try await client.listedUsers("/v1/me/matches", as: ana).isEmpty)
            #expect(try await client.listedUsers("/v1/events/\(event)/wall", as: ana).isEmpty)
            #expect(try await client.listedUsers("/v1/events/\(event)/wall", as: ben).isEmpty)
            #expect(try await rowCount("matches", in: services) == 0)
        }
    }

    @Test("200 pairs liking each other at the same instant make exactly 200 matches", arguments: Backend.available)
    func likeRace(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let host = try await client.member("host")
            let event = try await createParty(services, client, host: host)
            var pairs: [(TestUser, TestUser)] = []
            for index in 0..<200 {
                let a = try await client.member("lover\(index)a")
                let b = try await client.member("lover\(index)b")
                try await client.going(a, to: event)
                try await client.going(b, to: event)
                pairs.append((a, b))
            }
            let all = pairs
            let matched = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<(all.count * 2) {
                    group.addTask {
                        let (a, b) = all[index / 2]
                        let (from, to) = index % 2 == 0 ? (a, b) : (b, a)
                        let response = try await client.swipe(from, to, at: event, "like")
                        #expect(response.status == .ok, "\(response.text)")
                        return response.json["match"] != nil
                    }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            // Each pair's second like sees the first: at least one side of each pair is told the
            // match in its answer, and the table has exactly one row per pair.
            #expect(matched >= all.count)
            #expect(try await rowCount("matches", in: services) == all.count)
            let distinct = try await services.database.sql.raw(
                "SELECT COUNT(*) AS n FROM (SELECT DISTINCT user_a, user_b FROM matches) AS pairs"
            ).first()?.decode(column: "n", as: Int.self)
            #expect(distinct == all.count)
            let notices = try await services.database.sql.raw(
                "SELECT COUNT(*) AS n FROM notifications WHERE kind = 'match'"
            ).first()?.decode(column: "n", as: Int.self)
            #expect(notices == all.count * 2)
        }
    }

    @Test(
        "invitations: friends only, once each; accept makes the invitee going, decline does not",
        arguments: Backend.available)
    func invitations(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let host = try await client.member("host")
            let event = try await createParty(services, client, host: host)
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let cyd = try await client.member("cyd")
            let stranger = try await client.member("stranger")
            for friend in [ben, cyd] {
                _ = try await client.send(
                    .post, "/v1/me/friend-requests", json: ["userId": friend.id], token: ana.token)
                _ = try await client.send(.post, "/v1/me/friend-requests/\(ana.id)/accept", token: friend.token)
            }
            let notGoing = try await client.send(
                .post, "/v1/events/\(event)/invitations", json: ["userIds": [ben.id]], token: ana.token)
            #expect(notGoing.status == .forbidden)
            try await client.going(ana, to: event)
            let sent = try await client.send(
                .post, "/v1/events/\(event)/invitations", json: ["userIds": [ben.id, cyd.id, stranger.id, ben.id]],
                token: ana.token)
            #expect(sent.status == .ok, "\(sent.text)")
            let invited = sent.json["invited"] as? [JSON] ?? []
            #expect(Set(invited.compactMap { ($0["to"] as? JSON)?["id"] as? String }) == [ben.id, cyd.id])
            #expect((sent.json["skipped"] as? [JSON])?.first?["reason"] as? String == "notFriend")
            let again = try await client.send(
                .post, "/v1/events/\(event)/invitations", json: ["userIds": [ben.id]], token: ana.token)
            #expect((again.json["skipped"] as? [JSON])?.first?["reason"] as? String == "alreadyInvited")
            #expect(try await client.notificationKinds(ben).filter { $0 == "invitation" }.count == 1)

            let incoming = try await client.send(.get, "/v1/me/invitations", token: ben.token)
            let invitation = try #require((incoming.json["items"] as? [JSON])?.first)
            #expect(invitation["eventName"] as? String == "Pala night")
            let id = try #require(invitation["id"] as? String)
            #expect(
                try await client.send(.post, "/v1/me/invitations/\(id)/accept", token: cyd.token).status == .notFound)
            let accepted = try await client.send(.post, "/v1/me/invitations/\(id)/accept", token: ben.token)
            #expect(accepted.json["status"] as? String == "accepted")
            let attendance = try await services.events.attendance(of: ben.id, in: [event])
            #expect(attendance[event] == .going)

            let cydInvitation = try #require(
                (try await client.send(.get, "/v1/me/invitations", token: cyd.token).json["items"] as? [JSON])?.first)
            let declined = try await client.send(
                .post, "/v1/me/invitations/\(cydInvitation["id"] as? String ?? "")/decline", token: cyd.token)
            #expect(declined.json["status"] as? String == "declined")
            #expect(try await services.events.attendance(of: cyd.id, in: [event])[event] == nil)
            let outgoing = try await client.send(
                .get, "/v1/me/invitations?direction=outgoing&status=pending", token: ana.token)
            #expect((outgoing.json["items"] as? [JSON])?.isEmpty == true)
            let bad = try await client.send(.post, "/v1/me/invitations/\(id)/maybe", token: ben.token)
            #expect(bad.status == .badRequest)
        }
    }
}
