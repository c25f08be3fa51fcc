import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TonightCore

@testable import TonightServer

/// Moves sessions `days` into the past (start and end), so they count as played.
func moveIntoPast(_ ids: [String], days: Int, _ services: AppServices) async throws {
    let shift = Int64(days) * 86_400_000
    for id in ids {
        try await services.database.sql.raw(
            "UPDATE events SET start_at = start_at - \(bind: shift), end_at = end_at - \(bind: shift) WHERE id = \(bind: id)"
        ).run()
    }
}

/// Inserts an artist straight into storage.
func insertArtist(_ services: AppServices, id: String, name: String) async throws {
    try await services.database.sql.raw(
        """
        INSERT INTO artists (id, name, name_folded, popularity, favorites_count, created_at, updated_at)
        VALUES (\(bind: id), \(bind: name), \(bind: name.lowercased()), 0, 0, 0, 0)
        """
    ).run()
}

/// Inserts a show at `placeID` starting at `start` (wall clock of `zone`).
func insertShow(
    _ services: AppServices, id: String, place: String, start: Date, zone: String = "Europe/Zurich",
    performers: [String], minPrice: Double? = nil, status: String = "scheduled", end: Date? = nil
) async throws {
    let tz = TimeZone(identifier: zone)!
    let time = LocalClock.localTime(of: start, in: tz)
    try await services.events.insert(
        EventRecord(
            id: id, kind: .show, name: "Show \(id)", placeID: place, startAt: Clock.millis(start),
            endAt: end.map(Clock.millis), localDate: LocalClock.localDate(of: start, in: tz).description,
            localTime: String(format: "%02d:%02d:00", time.hour, time.minute), timeZone: zone,
            status: EventStatus(rawValue: status) ?? .scheduled,
            minPrice: minPrice, createdAt: 0, updatedAt: 0),
        performers: performers)
}

