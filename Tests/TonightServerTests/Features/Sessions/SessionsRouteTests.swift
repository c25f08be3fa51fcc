import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TonightCore

@testable import TonightServer

/// Users written straight into storage with tokens (signing up many over HTTP would test bcrypt).
func quickUsers(
    _ services: AppServices, _ count: Int, prefix: String, gender: String? = nil, birthDate: String? = nil
) async throws -> [TestUser] {
    var users: [TestUser] = []
    for index in 0..<count {
        let id = Identifier.make()
        try await services.database.sql.raw(
            """
            INSERT INTO users (id, is_anonymous, username, username_key, role, gender, birth_date, created_at, updated_at)
            VALUES (\(bind: id), FALSE, \(bind: "\(prefix)\(index)"), \(bind: "\(prefix)\(index)"), 'user',
                \(bind: gender), \(bind: birthDate), 0, 0)
            """
        ).run()
        let token = try await services.tokens.accessToken(
            for: Principal(userID: id, loginID: "s", role: .user, isAnonymous: false))
        users.append(TestUser(id: id, token: token))
    }
    return users
}

extension TestClientProtocol {
    /// Creates a session and returns its JSON.
    func createSession(
        _ user: TestUser, sport: String = "basketball", skill: String = "intermediate", place: String? = nil,
        spot: (Double, Double, String)? = nil, date: String = localDate(daysFromNow: 2, zone: "Europe/Zurich"),
        time: String = "18:00", capacity: Int = 10, minutes: Int = 90
    ) async throws -> JSON {
        var body: JSON = [
            "sport": sport, "skill": skill, "localDate": date, "localTime": time, "durationMinutes": minutes,
            "capacity": capacity,
        ]
        if let place { body["placeId"] = place }
        if let spot { body["spot"] = ["location": ["lat": spot.0, "lon": spot.1], "label": spot.2] }
        let response = try await send(.post, "/v1/sessions", json: body, token: user.token)
        #expect(response.status == .created, "\(response.text)")
        return response.json
    }

    /// Ids of the events in a page at `path`.
    func eventIDs(_ path: String, token: String? = nil) async throws -> [String] {
        let response = try await send(.get, path, token: token)
        #expect(response.status == .ok, "\(path): \(response.text)")
        return (response.json["items"] as? [JSON] ?? []).compactMap { $0["id"] as? String }
    }
}

@Suite("Sports sessions")
struct SessionsRouteTests {
    @Test("the catalogue has at least 40 sports; admins add more; slugs are unique")
    func catalogue() async throws {
        try await withApp(.sqlite) { services, client in
            let list = try await client.send(.get, "/v1/sports")
            let items = list.json["items"] as? [JSON] ?? []
            #expect(items.count >= 40)
            #expect(items.contains { $0["slug"] as? String == "basketball" && $0["builtIn"] as? Bool == true })
            let user = try await client.member("player")
            let denied = try await client.send(
                .post, "/v1/sports", json: ["slug": "kabaddi", "name": "Kabaddi"], token: user.token)
            #expect(denied.status == .forbidden)
            let admin = try await adminToken(services, client)
            let added = try await client.send(
                .post, "/v1/sports", json: ["slug": "kabaddi", "name": "Kabaddi", "icon": "figure.run"], token: admin)
            #expect(added.status == .created, "\(added.text)")
            let again = try await client.send(
                .post, "/v1/sports", json: ["slug": "tennis", "name": "Tennis 2"], token: admin)
            #expect(again.status == .conflict)
            let bad = try await client.send(.post, "/v1/sports", json: ["slug": "Bad Slug", "name": ""], token: admin)
            #expect(Set(bad.json.fieldErrors) == ["slug", "name"])
            let session = try await client.createSession(user, sport: "kabaddi", spot: (47.37, 8.54, "Park"))
            #expect((session["session"] as? JSON)?["sport"] as? JSON != nil)
            #expect(((session["session"] as? JSON)?["sport"] as? JSON)?["name"] as? String == "Kabaddi")
        }
    }

