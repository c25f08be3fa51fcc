import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TonightCore

@testable import TonightServer

/// Each app asks for its own things: Tickets Tonight and Pala for shows and parties, Playmate for
/// sessions, PartyUP for nightlife venues. No list answers another app's kind when asked.
@Suite("Each app sees its own things")
struct AppKindsTests {
    @Test(
        "event lists answer only the kinds asked for; place lists and the hub only the group",
        arguments: Backend.available)
    func lists(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            // Setup: a bar and a pitch side by side in Zurich; a party at the bar and a session on the pitch
            // the same evening, both with Ana going.
            let mod = try await moderatorToken(services, client)
            let bar = try await createPlace(client, token: mod, name: "Bar Rossi", lat: 47.3769, lon: 8.5417)
            let pitch = try await createPlace(
                client, token: mod, name: "Pitch Letzi", lat: 47.3771, lon: 8.5419, category: "pitch")
            let barID = try #require(bar["id"] as? String)
            let pitchID = try #require(pitch["id"] as? String)
            let users = try await quickUsers(services, 2, prefix: "kinds")
            let (host, ana) = (users[0], users[1])
            let date = localDate(daysFromNow: 1, zone: "Europe/Zurich")
            let created = try await client.send(
                .post, "/v1/events",
                json: ["name": "Disco", "placeId": barID, "localDate": date, "localTime": "21:00"], token: host.token)
            #expect(created.status == .created, "\(created.text)")
            let partyID = try #require(created.json["id"] as? String)
            let sessionID = try #require(
                try await client.createSession(host, sport: "football", place: pitchID, date: date, time: "20:00")["id"]
                    as? String)
            for id in [partyID, sessionID] {
                let going = try await client.send(
                    .put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: ana.token)
                #expect(going.status == .ok, "\(going.text)")
            }

            // Act and check: events near the pair, by kind.
            let near = "near=47.377,8.542&radius=5000&limit=50"
            let every = try await client.eventIDs("/v1/events?\(near)")
            #expect(Set(every) == [partyID, sessionID])
            #expect(try await client.eventIDs("/v1/events?\(near)&kind=show&kind=party") == [partyID])
            #expect(try await client.eventIDs("/v1/events?\(near)&kind=session") == [sessionID])
            // The caller's own events (Pala's "Your events", Tickets' "Events I follow").
            let mine = "/v1/me/events?status=going"
            #expect(Set(try await client.eventIDs(mine, token: ana.token)) == [partyID, sessionID])
            #expect(try await client.eventIDs(mine + "&kind=show&kind=party", token: ana.token) == [partyID])
            #expect(try await client.eventIDs(mine + "&kind=session", token: ana.token) == [sessionID])
            // A kind the contract does not know, or too many, is the client's mistake.
            let unknown = try await client.send(.get, "/v1/events?kind=concert")
            #expect(unknown.status == .badRequest, "\(unknown.text)")
            let tooMany = try await client.send(.get, "/v1/events?kind=show&kind=party&kind=session&kind=show")
            #expect(tooMany.status == .badRequest, "\(tooMany.text)")

            // Places by group: nightlife venues for PartyUP's post form, sports spots for Playmate.
            func placeIDs(_ query: String) async throws -> [String] {
                let page = try await client.send(.get, "/v1/places?\(query)")
                #expect(page.status == .ok, "\(query): \(page.text)")
                return (page.json["items"] as? [JSON] ?? []).compactMap { $0["id"] as? String }
            }
            #expect(Set(try await placeIDs(near)) == [barID, pitchID])
            #expect(try await placeIDs(near + "&group=nightlife") == [barID])
            #expect(try await placeIDs(near + "&group=sports") == [pitchID])
            let cityKey = try #require(bar["cityKey"] as? String)
            #expect(try await placeIDs("city=\(cityKey)&group=nightlife") == [barID])
            // The city hub: PartyUP asks for nightlife venues.
            func hubIDs(_ query: String) async throws -> [String] {
                let page = try await client.send(.get, "/v1/cities/\(cityKey)/hub?\(query)")
                #expect(page.status == .ok, "\(query): \(page.text)")
                return (page.json["items"] as? [JSON] ?? []).compactMap { ($0["place"] as? JSON)?["id"] as? String }
            }
            #expect(Set(try await hubIDs("limit=50")) == [barID, pitchID])
            #expect(try await hubIDs("group=nightlife") == [barID])
            #expect(try await hubIDs("group=sports") == [pitchID])
        }
    }

    @Test("a notification about a session says so, in the inbox and on the live socket", arguments: Backend.available)
    func notificationKinds(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let bar = try await createPlace(client, token: mod, name: "Bar Blau", lat: 47.3769, lon: 8.5417)
            let users = try await quickUsers(services, 2, prefix: "inbox")
            let (host, ana) = (users[0], users[1])
            let date = localDate(daysFromNow: 1, zone: "Europe/Zurich")
            let party = try await client.send(
                .post, "/v1/events",
                json: [
                    "name": "Disco", "placeId": bar["id"] as? String ?? "", "localDate": date, "localTime": "21:00",
                ],
                token: host.token)
            let partyID = try #require(party.json["id"] as? String)
            let sessionID = try #require(
                try await client.createSession(host, spot: (47.38, 8.54, "Park"), date: date)["id"] as? String)
            // The digest and change alerts point at either kind.
            let written = try await services.notifications.write(
                [
                    NotificationDraft(userID: ana.id, kind: .digest, text: "Sessions for you", eventID: sessionID),
                    NotificationDraft(userID: ana.id, kind: .eventChanged, text: "Moved", eventID: partyID),
                ], now: Clock.millis())
            #expect(written.map(\.eventKind) == [.session, .party])
            let inbox = try await client.send(.get, "/v1/notifications", token: ana.token)
            let kinds = (inbox.json["items"] as? [JSON] ?? []).map {
                ($0["eventId"] as? String, $0["eventKind"] as? String)
            }
            #expect(kinds.contains { $0.0 == sessionID && $0.1 == "session" })
            #expect(kinds.contains { $0.0 == partyID && $0.1 == "party" })
        }
    }
}