@Suite("Recommendations and alerts", .dropsTestDatabases)
struct RecommendationsRouteTests {
    @Test(
        "session ranking follows the formula, explains itself, and learns from dismissals", arguments: Backend.available
    )
    func sessions(backend: Backend) async throws {
        // Others' changes count at once here (the moment they may wait is RecommendationCacheTests').
        try await withApp(backend, configure: { $0.recommendationStaleSeconds = 0 }) { services, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let cleo = try await client.member("cleo")
            try await client.befriend(ana, ben)
            let women30 = try await quickUsers(services, 1, prefix: "w", gender: "female", birthDate: "1996-06-15")
            let women40 = try await quickUsers(services, 2, prefix: "v", gender: "female", birthDate: "1986-01-01")
            let prefs = try await client.send(
                .put, "/v1/me/preferences",
                json: [
                    "sportsPlayed": ["tennis"], "sportsNotWanted": ["yoga"], "preferredGenders": ["female"],
                    "preferredAgeGroups": ["25-34"], "radiusMeters": 5000,
                ], token: ana.token)
            #expect(prefs.status == .ok, "\(prefs.text)")
            let unknown = try await client.send(
                .put, "/v1/me/preferences", json: ["sportsPlayed": ["chess"]], token: ana.token)
            #expect(unknown.json.fieldErrors == ["sportsPlayed"])

            // History: two tennis sessions at intermediate and one football at beginner, played.
            var past: [String] = []
            for (sport, skill) in [("tennis", "intermediate"), ("tennis", "intermediate"), ("football", "beginner")] {
                past.append(
                    try await client.createSession(ana, sport: sport, skill: skill, spot: (47.37, 8.54, "Old"))["id"]
                        as! String)
            }
            try await moveIntoPast(past, days: 7, services)

            let join = { (user: TestUser, id: String) in
                let r = try await client.send(
                    .put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: user.token)
                #expect(r.status == .ok, "\(r.text)")
            }
            let s1 =
                try await client.createSession(
                    ben, sport: "tennis", skill: "intermediate", spot: (47.3700, 8.5400, "S1"))["id"] as! String
            try await join(women30[0], s1)
            let s2 =
                try await client.createSession(cleo, sport: "football", skill: "any", spot: (47.3710, 8.5400, "S2"))[
                    "id"] as! String
            try await join(women40[0], s2)
            try await join(women40[1], s2)
            let s7 =
                try await client.createSession(
                    cleo, sport: "football", skill: "any", spot: (47.3720, 8.5400, "S7"), time: "09:00")["id"]
                as! String
            _ = try await client.createSession(cleo, sport: "yoga", spot: (47.3700, 8.5400, "Yoga"))
            _ = try await client.createSession(cleo, sport: "tennis", spot: (47.5000, 8.5400, "Far"))
            let full =
                try await client.createSession(cleo, sport: "tennis", spot: (47.3700, 8.5400, "Full"), capacity: 2)[
                    "id"] as! String
            try await join(ben, full)
            let mine =
                try await client.createSession(cleo, sport: "tennis", spot: (47.3700, 8.5400, "Mine"))["id"] as! String
            try await join(ana, mine)

            let response = try await client.send(
                .get, "/v1/me/recommendations/sessions?near=47.37,8.54", token: ana.token)
            #expect(response.status == .ok, "\(response.text)")
            let items = response.json["items"] as? [JSON] ?? []
            #expect(items.compactMap { ($0["event"] as? JSON)?["id"] as? String } == [s1, s2, s7])
            // 5.2·(1 + (2+2)/(2·3)) + 2.3·1 + 1.2·1 + 1.9·1 + 1.5·(3/3: all played at 18:00) = 15.57
            #expect(items.first?["score"] as? Double == 15.57)
            // 5.2·(1/6) + 1.2·2 + 1.5 = 4.77; and 5.2·(1/6) = 0.87 (at 09:00, far from the hour played)
            #expect(items.dropFirst().first?["score"] as? Double == 4.77)
            #expect(items.last?["score"] as? Double == 0.87)
            #expect(
                items.first?["reasons"] as? [String] == [
                    "You have played tennis 2 times.", "ben is playing.", "1 player is in the age groups you prefer.",
                    "You have played it at intermediate level 2 times.", "You have played 3 times around 18:00.",
                    "1 player is of the genders you prefer.", "0 m away.",
                ])
            #expect(!((items.last?["why"] as? [JSON]) ?? []).contains { $0["kind"] as? String == "time" })
            // The same reasons with what matched, for clients to word their way.
            let why = items.first?["why"] as? [JSON] ?? []
            #expect(
                why.compactMap { $0["kind"] as? String } == [
                    "sport", "friends", "ageGroups", "level", "time", "genders", "distance",
                ])
            #expect(why[4]["hour"] as? Int == 18 && why[4]["count"] as? Int == 3)
            #expect(why.first?["sport"] as? String == "tennis" && why.first?["count"] as? Int == 2)
            #expect(((why[1]["friends"] as? [JSON])?.first)?["username"] as? String == "ben")
            #expect(why[3]["skill"] as? String == "intermediate" && why.last?["distanceMeters"] as? Double == 0)

