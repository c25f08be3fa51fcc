import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing

@testable import TonightServer

@Suite("Events and attendance")
struct EventsRouteTests {
    @Test(
        "a party's start is the place's wall-clock time; validation lists every bad field", arguments: Backend.available
    )
    func createParty(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let place = try await createPlace(client, token: mod, name: "Wiltern", lat: 34.0617, lon: -118.3085)
            let placeID = place["id"] as? String ?? ""
            let token = try await client.signUp("host").accessToken
            let created = try await client.send(
                .post, "/v1/events",
                json: [
                    "name": "Rooftop party", "placeId": placeID, "localDate": "2031-01-15", "localTime": "21:30",
                    "durationMinutes": 240, "minPrice": 10, "maxPrice": 20, "currency": "usd",
                ], token: token)
            #expect(created.status == .created, "\(created.text)")
            // 21:30 in Los Angeles in January is 05:30 UTC the next day.
            #expect(created.json["start"] as? String == "2031-01-16T05:30:00Z")
            #expect(created.json["end"] as? String == "2031-01-16T09:30:00Z")
            #expect(created.json["localTime"] as? String == "21:30")
            #expect(created.json["timeZone"] as? String == "America/Los_Angeles")
            #expect(created.json["currency"] as? String == "USD")
            #expect(created.json["kind"] as? String == "party")

            let bad = try await client.send(
                .post, "/v1/events",
                json: [
                    "name": "x", "placeId": "nope", "localDate": "2031-02-30", "localTime": "25:00", "minPrice": 30,
                    "maxPrice": 20, "ticketURL": "javascript:alert(1)", "durationMinutes": Int.max,
                ], token: token)
            #expect(bad.status == .badRequest)
            #expect(
                Set(bad.json.fieldErrors) == [
                    "placeId", "localDate", "localTime", "maxPrice", "ticketURL", "durationMinutes",
                ])
            // An otherwise valid party lasting Int.max minutes once overflowed the end time (a crash).
            let endless = try await client.send(
                .post, "/v1/events",
                json: [
                    "name": "Endless", "placeId": placeID, "localDate": "2031-01-15", "localTime": "20:00",
                    "durationMinutes": Int.max,
                ], token: token)
            #expect(endless.status == .badRequest)
            #expect(endless.json.fieldErrors == ["durationMinutes"])
            let past = try await client.send(
                .post, "/v1/events",
                json: ["name": "Old", "placeId": placeID, "localDate": "2001-01-01", "localTime": "20:00"], token: token
            )
            #expect(past.status == .badRequest)
            #expect(try await rowCount("events", in: services) == 1)
            let anonymous = try await client.send(.post, "/v1/auth/anonymous").json.accessToken
            let denied = try await client.send(
                .post, "/v1/events",
                json: ["name": "A", "placeId": placeID, "localDate": "2031-01-15", "localTime": "20:00"],
                token: anonymous)
            #expect(denied.status == .forbidden)
        }
    }

    @Test(
        "edits and cancellation are recorded as changes; only the organiser or a moderator may",
        arguments: Backend.available)
    func changes(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let first = try await createPlace(client, token: mod, name: "One", lat: 52.52, lon: 13.405)
            let second = try await createPlace(client, token: mod, name: "Two", lat: 52.53, lon: 13.41)
            let host = try await client.signUp("host").accessToken
            let other = try await client.signUp("other").accessToken
            let event = try await client.send(
                .post, "/v1/events",
                json: [
                    "name": "Party", "placeId": first["id"] as? String ?? "", "localDate": "2031-06-01",
                    "localTime": "22:00",
                ], token: host
            ).json
            let id = event["id"] as? String ?? ""
            #expect(
                try await client.send(.patch, "/v1/events/\(id)", json: ["name": "Mine"], token: other).status
                    == .forbidden)
            let moved = try await client.send(
                .patch, "/v1/events/\(id)",
                json: ["placeId": second["id"] as? String ?? "", "localTime": "23:00", "name": "Party 2"], token: host)
            #expect(moved.status == .ok, "\(moved.text)")
            #expect(moved.json["start"] as? String == "2031-06-01T21:00:00Z")
            let fields = (moved.json["changes"] as? [JSON] ?? []).compactMap { $0["field"] as? String }
            #expect(Set(fields) == ["place", "start"])
            #expect(try await client.send(.post, "/v1/events/\(id)/cancel", token: other).status == .forbidden)
            let cancelled = try await client.send(.post, "/v1/events/\(id)/cancel", token: host)
            #expect(cancelled.json["status"] as? String == "cancelled")
            let again = try await client.send(.post, "/v1/events/\(id)/cancel", token: mod)
            #expect(((again.json["changes"] as? [JSON]) ?? []).count == 3)
            let going = try await client.send(
                .put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: other)
            #expect(going.status == .conflict)
            let follow = try await client.send(
                .put, "/v1/events/\(id)/attendance", json: ["status": "following"], token: other)
            #expect(follow.status == .ok)
        }
    }

    @Test("attendance counters stay exact with many people racing", arguments: Backend.available)
    func attendanceRace(backend: Backend) async throws {
        // 180 writes queue on one event's row lock; see refreshRace for the pool size.
        try await withApp(
            backend,
            configure: {
                $0.databasePoolSize = backend == .postgres ? 200 : 8; $0.databaseBusyTimeoutMilliseconds = 60_000
            }
        ) {
            services, client in
            let mod = try await moderatorToken(services, client)
            let place = try await createPlace(client, token: mod, name: "Hall", lat: 48.85, lon: 2.35)
            let host = try await client.signUp("host").accessToken
            let id =
                try await client.send(
                    .post, "/v1/events",
                    json: [
                        "name": "Big", "placeId": place["id"] as? String ?? "", "localDate": "2031-01-01",
                        "localTime": "20:00",
                    ],
                    token: host
                ).json["id"] as? String ?? ""
            var tokens: [String] = []
            for index in 0..<60 { tokens.append(try await client.signUp("racer\(index)").accessToken) }
            let all = tokens
            // Each racer says going, then half switch to interested and a third leave, all at once.
            // Everyone says going three times at once: one row and one count each.
            let statuses = try await client.concurrentStatuses(all.count * 3) { index in
                try await client.send(
                    .put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: all[index % all.count])
            }
            #expect(statuses.allSatisfy { $0 == .ok })
            let afterJoin = try await client.send(.get, "/v1/events/\(id)").json["counts"] as? JSON ?? [:]
            #expect(afterJoin["going"] as? Int == 60)
            _ = try await client.concurrentStatuses(all.count) { index in
                if index % 3 == 0 {
                    return try await client.send(.delete, "/v1/events/\(id)/attendance", token: all[index])
                }
                return try await client.send(
                    .put, "/v1/events/\(id)/attendance", json: ["status": index % 2 == 0 ? "interested" : "going"],
                    token: all[index])
            }
            let counts = try await client.send(.get, "/v1/events/\(id)").json["counts"] as? JSON ?? [:]
            let left = (0..<60).filter { $0 % 3 == 0 }.count
            let interested = (0..<60).filter { $0 % 3 != 0 && $0 % 2 == 0 }.count
            #expect(counts["interested"] as? Int == interested)
            #expect(counts["going"] as? Int == 60 - left - interested)
            #expect(try await rowCount("attendance", in: services) == 60 - left)

            let attendees = try await client.send(.get, "/v1/events/\(id)/attendees?limit=100", token: host)
            #expect((attendees.json["items"] as? [JSON])?.count == 60 - left)
            #expect(try await client.send(.get, "/v1/events/\(id)/attendees", token: all[1]).status == .forbidden)
            let mine = try await client.send(.get, "/v1/me/events?status=interested", token: all[2])
            #expect((mine.json["items"] as? [JSON])?.first?["myStatus"] as? String == "interested")
        }
    }

    @Test(
        "search: tonight in each place's own zone, city, keyword, budget, distance and relevance",
        arguments: Backend.available)
    func search(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let tokyo = try await createPlace(client, token: mod, name: "Shibuya Hall", lat: 35.6595, lon: 139.7005)
            let berlin = try await createPlace(client, token: mod, name: "Berghain", lat: 52.511, lon: 13.443)
            let host = try await client.signUp("host").accessToken
            func party(_ name: String, _ place: JSON, days: Int, time: String, price: Double? = nil) async throws {
                let zone = place["timeZone"] as? String ?? "UTC"
                var body: JSON = [
                    "name": name, "placeId": place["id"] as? String ?? "",
                    "localDate": localDate(daysFromNow: days, zone: zone),
                    "localTime": time,
                ]
                if let price { body["minPrice"] = price }
                let response = try await client.send(.post, "/v1/events", json: body, token: host)
                #expect(response.status == .created, "\(response.text)")
            }
            try await party("Techno Night", berlin, days: 1, time: "23:30", price: 25)
            try await party("Jazz Brunch", berlin, days: 3, time: "11:00", price: 80)
            try await party("Karaoke Tokyo", tokyo, days: 2, time: "20:00")
            try await party("Late Techno", tokyo, days: 30, time: "23:00")

            // Tonight, in the place's own zone: pick a zone where it is daytime so "in an hour" is
            // tonight (Tokyo, Berlin and New York daytimes cover every hour of the UTC day).
            func isDaytime(_ zone: String) -> Bool {
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = TimeZone(identifier: zone)!
                return (8...20).contains(calendar.component(.hour, from: Date()))
            }
            let daytime: (JSON, String)
            if let zone = [(tokyo, "Asia/Tokyo"), (berlin, "Europe/Berlin")].first(where: { isDaytime($0.1) }) {
                daytime = zone
            } else {
                #expect(isDaytime("America/New_York"))
                let newYork = try await createPlace(
                    client, token: mod, name: "Bowery Ballroom", lat: 40.7204, lon: -73.9934)
                daytime = (newYork, "America/New_York")
            }
            var clock = Calendar(identifier: .gregorian)
            clock.timeZone = TimeZone(identifier: daytime.1)!
            let soon = clock.dateComponents([.hour, .minute], from: Date().addingTimeInterval(3600))
            try await party("Soon", daytime.0, days: 0, time: String(format: "%02d:%02d", soon.hour!, soon.minute!))
            let tonight = try await client.send(.get, "/v1/events?when=tonight")
            let tonightNames = (tonight.json["items"] as? [JSON] ?? []).compactMap { $0["name"] as? String }
            #expect(tonightNames.contains("Soon"))
            #expect(!tonightNames.contains("Jazz Brunch") && !tonightNames.contains("Late Techno"))

            let berlinKey = berlin["cityKey"] as? String ?? ""
            let inBerlin = try await client.send(
                .get, "/v1/events?city=\(berlinKey.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            let berlinNames = (inBerlin.json["items"] as? [JSON] ?? []).compactMap { $0["name"] as? String }
            #expect(Set(berlinNames).subtracting(["Soon"]) == ["Techno Night", "Jazz Brunch"])
            let budget = try await client.send(.get, "/v1/events?maxPrice=30")
            #expect(
                Set((budget.json["items"] as? [JSON] ?? []).compactMap { $0["name"] as? String })
                    == ["Techno Night", "Karaoke Tokyo", "Late Techno", "Soon"])
            let ranked = try await client.send(.get, "/v1/events?q=techno&sort=relevance")
            #expect((ranked.json["items"] as? [JSON])?.count == 2)
            let near = try await client.send(.get, "/v1/events?near=52.5,13.4&radius=20000&sort=distance")
            let nearNames = (near.json["items"] as? [JSON] ?? []).compactMap { $0["name"] as? String }
            #expect(Set(nearNames).subtracting(["Soon"]) == ["Techno Night", "Jazz Brunch"])
            let range =
                localDate(daysFromNow: 1, zone: "Europe/Berlin") + ".."
                + localDate(daysFromNow: 3, zone: "Europe/Berlin")
            let dated = try await client.send(.get, "/v1/events?when=\(range)")
            #expect(
                Set((dated.json["items"] as? [JSON] ?? []).compactMap { $0["name"] as? String }).isSuperset(of: [
                    "Techno Night", "Jazz Brunch",
                ]))
            let paged = try await client.send(.get, "/v1/events?limit=3")
            #expect((paged.json["items"] as? [JSON])?.count == 3)
            let next = paged.json["nextCursor"] as? String ?? ""
            let rest = try await client.send(.get, "/v1/events?limit=3&cursor=\(next)")
            #expect((rest.json["items"] as? [JSON])?.count == 2)
            for bad in [
                "when=someday", "when=2030-01-05..2030-01-01", "sort=distance", "sort=relevance", "maxPrice=-1",
                "cursor=bad",
            ] {
                #expect(try await client.send(.get, "/v1/events?\(bad)").status == .badRequest, "\(bad)")
            }
        }
    }

    @Test(
        "a search finds what runs at its start however long ago it began, and reads no history",
        arguments: Backend.available)
    func runningEvents(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let club = try await createPlace(client, token: mod, name: "Club", lat: 47.37, lon: 8.54)["id"] as! String
            let now = Date()
            let hour = 3600.0
            let shows: [(String, Double, Double?)] = [
                ("old", -400 * 24 * hour, nil), ("ended", -5 * 24 * hour, -4 * 24 * hour),
                ("festival", -3 * 24 * hour, 24 * hour), ("endedTonight", -3 * hour, -hour), ("night", -2 * hour, hour),
                ("noEnd", -2 * hour, nil), ("later", 24 * hour, nil),
            ]
            for (id, start, end) in shows {
                try await insertShow(
                    services, id: id, place: club, start: now.addingTimeInterval(start), performers: [],
                    end: end.map { now.addingTimeInterval($0) })
            }
            var query = EventQuery(from: Clock.millis(now))
            #expect(try await services.events.search(query).map(\.id) == ["festival", "night", "later"])
            // Pages: the long-running event first (it began first), then the rest.
            query.limit = 1
            #expect(try await services.events.search(query).map(\.id) == ["festival"])
            query.limit = 2
            #expect(try await services.events.search(query).map(\.id) == ["festival", "night"])
            let festival = try #require(try await services.events.find(id: "festival"))
            query.after = (festival.startAt, festival.id)
            #expect(try await services.events.search(query).map(\.id) == ["night", "later"])
            #expect(
                try await services.events.popular(EventQuery(from: Clock.millis(now)), favoring: [])
                    == ["festival", "night", "later"])

            // SQLite's plan: each part is an index range, never the history before it.
            guard services.database.kind == .sqlite else { return }
            query.after = nil
            var bounded = query
            bounded.to = Clock.millis(now) + 30 * 86_400_000
            for (query, part, index) in [
                (bounded, EventRepository.WindowPart.recent, "events_start"), (query, .long, "events_long"),
                (bounded, .long, "events_long"),
            ] {
                let plan = try await services.database.sql.raw(
                    ("EXPLAIN QUERY PLAN " as SQLQueryString) + EventRepository.searchSQL(query, part, on: .sqlite)
                ).all().map { try $0.decode(column: "detail", as: String.self) }
                let events = plan.filter { $0.contains("SEARCH e ") || $0.contains("SCAN e") }
                #expect(events.count == 1 && events.allSatisfy { $0.contains("INDEX \(index) (") }, "\(plan)")
                if part == .recent {
                    #expect(events.allSatisfy { $0.contains("start_at>? AND start_at<?") }, "\(plan)")
                }
            }
        }
    }

    @Test("unknown ids, missing tokens and missing parameters answer 404, 401 and 400", arguments: Backend.available)
    func failurePaths(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let token = try await client.signUp("someone").accessToken
            #expect(try await client.send(.get, "/v1/events/nope").status == .notFound)
            #expect(
                try await client.send(.patch, "/v1/events/nope", json: ["name": "X"], token: token).status == .notFound)
            #expect(try await client.send(.post, "/v1/events/nope/cancel", token: token).status == .notFound)
            #expect(try await client.send(.get, "/v1/events/nope/attendees", token: token).status == .notFound)
            let attend = try await client.send(
                .put, "/v1/events/nope/attendance", json: ["status": "going"], token: token)
            #expect(attend.status == .notFound)
            #expect(try await client.send(.delete, "/v1/events/nope/attendance", token: token).status == .notFound)
            let badStatus = try await client.send(
                .put, "/v1/events/nope/attendance", json: ["status": "maybe"], token: token)
            #expect(badStatus.status == .badRequest)
            #expect(try await client.send(.get, "/v1/artists/nope").status == .notFound)
            #expect(try await client.send(.get, "/v1/artists").status == .badRequest)
            #expect(try await client.send(.get, "/v1/artists/suggest").status == .badRequest)
            for path in ["/v1/me/events", "/v1/me/favorites/artists", "/v1/me/feed/favorites"] {
                #expect(try await client.send(.get, path).status == .unauthorized, "\(path)")
            }
            #expect(try await client.send(.put, "/v1/me/favorites/artists/x").status == .unauthorized)
            #expect(try await client.send(.get, "/v1/me/events?cursor=zzz", token: token).status == .badRequest)
        }
    }
}
