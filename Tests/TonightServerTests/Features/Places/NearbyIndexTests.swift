import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import PostgresKit
import PostgresNIO
import SQLKit
import Testing
import TonightAPI
import TonightCore

@testable import TonightServer

@Suite("Nearby places from memory")
struct NearbyIndexTests {
    static let center = GeoPoint(latitude: 59.9139, longitude: 10.7522)

    /// The places handlers of `services`, answering nearby searches from `index` (`nil`: from the
    /// database every time, the path the index must equal).
    static func handlers(_ services: AppServices, from index: NearbyIndex?) -> PlacesHandlers {
        PlacesHandlers(geo: services.geo, places: services.places, events: services.events, nearby: index)
    }

    /// `count` places 0–6 km around ``center`` (a fixed draw), in three categories and two cities,
    /// every tenth a session spot, every third with opening hours; stored through the repository.
    static func seed(_ services: AppServices, count: Int) async throws {
        var state: UInt64 = 2015
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        for index in 0..<count {
            let distance = pow(next(), 2) * 6000
            let bearing = next() * 2 * .pi
            let point = GeoPoint(
                latitude: center.latitude + distance * cos(bearing) / PlaceGrid.metresPerDegree,
                longitude: center.longitude + distance * sin(bearing)
                    / (PlaceGrid.metresPerDegree * cos(center.latitude * .pi / 180)))
            try await services.places.insert(
                PlaceRecord(
                    id: "p\(index)",
                    name: index % 7 == 0 ? #"Bar "openState":"open" / \ 😀 \#(index)"# : "Place \(index)",
                    category: ["bar", "pub", "football"][index % 3],
                    latitude: point.latitude, longitude: point.longitude,
                    cityKey: index % 2 == 0 ? "Oslo$Oslo$NO" : "Bærum$Akershus$NO", timeZone: "Europe/Oslo",
                    openingHours: index % 3 == 0 ? "Mo-Su 10:00-02:00" : nil, source: index % 10 == 0 ? "spot" : nil,
                    createdAt: 0, updatedAt: 0))
        }
    }

    @Test("pages from memory are the database's, for every filter, radius and page", arguments: Backend.available)
    func sameAsDatabase(backend: Backend) async throws {
        try await withApp(backend) { services, _ in
            try await Self.seed(services, count: 400)
            let index = try #require(services.nearby)
            let memory = Self.handlers(services, from: index)
            let database = Self.handlers(services, from: nil)
            let openish: (PlaceRecord) -> Bool = { $0.openingHours != nil }
            var compared = 0
            for radius in [150.0, 1200, 4000, 9000] {
                for filter in 0..<7 {
                    var query = PlaceQuery()
                    query.near = Self.center
                    query.radius = radius
                    switch filter {
                    case 1: query.category = "pub"
                    case 2: query.group = .sports
                    case 3: query.cityKey = "Bærum$Akershus$NO"
                    case 4: query.includeSpots = true
                    case 5: (query.category, query.group) = ("pub", .sports)  // AND: none
                    case 6: (query.category, query.group) = ("football", .sports)
                    default: break
                    }
                    for (offset, keep) in [(0, { _ in true }), (7, { _ in true }), (0, openish), (14, openish)]
                        as [(Int, (PlaceRecord) -> Bool)]
                    {
                        let fast = try await memory.nearbyPage(
                            query, center: Self.center, offset: offset, limit: 7, keep: keep)
                        let slow = try await database.nearbyPage(
                            query, center: Self.center, offset: offset, limit: 7, keep: keep)
                        #expect(fast.items.map(\.0) == slow.items.map(\.0), "radius \(radius), filter \(filter)")
                        #expect(fast.items.map(\.1) == slow.items.map(\.1))
                        #expect(fast.next == slow.next)
                        compared += slow.items.count
                    }
                }
            }
            #expect(compared > 200)
            #expect(index.counts.positions == 360 && index.counts.rows > 0)  // not the 40 session spots
        }
    }

