import Foundation
import Testing
import TonightClient
import TonightDemo
import TonightServer

@Suite("The demo city")
struct DemoTests {
    @Test("seeding fills a living Berlin through the API, and seeding again changes nothing")
    func seed() async throws {
        try await withServer(configure: { $0.jobsEnabled = true }) { services, url in
            let summary = try await DemoSeeder(services: services, serverURL: url, log: { _ in }).run()
            #expect(summary == .init(places: 11, shows: 6, users: 7, clips: 7, sessions: 4))

            let tonight = TonightClient(serverURL: url)
            _ = try await tonight.signUp(username: "newcomer", email: "new@example.com", password: "a long passphrase")
            // Tickets Tonight: the artist a newcomer finds leads to a similar artist's show.
            let kiki = try #require(try await tonight.suggestArtists("kik").first)
            #expect(kiki.name == "Kiki Moreno")
            try await tonight.setFavorite(artistID: kiki.id, true)
            let cards = try await tonight.exploreCards(near: "52.52,13.405")
            #expect(cards.items.first?.event.name == "Midnight Orbit — Live")
            #expect(cards.items.first?.reason == "Similar to Kiki Moreno")
            // PartyUP: the promoted club comes first in the hub, with its processed clips voted on.
            let hub = try await tonight.cityHub("Berlin$State of Berlin$DE", near: (52.52, 13.405))
            #expect(hub.items.first?.place.name == "Neon Garden")
            #expect(hub.items.first?.tier == 80)
            // Its venues are nightlife venues when it asks: the demo's pitch and courts are Playmate's.
            let nightlife = try await tonight.cityHub("Berlin$State of Berlin$DE", group: .nightlife).items
            #expect(nightlife.count < hub.items.count && !nightlife.contains { $0.place.category == .pitch })
            let clips = try await tonight.feed(.place("osm:node/9100001"))
            #expect(clips.items.count == 2)
            #expect(clips.items.allSatisfy { $0.status == .ready && $0.up > 0 })
            // Playmate: four sessions, Mia's tennis for two is full.
            let sessions = try await tonight.sessions(.init(near: "52.52,13.405", radius: 20_000))
            #expect(sessions.items.count == 4)
            #expect(sessions.items.first { $0.session?.sport.slug == "tennis" }?.session?.openSpots == 0)
            // Pala: people are going to Mia's party.
            let party = try await tonight.events(.init(q: "Birthday Rave"))
            #expect(party.items.first?.counts.going == 5)
            let mia = TonightClient(serverURL: url)
            _ = try await mia.logIn(username: "mia", password: DemoCity.password)
            #expect(try await mia.friends().items.count == 2)

            let again = try await DemoSeeder(services: services, serverURL: url, log: { _ in }).run()
            #expect(again.alreadySeeded)
            let places = try await tonight.places(.init(near: "52.52,13.405", radius: 30_000, limit: 50))
            #expect(places.items.count == 11)
        }
    }
}