            // Dismissing a football session for its sport halves football's weight; it is gone itself.
            let dismissed = try await client.send(
                .post, "/v1/me/recommendations/dismissals", json: ["eventId": s2, "reason": "sport"], token: ana.token)
            #expect(dismissed.status == .noContent)
            let after = try await client.send(.get, "/v1/me/recommendations/sessions?near=47.37,8.54", token: ana.token)
            let rest = after.json["items"] as? [JSON] ?? []
            #expect(rest.compactMap { ($0["event"] as? JSON)?["id"] as? String } == [s1, s7])
            #expect(rest.last?["score"] as? Double == 0.43)
            // A player's profile change reaches the sessions they play in.
            let changed = try await client.send(.patch, "/v1/me", json: ["gender": "male"], token: women30[0].token)
            #expect(changed.status == .ok, "\(changed.text)")
            let again = try await client.send(.get, "/v1/me/recommendations/sessions?near=47.37,8.54", token: ana.token)
            #expect((again.json["items"] as? [JSON])?.first?["score"] as? Double == 14.37)
            let missing = try await client.send(
                .post, "/v1/me/recommendations/dismissals", json: ["eventId": "nope"], token: ana.token)
            #expect(missing.status == .notFound)
            let noCenter = try await client.send(.get, "/v1/me/recommendations/sessions", token: ana.token)
            #expect(noCenter.json.fieldErrors == ["near"])
        }
    }

    @Test(
        "explore cards: similar artists' events within budget, dismiss and refresh, cold start",
        arguments: Backend.available)
    func events(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let club =
                try await createPlace(client, token: mod, name: "Club", lat: 47.3700, lon: 8.5400)["id"] as! String
            let far = try await createPlace(client, token: mod, name: "Far", lat: 47.9000, lon: 8.5400)["id"] as! String
            for (id, name) in [("a", "Artist A"), ("b", "Artist B"), ("c", "Artist C"), ("d", "Artist D")] {
                try await insertArtist(services, id: id, name: name)
            }
            for (from, to, score) in [("a", "b", 0.9), ("a", "c", 0.5), ("d", "a", 0.7)] {
                try await services.database.sql.raw(
                    "INSERT INTO affinity (artist_id, similar_id, score) VALUES (\(bind: from), \(bind: to), \(bind: score))"
                ).run()
            }
            // 30 hours on: never tonight's (which ends at 06:00 local, at most 24 hours away), even
            // when the run crosses 06:00 between these inserts and the cold-start read below.
            let day = Date().addingTimeInterval(30 * 3600)
            try await insertShow(services, id: "e1", place: club, start: day, performers: ["b"])
            try await insertShow(
                services, id: "e2", place: club, start: day.addingTimeInterval(3600), performers: ["c", "d"])
            try await insertShow(services, id: "e3", place: club, start: day, performers: ["d"])
            try await insertShow(services, id: "e4", place: far, start: day, performers: ["b"])
            try await insertShow(services, id: "e5", place: club, start: day, performers: ["c"], minPrice: 100)
            try await insertShow(services, id: "e6", place: club, start: day, performers: ["b"], status: "cancelled")
            try await insertShow(
                services, id: "e7", place: club, start: day.addingTimeInterval(40 * 86_400), performers: ["b"])

            let ana = try await client.member("ana")
            _ = try await client.send(.put, "/v1/me/preferences", json: ["budget": 50], token: ana.token)
            #expect(try await client.send(.put, "/v1/me/favorites/artists/a", token: ana.token).status == .noContent)
            let path = "/v1/me/recommendations/events?near=47.37,8.54"
            let cards = try await client.send(.get, path, token: ana.token)
            #expect(cards.status == .ok, "\(cards.text)")
            let items = cards.json["items"] as? [JSON] ?? []
            #expect(items.compactMap { ($0["event"] as? JSON)?["id"] as? String } == ["e1", "e2"])
            #expect(items.compactMap { $0["reason"] as? String } == ["Similar to Artist A", "Similar to Artist A"])
            #expect(items.compactMap { $0["score"] as? Double } == [0.9, 0.5])
            #expect(cards.json["coldStart"] as? Bool == false)

            // Following takes a card away; so does a swipe; refresh brings swiped ones back.
            _ = try await client.send(.put, "/v1/events/e1/attendance", json: ["status": "following"], token: ana.token)
            _ = try await client.send(
                .post, "/v1/me/recommendations/dismissals", json: ["eventId": "e2"], token: ana.token)
            let empty = try await client.send(.get, path, token: ana.token)
            #expect((empty.json["items"] as? [JSON])?.isEmpty == true)
            let refreshed = try await client.send(.get, path + "&refresh=true", token: ana.token)
            #expect(
                (refreshed.json["items"] as? [JSON])?.compactMap { ($0["event"] as? JSON)?["id"] as? String } == ["e2"])
            #expect(refreshed.json["refreshed"] as? Bool == true)

            // Cold start: the most attended events nearby tonight. These two are running now, so they
            // are tonight's at any hour (one starting later would not be just before 06:00 local).
            let began = Date().addingTimeInterval(-600)
            let ends = Date().addingTimeInterval(3 * 3600)
            try await insertShow(services, id: "t1", place: club, start: began, performers: [], end: ends)
            try await insertShow(
                services, id: "t2", place: club, start: began.addingTimeInterval(60), performers: [], end: ends)
            let fans = try await quickUsers(services, 2, prefix: "f")
            for fan in fans {
                _ = try await client.send(.put, "/v1/events/t2/attendance", json: ["status": "going"], token: fan.token)
            }
            let bob = try await client.member("bob")
            let cold = try await client.send(.get, path, token: bob.token)
            #expect(cold.json["coldStart"] as? Bool == true)
            #expect(
                (cold.json["items"] as? [JSON])?.compactMap { ($0["event"] as? JSON)?["id"] as? String } == [
                    "t2", "t1",
                ])
            #expect((cold.json["items"] as? [JSON])?.first?["reason"] as? String == "Popular tonight nearby")

            // The database ranks a broad square; when the first ranked rows fail the exact circle,
            // a longer ranking is read. These 41 started earlier, so they rank before t1 (both
            // unattended), at 26 km: inside the square of cells, outside the 25 km circle.
            let corner = try await createPlace(client, token: mod, name: "Corner", lat: 47.5499, lon: 8.7657)
            for index in 0..<41 {
                try await insertShow(
                    services, id: "c\(index)", place: corner["id"] as! String, start: began.addingTimeInterval(-60),
                    performers: [], end: ends)
            }
            let two = try await client.send(.get, path + "&limit=2", token: bob.token)
            #expect(
                (two.json["items"] as? [JSON])?.compactMap { ($0["event"] as? JSON)?["id"] as? String } == ["t2", "t1"])
        }
    }

    @Test("invitations work for sessions and respect the capacity", arguments: Backend.available)
    func invitations(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let cleo = try await client.member("cleo")
            try await client.befriend(ana, ben)
            try await client.befriend(ana, cleo)
            let id = try await client.createSession(ana, spot: (47.37, 8.54, "Pitch"), capacity: 2)["id"] as! String
            let sent = try await client.send(
                .post, "/v1/events/\(id)/invitations", json: ["userIds": [ben.id, cleo.id]], token: ana.token)
            #expect(sent.status == .ok || sent.status == .created, "\(sent.text)")
            func accept(_ user: TestUser) async throws -> TestResponse {
                let list = try await client.send(.get, "/v1/me/invitations", token: user.token)
                let invitation = (list.json["items"] as? [JSON])?.first?["id"] as? String ?? ""
                return try await client.send(.post, "/v1/me/invitations/\(invitation)/accept", token: user.token)
            }
            #expect(try await accept(ben).status == .ok)
            let late = try await accept(cleo)
            #expect(late.status == .conflict)
            #expect(late.json["code"] as? String == "session_full")
            #expect(try await services.events.find(id: id)?.goingCount == 2)
        }
    }

    @Test("reminders go out once, survive a restart, and come again when the start moves", arguments: Backend.available)
    func reminders(backend: Backend) async throws {
        let config = try await testConfig(backend)
        let first = try await AppServices.make(config: config)
        let app = try await buildApplication(config, services: first)
        // The first process: a session 45 minutes away is not due with a 30-minute lead.
        let now = Clock.millis()
        let (id, players) = try await app.test(.router) { client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let id = try await client.createSession(ana, spot: (47.37, 8.54, "Pitch"), time: "18:00")["id"] as! String
            _ = try await client.send(.put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: ben.token)
            try await first.database.sql.raw(
                "UPDATE events SET start_at = \(bind: now + 45 * 60_000) WHERE id = \(bind: id)"
            ).run()
            let short = SessionReminder(
                sessions: first.sessions, notifier: first.notifier, lead: .seconds(1800), interval: .seconds(30),
                logger: first.logger)
            #expect(try await short.runOnce(now: now) == 0)
            return (id, [ana, ben])
        }
        // A new process with the usual 60 minutes sends it, once.
        let restarted = try await AppServices.make(config: config)
        #expect(try await restarted.reminder().runOnce(now: now) == 1)
        #expect(try await restarted.reminder().runOnce(now: now + 60_000) == 0)
        let rows = try await restarted.database.sql.raw(
            "SELECT user_id, text FROM notifications WHERE kind = 'sessionReminder'"
        ).all()
        #expect(Set(try rows.map { try $0.decode(column: "user_id", as: String.self) }) == Set(players.map(\.id)))
        #expect(try rows.first?.decode(column: "text", as: String.self).contains("(in 45 minutes)") == true)
        // A new start is reminded again.
        let session = try #require(try await restarted.events.find(id: id))
        var moved = session
        moved.startAt = now + 50 * 60_000
        try await restarted.events.update(moved, performers: nil, changes: [])
        #expect(try await restarted.reminder().runOnce(now: now + 120_000) == 1)
        #expect(try await rowCount("notifications", in: restarted) == 4)
        try await restarted.database.shutdown()
    }

    @Test(
        "the afternoon digest: once a day in the user's zone, with events and sessions; opt-out",
        arguments: Backend.available)
    func digest(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let zurich = TimeZone(identifier: "Europe/Zurich")!
            let today = LocalClock.localDate(of: Date(), in: zurich)
            let at = { (date: CalendarDate, hour: Int, minute: Int) in
                LocalClock.instant(date: date, time: LocalTime(hour: hour, minute: minute)!, timeZone: zurich)
            }
            let mod = try await moderatorToken(services, client)
            let club =
                try await createPlace(client, token: mod, name: "Club", lat: 47.3769, lon: 8.5417)["id"] as! String
            try await insertArtist(services, id: "a", name: "Artist A")
            try await insertArtist(services, id: "b", name: "Artist B")
            try await services.database.sql.raw(
                "INSERT INTO affinity (artist_id, similar_id, score) VALUES ('a', 'b', 0.8)"
            ).run()
            try await insertShow(services, id: "late", place: club, start: at(today, 21, 30), performers: ["b"])

            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            for user in [ana, ben] {
                _ = try await client.send(.patch, "/v1/me", json: ["homeCity": "Zürich"], token: user.token)
                _ = try await client.send(.put, "/v1/me/favorites/artists/a", token: user.token)
                _ = try await client.send(
                    .put, "/v1/me/preferences", json: ["sportsPlayed": ["tennis"]], token: user.token)
            }
            _ = try await client.send(
                .put, "/v1/me/notification-settings", json: ["muted": ["digest"]], token: ben.token)
            let cleo = try await client.member("cleo")
            _ = try await client.createSession(
                cleo, sport: "tennis", spot: (47.3780, 8.5400, "Court"), date: today.adding(days: 2).description,
                time: "18:30")

            let digest = services.digest(interval: .seconds(60))
            #expect(try await digest.runOnce(now: at(today, 15, 59)) == 0)
            #expect(try await digest.runOnce(now: at(today, 17, 0)) == 1)
            #expect(try await digest.runOnce(now: at(today, 18, 0)) == 0)
            #expect(try await client.notificationKinds(ben).isEmpty)
            let inbox = try await client.send(.get, "/v1/notifications", token: ana.token)
            let text = (inbox.json["items"] as? [JSON])?.first?["text"] as? String ?? ""
            #expect(text.hasPrefix("Tonight near you: Show late at Club 21:30."), "\(text)")
            #expect(text.contains("Sessions for you: Tennis (intermediate) at Court"), "\(text)")
            // The next afternoon brings the next one.
            #expect(try await digest.runOnce(now: at(today.adding(days: 1), 16, 30)) == 1)
            #expect(try await client.notificationKinds(ana) == ["digest", "digest"])
        }
    }

    @Test("instances racing for the same reminders and digests send each once", arguments: Backend.available)
    func racingClaims(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let zurich = TimeZone(identifier: "Europe/Zurich")!
            let ana = try await client.member("ana")
            let players = try await quickUsers(services, 5, prefix: "p")
            let id =
                try await client.createSession(ana, spot: (47.3769, 8.5417, "Court"), capacity: 10)["id"] as! String
            for player in players {
                _ = try await client.send(
                    .put, "/v1/events/\(id)/attendance", json: ["status": "going"], token: player.token)
            }
            let now = Clock.millis()
            try await services.database.sql.raw(
                "UPDATE events SET start_at = \(bind: now + 30 * 60_000) WHERE id = \(bind: id)"
            ).run()
            // Four "instances" remind at once: six players, six reminders.
            let sent = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await services.reminder().runOnce(now: now) } }
                return try await group.reduce(0, +)
            }
            #expect(sent >= 1)
            let reminders = try await services.database.sql.raw(
                "SELECT COUNT(*) AS n FROM notifications WHERE kind = 'sessionReminder'"
            ).first()?.decode(column: "n", as: Int.self)
            #expect(reminders == 6)

            // Four digests at once for one user: one digest.
            let bob = try await client.member("bob")
            _ = try await client.send(.patch, "/v1/me", json: ["homeCity": "Zürich"], token: bob.token)
            _ = try await client.send(
                .put, "/v1/me/preferences", json: ["sportsPlayed": ["basketball"]], token: bob.token)
            let today = LocalClock.localDate(of: Date(), in: zurich)
            _ = try await client.createSession(
                ana, spot: (47.3769, 8.5417, "Court"), date: today.adding(days: 2).description, capacity: 10)
            let afternoon = LocalClock.instant(date: today, time: LocalTime(hour: 17, minute: 0)!, timeZone: zurich)
            let digests = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await services.digest(interval: .seconds(60)).runOnce(now: afternoon) }
                }
                return try await group.reduce(0, +)
            }
            #expect(digests == 1)
            #expect(try await client.notificationKinds(bob) == ["digest"])
        }
    }
}