    @Test(
        "create at a spot or a place; the creator plays; validation lists every bad field", arguments: Backend.available
    )
    func create(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let ana = try await client.member("ana")
            let date = localDate(daysFromNow: 3, zone: "Europe/Zurich")
            let created = try await client.createSession(
                ana, spot: (47.3769, 8.5417, "Court 3, Bäckeranlage"), date: date, capacity: 6)
            let session = try #require(created["session"] as? JSON)
            #expect(created["kind"] as? String == "session")
            #expect(created["name"] as? String == "Basketball (intermediate)")
            #expect(session["capacity"] as? Int == 6)
            #expect(session["occupied"] as? Int == 1)
            #expect(session["openSpots"] as? Int == 5)
            #expect(session["durationMinutes"] as? Int == 90)
            #expect(created["myStatus"] as? String == "going")
            let place = try #require(created["place"] as? JSON)
            #expect(place["timeZone"] as? String == "Europe/Zurich")
            #expect(place["name"] as? String == "Court 3, Bäckeranlage")
            #expect(
                place["appleMapsURL"] as? String
                    == "https://maps.apple.com/?ll=47.376900,8.541700&q=Court%203%2C%20B%C3%A4ckeranlage")
            #expect(
                place["googleMapsURL"] as? String
                    == "https://www.google.com/maps/search/?api=1&query=47.376900,8.541700")
            // The same spot again is the same place; spots stay out of the venue list.
            let second = try await client.createSession(ana, spot: (47.3769, 8.5417, "court 3, bäckeranlage"))
            #expect((second["place"] as? JSON)?["id"] as? String == place["id"] as? String)
            let venues = try await client.send(.get, "/v1/places?near=47.3769,8.5417&radius=500")
            #expect((venues.json["items"] as? [JSON])?.isEmpty == true)
            // The start is 18:00 on the spot's clock.
            #expect((created["localTime"] as? String) == "18:00")

            let players = try await client.send(
                .get, "/v1/sessions/\(created["id"] as? String ?? "")/players", token: ana.token)
            #expect((players.json["items"] as? [JSON])?.compactMap { $0["id"] as? String } == [ana.id])

            let rowsBefore = try await rowCount("events", in: services)
            let placesBefore = try await rowCount("places", in: services)
            let bad = try await client.send(
                .post, "/v1/sessions",
                json: [
                    "sport": "quidditch", "skill": "any", "localDate": "2031-02-30", "localTime": "18:00",
                    "durationMinutes": 5, "capacity": 1,
                    "spot": ["location": ["lat": 91, "lon": 8], "label": "Nowhere"],
                ], token: ana.token)
            #expect(bad.status == .badRequest)
            #expect(
                Set(bad.json.fieldErrors) == ["sport", "capacity", "durationMinutes", "spot.location.lat", "localDate"])
            let neither = try await client.send(
                .post, "/v1/sessions",
                json: [
                    "sport": "tennis", "skill": "any", "localDate": date, "localTime": "18:00", "durationMinutes": 60,
                    "capacity": 4,
                ], token: ana.token)
            #expect(neither.json.fieldErrors == ["placeId"])
            #expect(try await rowCount("events", in: services) == rowsBefore)
            #expect(try await rowCount("places", in: services) == placesBefore)
        }
    }

    @Test("100 users race for 10 seats: exactly 10 go, the rest get 409", arguments: Backend.available)
    func capacityRace(backend: Backend) async throws {
        // Patience for the write gate: under the whole suite on two cores, 100 writers queued on
        // SQLite's gate took longer than the default busy timeout (15 of them got 503, not 409).
        let configure: (inout AppConfig) -> Void = {
            $0.idleTimeout = 120
            $0.databaseBusyTimeoutMilliseconds = 60_000
        }
        try await withLiveApp(backend, configure: configure) { services, client in
            let host = try await client.member("host")
            let created = try await client.createSession(host, spot: (47.37, 8.54, "Pitch"), capacity: 11)
            let id = created["id"] as? String ?? ""
            let racers = try await quickUsers(services, 100, prefix: "r")
            let statuses = try await race(port: try #require(client.port), 100) { index, connection in
                try await connection.send(
                    .put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: racers[index].token)
            }
            #expect(statuses.filter { $0 == .ok }.count == 10)
            #expect(statuses.filter { $0 == .conflict }.count == 90)
            let going = try await services.database.sql.raw(
                "SELECT COUNT(*) AS n FROM attendance WHERE event_id = \(bind: id) AND status = 'going'"
            ).first()?.decode(column: "n", as: Int.self)
            #expect(going == 11)
            let stored = try #require(try await services.events.find(id: id))
            #expect(stored.goingCount == 11)
            // Full: a clear conflict; leaving frees the seat for the next one.
            let full = try await client.send(
                .put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: racers[99].token)
            let winners = try await services.database.sql.raw(
                "SELECT user_id FROM attendance WHERE event_id = \(bind: id) AND user_id <> \(bind: host.id)"
            ).all().map { try $0.decode(column: "user_id", as: String.self) }
            let loser = try #require(racers.first { !winners.contains($0.id) })
            #expect(full.json["code"] as? String == "session_full" || winners.contains(racers[99].id))
            let winner = try #require(racers.first { winners.contains($0.id) })
            #expect(
                try await client.send(.delete, "/v1/events/\(id)/attendance", token: winner.token).status == .noContent)
            let joined = try await client.send(
                .put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: loser.token)
            #expect(joined.status == .ok)
            #expect((joined.json["counts"] as? JSON)?["going"] as? Int == 11)
            // The capacity cannot drop below the players going.
            let shrink = try await client.send(.patch, "/v1/sessions/\(id)", json: ["capacity": 5], token: host.token)
            #expect(shrink.json.fieldErrors == ["capacity"])
        }
    }

    @Test(
        "search filters by sport, skill, dates, time of day, open spots, friends, and sorts by distance",
        arguments: Backend.available)
    func search(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let cleo = try await client.member("cleo")
            try await client.befriend(ana, ben)
            let day = localDate(daysFromNow: 2, zone: "Europe/Zurich")
            let later = localDate(daysFromNow: 5, zone: "Europe/Zurich")
            let near = try await client.createSession(
                ben, sport: "tennis", skill: "beginner", spot: (47.3770, 8.5400, "Near"), date: day, time: "08:00",
                capacity: 2)
            let far = try await client.createSession(
                cleo, sport: "tennis", skill: "advanced", spot: (47.4000, 8.5400, "Far"), date: later, time: "23:00",
                capacity: 2)
            let other = try await client.createSession(
                cleo, sport: "football", spot: (47.3800, 8.5400, "Mid"), date: day, time: "19:00", capacity: 2)
            let (n, f, o) = (near["id"] as! String, far["id"] as! String, other["id"] as! String)
            // Fill the football session.
            _ = try await client.send(.put, "/v1/events/\(o)/attendance", json: ["status": "going"], token: ana.token)

            #expect(try await client.eventIDs("/v1/sessions") == [n, o, f])
            #expect(try await client.eventIDs("/v1/sessions?sport=tennis") == [n, f])
            #expect(try await client.eventIDs("/v1/sessions?sport=tennis,football&skill=advanced") == [f])
            #expect(try await client.eventIDs("/v1/sessions?from=\(later)&to=\(later)") == [f])
            #expect(try await client.eventIDs("/v1/sessions?timeOfDay=morning") == [n])
            #expect(try await client.eventIDs("/v1/sessions?timeOfDay=night") == [f])
            #expect(try await client.eventIDs("/v1/sessions?openOnly=true") == [n, f])
            #expect(try await client.eventIDs("/v1/sessions?withFriends=true", token: ana.token) == [n])
            #expect(
                try await client.eventIDs("/v1/sessions?near=47.4000,8.5400&radius=5000&sort=distance") == [f, o, n])
            #expect(try await client.eventIDs("/v1/sessions?near=47.3770,8.5400&radius=300") == [n])
            #expect(try await client.eventIDs("/v1/sessions?bbox=8.53,47.39,8.55,47.41") == [f])
            let bad = try await client.send(.get, "/v1/sessions?sport=Not%20A%20Slug&from=2030-13-01&sort=distance")
            #expect(Set(bad.json.fieldErrors) == ["sport", "from", "sort"])
            // Events of other kinds stay out.
            let parties = try await client.eventIDs("/v1/events?kind=session")
            #expect(Set(parties) == [n, o, f])
        }
    }

    @Test("deleting a session tells every other player; only the creator may", arguments: Backend.available)
    func delete(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let created = try await client.createSession(ana, spot: (47.37, 8.54, "Pitch"), time: "18:30")
            let id = created["id"] as? String ?? ""
            _ = try await client.send(.put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: ben.token)
            #expect(try await client.send(.delete, "/v1/sessions/\(id)", token: ben.token).status == .forbidden)
            #expect(try await client.send(.delete, "/v1/sessions/\(id)", token: ana.token).status == .noContent)
            #expect(try await client.send(.get, "/v1/events/\(id)").status == .notFound)
            #expect(try await client.notificationKinds(ben) == ["sessionDeleted"])
            #expect(try await client.notificationKinds(ana).isEmpty)
            let text = try await client.send(.get, "/v1/notifications", token: ben.token).json["items"] as? [JSON]
            #expect((text?.first?["text"] as? String)?.contains("at 18:30 was deleted") == true)
            #expect(try await rowCount("attendance", in: services) == 0)
        }
    }

    @Test("calendar by day in the caller's zone, and a subscribable iCalendar feed", arguments: Backend.available)
    func calendar(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let ana = try await client.member("ana")
            let day = localDate(daysFromNow: 2, zone: "Europe/Zurich")
            // 23:30 in Zurich is the next day in Tokyo.
            let late = try await client.createSession(
                ana, spot: (47.37, 8.54, "Pitch; north, side"), date: day, time: "23:30")
            let early = try await client.createSession(
                ana, sport: "yoga", spot: (47.37, 8.54, "Park"), date: day, time: "07:00")
            let zurich = try await client.send(.get, "/v1/me/calendar?timeZone=Europe/Zurich", token: ana.token)
            let days = zurich.json["days"] as? [JSON] ?? []
            #expect(days.count == 1)
            #expect(days.first?["date"] as? String == day)
            #expect(
                (days.first?["items"] as? [JSON])?.compactMap { $0["id"] as? String } == [
                    early["id"] as? String ?? "", late["id"] as? String ?? "",
                ])
            let tokyo = try await client.send(.get, "/v1/me/calendar?timeZone=Asia/Tokyo", token: ana.token)
            #expect((tokyo.json["days"] as? [JSON])?.count == 2)
            let bad = try await client.send(
                .get, "/v1/me/calendar?timeZone=Mars/Base&from=2030-01-10&to=2030-01-01", token: ana.token)
            #expect(Set(bad.json.fieldErrors) == ["timeZone", "to"])

            let subscription = try await client.send(.post, "/v1/me/calendar/subscription", token: ana.token)
            let url = try #require(subscription.json["url"] as? String)
            let feed = try await client.send(.get, url)
            #expect(feed.status == .ok)
            #expect(feed.headers[.contentType]?.hasPrefix("text/calendar") == true)
            #expect(feed.text.hasPrefix("BEGIN:VCALENDAR\r\n"))
            #expect(feed.text.components(separatedBy: "BEGIN:VEVENT").count == 3)
            #expect(feed.text.contains("LOCATION:Pitch\\; north\\, side"))
            #expect(feed.text.contains("UID:\(late["id"] as? String ?? "")@tonight"))
            // A new URL replaces the old one.
            let renewed = try await client.send(.post, "/v1/me/calendar/subscription", token: ana.token)
            #expect(try await client.send(.get, url).status == .notFound)
            #expect(try await client.send(.get, renewed.json["url"] as? String ?? "").status == .ok)
        }
    }

    @Test(
        "statistics count started sessions per sport, hours, distinct playmates and friends",
        arguments: Backend.available)
    func stats(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let cleo = try await client.member("cleo")
            try await client.befriend(ana, ben)
            let a = try await client.createSession(ana, sport: "tennis", spot: (47.37, 8.54, "A"), minutes: 90)
            let b = try await client.createSession(ben, sport: "tennis", spot: (47.37, 8.54, "B"), minutes: 60)
            let c = try await client.createSession(cleo, sport: "yoga", spot: (47.37, 8.54, "C"), minutes: 45)
            let future = try await client.createSession(cleo, sport: "yoga", spot: (47.37, 8.54, "D"), minutes: 45)
            for session in [b, c, future] {
                _ = try await client.send(
                    .put, "/v1/events/\(session["id"] as? String ?? "")/attendance", json: ["status": "going"],
                    token: ana.token)
            }
            _ = try await client.send(
                .put, "/v1/events/\(a["id"] as? String ?? "")/attendance", json: ["status": "going"], token: ben.token)
            // Move three of them into the past.
            for session in [a, b, c] {
                let id = session["id"] as? String ?? ""
                try await services.database.sql.raw(
                    "UPDATE events SET start_at = start_at - \(bind: Int64(10 * 86_400_000)), end_at = end_at - \(bind: Int64(10 * 86_400_000)) WHERE id = \(bind: id)"
                ).run()
            }
            let stats = try await client.send(.get, "/v1/users/ana/stats", token: ben.token)
            #expect(stats.status == .ok, "\(stats.text)")
            #expect(stats.json["sessionsPlayed"] as? Int == 3)
            #expect(stats.json["minutesPlayed"] as? Int == 195)
            #expect(stats.json["hoursPlayed"] as? Double == 3.3)
            #expect(stats.json["distinctPlaymates"] as? Int == 2)
            #expect(stats.json["friends"] as? Int == 1)
            let sports = stats.json["sports"] as? [JSON] ?? []
            #expect(sports.compactMap { ($0["sport"] as? JSON)?["slug"] as? String } == ["tennis", "yoga"])
            #expect(sports.first?["sessions"] as? Int == 2)
            #expect(sports.first?["minutes"] as? Int == 150)
        }
    }

    @Test(
        "failure paths: no such session or user, not the creator, anonymous devices, bad input",
        arguments: Backend.available)
    func failures(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let place = try await createPlace(client, token: mod, name: "Hall", lat: 47.37, lon: 8.54)["id"] as! String
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let party = try await client.send(
                .post, "/v1/events",
                json: ["name": "Party", "placeId": place, "localDate": "2031-01-15", "localTime": "21:00"],
                token: ana.token)
            let partyID = party.json["id"] as? String ?? ""
            // A party is not a session: the session routes do not see it.
            #expect(
                try await client.send(.get, "/v1/sessions/\(partyID)/players", token: ana.token).status == .notFound)
            #expect(
                try await client.send(.patch, "/v1/sessions/\(partyID)", json: ["capacity": 4], token: ana.token).status
                    == .notFound)
            #expect(try await client.send(.delete, "/v1/sessions/\(partyID)", token: ana.token).status == .notFound)
            #expect(try await client.send(.get, "/v1/sessions/nope/players", token: ana.token).status == .notFound)
            let session = try await client.createSession(ana, place: place)
            let id = session["id"] as? String ?? ""
            let foreign = try await client.send(.patch, "/v1/sessions/\(id)", json: ["capacity": 4], token: ben.token)
            #expect(foreign.status == .forbidden)
            let both = try await client.send(
                .patch, "/v1/sessions/\(id)",
                json: ["placeId": place, "spot": ["location": ["lat": 47.37, "lon": 8.54], "label": "X"]],
                token: ana.token)
            #expect(both.json.fieldErrors == ["spot"])
            #expect(try await client.send(.get, "/v1/users/nobody/stats", token: ana.token).status == .notFound)
            #expect(try await client.send(.get, "/v1/users/ana/stats").status == .unauthorized)
            let device = try await client.send(.post, "/v1/auth/anonymous").json.accessToken
            let denied = try await client.send(
                .post, "/v1/sessions",
                json: [
                    "sport": "tennis", "skill": "any", "localDate": "2031-01-15", "localTime": "18:00",
                    "durationMinutes": 60, "capacity": 4, "placeId": place,
                ], token: device)
            #expect(denied.status == .forbidden)
            #expect(try await client.send(.post, "/v1/me/calendar/subscription", token: device).status == .forbidden)
            let badSearch = try await client.send(.get, "/v1/sessions?near=91,0&bbox=1,2,3")
            #expect(badSearch.status == .badRequest)
            #expect(Set(badSearch.json.fieldErrors) == ["near", "bbox"])
        }
    }

    @Test(
        "a moderator deleting a session tells its creator too, and a player the creator blocked",
        arguments: Backend.available)
    func deleteTellsEveryone(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let id = try await client.createSession(ana, spot: (47.37, 8.54, "Pitch"))["id"] as! String
            _ = try await client.send(.put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: ben.token)
            #expect(try await client.send(.put, "/v1/me/blocks/\(ben.id)", token: ana.token).status == .noContent)
            #expect(try await client.send(.delete, "/v1/sessions/\(id)", token: mod).status == .noContent)
            #expect(try await client.notificationKinds(ana) == ["sessionDeleted"])
            #expect(try await client.notificationKinds(ben) == ["sessionDeleted"])
        }
    }
}