    @Test("a page written from kept bytes is the typed page, and the route sends it", arguments: Backend.available)
    func bytesAreTheTypedPage(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            try await Self.seed(services, count: 150)
            let memory = Self.handlers(services, from: services.nearby)
            let typed = Self.handlers(services, from: nil)
            let encoder = EncodedAnswer.encoder()
            func object(_ bytes: some Sequence<UInt8>) throws -> NSDictionary {
                try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
            }
            let near = "\(Self.center.latitude),\(Self.center.longitude)"
            let queries: [Operations.ListPlaces.Input.Query] = [
                .init(near: near, radius: 1500, limit: 7), .init(near: near, radius: 1500, cursor: "bzo3", limit: 7),
                .init(near: near, radius: 4000, category: .pub), .init(near: near, group: .sports, openNow: true),
                .init(near: near, radius: 6000, limit: 100),
            ]
            var written = 0
            for query in queries {
                let answer = EncodedAnswer()
                _ = try await EncodedAnswer.$current.withValue(answer) {
                    try await memory.listPlaces(.init(query: query))
                }
                let bytes = try #require(answer.bytes)
                guard case .ok(let ok) = try await typed.listPlaces(.init(query: query)) else {
                    Issue.record("not ok")
                    continue
                }
                let expected = try object(try encoder.encode(try ok.body.json))
                #expect(try object(bytes) == expected, "\(query)")
                written += (expected["items"] as? [Any])?.count ?? 0
            }
            #expect(written > 100)
            // Through the route (the middleware sends the bytes).
            let response = try await client.send(.get, "/v1/places?near=\(near)&radius=1500&limit=7")
            #expect(response.status == .ok)
            #expect(
                response.headers[.contentLength].map { Int($0) } ?? response.body.readableBytes
                    == response.body.readableBytes)
            guard case .ok(let ok) = try await typed.listPlaces(.init(query: .init(near: near, radius: 1500, limit: 7)))
            else { return }
            #expect(try object(Array(response.text.utf8)) == (try object(try encoder.encode(try ok.body.json))))
        }
    }

    @Test("the pair cut from a place's JSON is the outermost one, whatever strings and objects hold")
    func topLevelPair() throws {
        let json = Array(#"{"a":{"openState":"x"},"b":"\"openState\":\"y","openState":"closed","c":[1]}"#.utf8)
        let range = try #require(PlaceJSON.topLevelPair(named: "openState", in: json))
        var cut = json
        cut.removeSubrange(range)
        #expect(String(decoding: cut, as: UTF8.self) == #"{"a":{"openState":"x"},"b":"\"openState\":\"y","c":[1]}"#)
        let last = Array(#"{"a":1,"openState":"open"}"#.utf8)
        let lastRange = try #require(PlaceJSON.topLevelPair(named: "openState", in: last))
        #expect(
            String(decoding: last[..<lastRange.lowerBound] + last[lastRange.upperBound...], as: UTF8.self)
                == #"{"a":1}"#)
        for value in [0, 0.1, 39.7, 40, 1234567.8, 99999.9, 2.5e-3] {
            #expect(PlaceJSON.number(value) == String(decoding: try JSONEncoder().encode(value), as: UTF8.self))
        }
    }

    @Test(
        "a place added, moved, renamed or removed — here, by import or by another process — shows in the next page",
        arguments: Backend.available)
    func freshAfterChanges(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let near = "/v1/places?near=59.9139,10.7522&radius=2000"
            func names() async throws -> [String] {
                try await client.send(.get, near).json["items"].flatMap { $0 as? [JSON] }?
                    .compactMap { $0["name"] as? String } ?? []
            }
            let first = try await createPlace(client, token: mod, name: "First", lat: 59.9139, lon: 10.7522)
            #expect(try await names() == ["First"])
            let index = try #require(services.nearby)
            #expect(index.counts.positions == 1)

            let second = try await createPlace(client, token: mod, name: "Second", lat: 59.9150, lon: 10.7522)
            #expect(try await names() == ["First", "Second"])
            let secondID = second["id"] as? String ?? ""
            let moved = try await client.send(
                .patch, "/v1/places/\(secondID)", json: ["location": ["lat": 59.95, "lon": 10.7522]], token: mod)
            #expect(moved.status == .ok)
            #expect(try await names() == ["First"])

            let osm = try temporaryFile(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <osm version="0.6">
                 <node id="7" lat="59.9140" lon="10.7522"><tag k="amenity" v="bar"/><tag k="name" v="Imported"/></node>
                </osm>
                """, suffix: ".osm")
            _ = try await Importer.run(.osm, path: osm, dryRun: false, services: services)
            #expect(try await names() == ["First", "Imported"])

            // Another process (a script, the CLI) writing the database directly.
            let firstID = first["id"] as? String ?? ""
            try await services.database.sql.raw("UPDATE places SET name = 'Renamed' WHERE id = \(bind: firstID)").run()
            #expect(try await eventually(within: .seconds(10)) { try await names() == ["Renamed", "Imported"] })
            try await services.database.sql.raw("DELETE FROM places WHERE id = \(bind: firstID)").run()
            #expect(try await eventually(within: .seconds(10)) { try await names() == ["Imported"] })
        }
    }

    @Test(
        "session spots added, renamed or removed move no places version; a venue's change does",
        arguments: Backend.available)
    func spotsKeepTheVersion(backend: Backend) async throws {
        try await withApp(backend) { services, _ in
            var venue = PlaceRecord(
                id: "venue", name: "Venue", category: "bar", latitude: 59.9139, longitude: 10.7522,
                timeZone: "Europe/Oslo", createdAt: 0, updatedAt: 0)
            try await services.places.insert(venue)
            venue.name = "Venue 2"
            let renamed = venue
            @Sendable func spotChanges() async throws {
                try await services.places.insert(
                    PlaceRecord(
                        id: "spot-1", name: "Pitch", category: "football", latitude: 59.914, longitude: 10.7522,
                        timeZone: "UTC", source: PlaceRepository.spotSource, createdAt: 0, updatedAt: 0))
                try await services.database.sql.raw("UPDATE places SET name = 'Pitch 2' WHERE id = 'spot-1'").run()
                try await services.database.sql.raw("DELETE FROM places WHERE id = 'spot-1'").run()
            }
            switch services.database.kind {
            case .sqlite:
                let before = try #require(try await services.database.placesVersion())
                try await spotChanges()
                #expect(try await services.database.placesVersion() == before)
                try await services.places.update(renamed)
                #expect(try await services.database.placesVersion() == before + 1)
            case .postgres:
                // The notifications themselves, in commit order: none for the spots, one for the venue.
                let connection = try await ownPostgresConnection(services, id: 7)
                let seen = try await withDeadline(.seconds(30)) {
                    try await connection.listen(on: PostgresFanout.channel) { notifications in
                        var iterator = notifications.makeAsyncIterator()
                        var seen: [String] = []
                        try await spotChanges()
                        try await services.database.sql.raw("SELECT pg_notify('tonight_live', 'marker')").run()
                        while let payload = try await iterator.next()?.payload, payload != "marker" {
                            seen.append(payload)
                        }
                        seen.append("marker")
                        try await services.places.update(renamed)
                        while let payload = try await iterator.next()?.payload {
                            seen.append(payload)
                            if payload == "places" { break }
                        }
                        return seen
                    }
                }
                try? await connection.close()
                #expect(seen.filter { $0 == "places" || $0 == "marker" } == ["marker", "places"], "\(seen)")
            }
        }
    }

    @Test(
        "a search keeps the cells it took though another search resets the index meanwhile; older versions keep nothing"
    )
    func resetDuringSearch() async throws {
        let index = NearbyIndex(capacity: 1000, cluster: nil)
        let center = Self.center
        let spots = (0..<40).map { step in
            // Across the cell border north of the centre: two cells, both within 2 km.
            NearbyIndex.Spot(
                hit: PlaceHit(
                    id: "s\(step)",
                    location: GeoPoint(
                        latitude: 59.90 + Double(step) * 0.001, longitude: center.longitude)),
                category: "bar", cityKey: nil)
        }
        @Sendable func load(_ range: ClosedRange<Int64>) -> [(cell: Int64, spot: NearbyIndex.Spot)] {
            spots.map { (PlaceGrid.cell(of: $0.hit.location), $0) }.filter { range.contains($0.0) }
        }
        var query = PlaceQuery()
        query.near = center
        query.radius = 2000
        let all = try await index.hits(query, at: 1) { load($0) }
        #expect(all.count > 20)
        // Half the cells kept at 1; the next search needs the others too, and while it reads them
        // a search at version 2 (elsewhere) empties the index.
        var south = query
        south.near = GeoPoint(latitude: 59.90, longitude: center.longitude)
        south.radius = 100
        var far = query
        far.near = GeoPoint(latitude: 10, longitude: 10)
        let index2 = NearbyIndex(capacity: 1000, cluster: nil)
        _ = try await index2.hits(south, at: 1) { load($0) }
        let found = try await index2.hits(query, at: 1) { range in
            _ = try await index2.hits(far, at: 2) { _ in [] }
            return load(range)
        }
        #expect(Set(found.map(\.id)) == Set(all.map(\.id)))
        // A search at the older version 1 leaves version 2's index as it was.
        _ = try await index2.hits(query, at: 1) { load($0) }
        #expect(index2.counts.positions == 0)
        _ = try await index2.hits(query, at: 2) { load($0) }
        #expect(index2.counts.positions == 40)
    }

    @Test(
        "searches racing places being moved leave nothing stale: the next pages are the database's",
        arguments: Backend.available)
    func racingChanges(backend: Backend) async throws {
        try await withApp(backend) { services, _ in
            try await Self.seed(services, count: 200)
            let index = try #require(services.nearby)
            let memory = Self.handlers(services, from: index)
            let database = Self.handlers(services, from: nil)
            var query = PlaceQuery()
            query.near = Self.center
            query.radius = 3000
            let circle = query
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        for offset in stride(from: 0, to: 120, by: 4) {
                            _ = try await memory.nearbyPage(
                                circle, center: Self.center, offset: offset % 40, limit: 10
                            ) { _ in true }
                        }
                    }
                }
                group.addTask {
                    // Move places in and out of the circle while the searches run.
                    for step in 0..<40 {
                        guard var place = try await services.places.find(id: "p\(step * 3 + 1)") else { continue }
                        place.latitude += step % 2 == 0 ? 0.05 : -0.004
                        try await services.places.update(place)
                    }
                }
                try await group.waitForAll()
            }
            // PostgreSQL: the last change's notification arrives a moment after its commit.
            let settled = try await eventually(within: .seconds(10)) {
                for offset in [0, 10, 20, 30] {
                    let fast = try await memory.nearbyPage(query, center: Self.center, offset: offset, limit: 10) { _ in
                        true
                    }
                    let slow = try await database.nearbyPage(query, center: Self.center, offset: offset, limit: 10) {
                        _ in true
                    }
                    guard fast.items.map(\.0) == slow.items.map(\.0), fast.items.map(\.1) == slow.items.map(\.1)
                    else { return false }
                }
                return true
            }
            #expect(settled)
        }
    }

    @Test("a full index drops the cells used least recently and still answers right")
    func bounded() async throws {
        try await withApp(.sqlite, configure: { $0.nearbyCachePlaces = 50 }) { services, client in
            try await Self.seed(services, count: 400)
            let index = try #require(services.nearby)
            let database = Self.handlers(services, from: nil)
            for step in 0..<12 {
                // Points 1.5 km apart around the centre: each needs other cells.
                let bearing = Double(step) * .pi / 6
                let point = GeoPoint(
                    latitude: Self.center.latitude + 1500 * cos(bearing) / PlaceGrid.metresPerDegree,
                    longitude: Self.center.longitude + 1500 * sin(bearing)
                        / (PlaceGrid.metresPerDegree * cos(Self.center.latitude * .pi / 180)))
                let uri = "/v1/places?near=\(point.latitude),\(point.longitude)&radius=3000&limit=5"
                let ids = try await client.send(.get, uri).json["items"].flatMap { $0 as? [JSON] }?
                    .compactMap { $0["id"] as? String }
                var query = PlaceQuery()
                query.near = point
                query.radius = 3000
                let expected = try await database.nearbyPage(query, center: point, offset: 0, limit: 5) { _ in true }
                #expect(ids == expected.items.map(\.0.id))
                #expect(index.counts.positions <= 400)
            }
            #expect(index.counts.positions < 400)
        }
    }
}
