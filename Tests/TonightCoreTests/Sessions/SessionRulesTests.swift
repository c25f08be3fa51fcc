import Foundation
import Testing

@testable import TonightCore

@Suite("Sessions: ranking, affinity, digests, calendars")
struct SessionRulesTests {
    let center = GeoPoint(latitude: 47.37, longitude: 8.54)

    func candidate(
        _ id: String, sport: String = "tennis", skill: String = "any", hour: Int = 18, north: Double = 0,
        friends: Int = 0, genders: Int = 0, ages: Int = 0, avoided: Int = 0
    ) -> SessionCandidate {
        let location = GeoPoint(latitude: 47.37 + north, longitude: 8.54)
        return SessionCandidate(
            id: id, sport: sport, skill: skill, startAt: 1000, localHour: hour, location: location,
            distance: location.distance(to: center), friends: friends, playersInPreferredGenders: genders,
            playersInPreferredAgeGroups: ages, avoidedPlayers: avoided)
    }

    @Test("golden scores computed by hand from 5.2·sport + 2.3·friends + 1.2·genders + 1.9·ages")
    func golden() {
        let taste = SessionTaste(
            quizSports: ["tennis"],
            played: [("tennis", "beginner", 3), ("football", "any", 1)])
        let ranked = SessionRanking.rank(
            [
                candidate("a", sport: "tennis", skill: "beginner", friends: 2, genders: 1, ages: 3),
                candidate("b", sport: "football", skill: "advanced", genders: 4),
                candidate("c", sport: "golf", friends: 1),
            ], taste: taste, center: center, weights: SessionWeights())
        // a: sport = 1 + (3 + 3)/(2·4) = 1.75 → 9.1 + 4.6 + 1.2 + 5.7 = 20.6
        // b: sport = 0 + (1 + 0)/8 = 0.125 → 0.65 + 4.8 = 5.45
        // c: sport = 0 → 2.3
        #expect(ranked.map(\.candidate.id) == ["a", "b", "c"])
        #expect(abs(ranked[0].score - 20.6) < 1e-9)
        #expect(abs(ranked[1].score - 5.45) < 1e-9)
        #expect(abs(ranked[2].score - 2.3) < 1e-9)
        var weights = SessionWeights()
        weights.friends = 10
        #expect(
            SessionRanking.rank(
                [candidate("b", genders: 1), candidate("c", friends: 1)], taste: .init(), center: center,
                weights: weights
            ).first?.candidate.id == "c")
    }

    @Test("dismissal reasons: sport halves, time and distance take the penalty off, people half of it")
    func dismissals() {
        let taste = SessionTaste(
            quizSports: ["tennis", "golf"],
            dismissals: [
                SessionDismissal(reason: .sport, sport: "golf", localHour: nil, location: nil),
                SessionDismissal(reason: .time, sport: nil, localHour: 23, location: nil),
                SessionDismissal(
                    reason: .distance, sport: nil, localHour: nil, location: GeoPoint(latitude: 47.38, longitude: 8.54)),
                SessionDismissal(reason: nil, sport: "tennis", localHour: 18, location: nil),
            ])
        let ranked = SessionRanking.rank(
            [
                candidate("golf", sport: "golf"), candidate("late", hour: 1), candidate("far", north: 0.01),
                candidate("people", avoided: 2), candidate("plain"),
            ], taste: taste, center: center, weights: SessionWeights())
        let score = Dictionary(uniqueKeysWithValues: ranked.map { ($0.candidate.id, $0.score) })
        #expect(abs(score["golf"]! - 2.6) < 1e-9)
        #expect(abs(score["late"]! - 4.2) < 1e-9)
        #expect(abs(score["far"]! - 4.2) < 1e-9)
        #expect(abs(score["people"]! - 4.2) < 1e-9)
        #expect(abs(score["plain"]! - 5.2) < 1e-9)
        #expect(SessionRanking.hourGap(23, 1) == 2)
    }

    @Test("explanations: strongest reason first, friends by name, distance last")
    func reasons() {
        let ranked = SessionRanking.rank(
            [candidate("a", north: 0.02, friends: 3, genders: 1)], taste: SessionTaste(quizSports: ["tennis"]),
            center: center, weights: SessionWeights())[0]
        let reasons = SessionRanking.reasons(
            ranked, sportName: "Tennis", skillName: "intermediate", friendNames: ["Ana", "Ben"],
            weights: SessionWeights())
        #expect(
            reasons.map(\.text) == [
                "Ana, Ben and 1 more are playing.", "You play tennis.", "1 player is of the genders you prefer.",
                "2.2 km away.",
            ])
        #expect(reasons.map(\.kind) == [.friends, .sport, .genders, .distance])
        #expect(reasons[0].count == 3 && reasons[1].fromQuiz == true && reasons[2].count == 1)
        #expect(abs((reasons[3].distanceMeters ?? 0) - 2224) < 2)
        // History at the session's level is a reason of its own.
        let played = SessionRanking.rank(
            [candidate("b", skill: "intermediate")],
            taste: SessionTaste(played: [("tennis", "intermediate", 2), ("tennis", "beginner", 1), ("golf", "any", 1)]),
            center: center, weights: SessionWeights())[0]
        let history = SessionRanking.reasons(
            played, sportName: "Tennis", skillName: "intermediate", friendNames: [], weights: SessionWeights())
        #expect(history.map(\.kind) == [.sport, .level, .distance])
        #expect(
            history.map(\.text).prefix(2) == [
                "You have played tennis 3 times.", "You have played it at intermediate level 2 times.",
            ])
        #expect(SessionRanking.distanceText(420) == "400 m away.")
    }

    @Test("time: sessions played within an hour of the start raise the score and name the hour")
    func time() {
        let taste = SessionTaste(
            played: [("tennis", "any", 4)], hours: [(hour: 19, count: 2), (hour: 20, count: 1), (hour: 9, count: 1)])
        let ranked = SessionRanking.rank(
            [candidate("morning", hour: 7), candidate("evening", hour: 19)], taste: taste, center: center,
            weights: SessionWeights())
        // Both: sport = (4 + 4)/(2·4) = 1 → 5.2. Evening: 3 of the 4 within an hour of 19:00 → + 1.5·0.75;
        // morning: none (09:00 is two hours from 07:00).
        #expect(ranked.map(\.candidate.id) == ["evening", "morning"])
        #expect(abs(ranked[0].score - 6.325) < 1e-9)
        #expect(abs(ranked[1].score - 5.2) < 1e-9)
        let reasons = SessionRanking.reasons(
            ranked[0], sportName: "Tennis", skillName: "any", friendNames: [], weights: SessionWeights())
        #expect(
            reasons.contains {
                $0.kind == .time && $0.text == "You have played 3 times around 19:00." && $0.count == 3 && $0.hour == 19
            }, "\(reasons)")
        #expect(reasons.last?.kind == .distance)
        let none = SessionRanking.reasons(
            ranked[1], sportName: "Tennis", skillName: "any", friendNames: [], weights: SessionWeights())
        #expect(!none.contains { $0.kind == .time })
    }

    @Test("affinity: best score per similar artist, favourites left out, events by best performer")
    func affinity() {
        let similar = ArtistAffinity.similarArtists(
            favorites: ["a", "b"],
            edges: [
                .init(from: "a", to: "c", score: 0.4), .init(from: "b", to: "c", score: 0.7),
                .init(from: "a", to: "b", score: 0.9), .init(from: "x", to: "d", score: 1),
                .init(from: "a", to: "e", score: 0.5), .init(from: "b", to: "e", score: 0.5),
            ])
        #expect(similar == ["c": .init(score: 0.7, similarTo: "b"), "e": .init(score: 0.5, similarTo: "a")])
        let ranked = ArtistAffinity.rank(
            [("late", 20, ["e"]), ("early", 10, ["e"]), ("best", 30, ["z", "c"]), ("none", 5, ["d"])], similar: similar)
        #expect(ranked.map(\.id) == ["best", "early", "late"])
        let liked = ArtistAffinity.rank(
            [("late", 20, ["e"]), ("early", 10, ["e"]), ("best", 30, ["c"])], similar: similar,
            favoriteCategoryEvents: ["late"])
        #expect(abs((liked.first { $0.id == "late" }?.score ?? 0) - 0.7) < 1e-9)
        #expect(liked.last?.id == "early")
    }

    @Test("the digest is due once a day from 16:00 local, across zones and daylight-saving changes")
    func digestSchedule() throws {
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        let utc = { (text: String) in try Date(text, strategy: .iso8601) }
        // 2026-03-08: clocks in New York go forward; 16:00 is 20:00 UTC (the day before, 21:00 UTC).
        #expect(
            DigestSchedule.due(now: try utc("2026-03-08T19:59:00Z"), timeZone: newYork, hour: 16, lastSent: nil) == nil)
        #expect(
            DigestSchedule.due(now: try utc("2026-03-08T20:00:00Z"), timeZone: newYork, hour: 16, lastSent: nil)
                == CalendarDate("2026-03-08"))
        #expect(
            DigestSchedule.due(now: try utc("2026-03-07T20:30:00Z"), timeZone: newYork, hour: 16, lastSent: nil) == nil)
        #expect(
            DigestSchedule.due(now: try utc("2026-03-07T21:00:00Z"), timeZone: newYork, hour: 16, lastSent: nil)
                == CalendarDate("2026-03-07"))
        // 2026-11-01: clocks go back; 16:00 is 21:00 UTC.
        #expect(
            DigestSchedule.due(now: try utc("2026-11-01T20:30:00Z"), timeZone: newYork, hour: 16, lastSent: nil) == nil)
        #expect(
            DigestSchedule.due(now: try utc("2026-11-01T21:00:00Z"), timeZone: newYork, hour: 16, lastSent: nil) != nil)
        // Tokyo's afternoon is UTC's morning; once sent, not again that day; too late after 21:59.
        let sent = DigestSchedule.due(now: try utc("2026-06-01T07:00:00Z"), timeZone: tokyo, hour: 16, lastSent: nil)
        #expect(sent == CalendarDate("2026-06-01"))
        #expect(
            DigestSchedule.due(now: try utc("2026-06-01T08:00:00Z"), timeZone: tokyo, hour: 16, lastSent: sent) == nil)
        #expect(
            DigestSchedule.due(now: try utc("2026-06-01T13:00:00Z"), timeZone: tokyo, hour: 16, lastSent: nil) == nil)
        #expect(
            DigestSchedule.due(now: try utc("2026-06-02T07:30:00Z"), timeZone: tokyo, hour: 16, lastSent: sent)
                == CalendarDate("2026-06-02"))
    }

    @Test("iCalendar text is escaped and folded at 75 octets without splitting characters")
    func iCalendar() throws {
        let long = String(repeating: "é", count: 60)
        let document = ICalendarWriter.document(
            name: "Mine",
            entries: [
                CalendarEntry(
                    uid: "e1@tonight", summary: "Tennis; doubles, fun\nbring balls",
                    start: Date(timeIntervalSince1970: 0),
                    end: Date(timeIntervalSince1970: 5400), location: long, geo: GeoPoint(latitude: 1.5, longitude: -2),
                    description: nil, url: nil, cancelled: true, updated: Date(timeIntervalSince1970: 0))
            ], now: Date(timeIntervalSince1970: 0))
        #expect(document.contains("SUMMARY:Tennis\\; doubles\\, fun\\nbring balls\r\n"))
        #expect(document.contains("DTSTART:19700101T000000Z\r\nDTEND:19700101T013000Z\r\n"))
        #expect(document.contains("GEO:1.500000;-2.000000\r\n"))
        #expect(document.contains("STATUS:CANCELLED\r\n"))
        for line in document.components(separatedBy: "\r\n") {
            #expect(line.utf8.count <= 75)
        }
        let unfolded = document.replacingOccurrences(of: "\r\n ", with: "")
        #expect(unfolded.contains("LOCATION:" + long + "\r\n"))
    }

    @Test("age groups as birth-date ranges, 29 February included")
    func ageRanges() throws {
        let today = try #require(CalendarDate("2026-11-23"))
        let range = AgeGroup.from25to34.birthDates(today: today)
        #expect(range.after == CalendarDate("1991-11-23"))
        #expect(range.through == CalendarDate("2001-11-23"))
        for text in ["1991-11-23", "1991-11-24", "2001-11-23", "2001-11-24"] {
            let date = try #require(CalendarDate(text))
            let inRange = date > range.after! && date <= range.through!
            #expect(inRange == (AgeGroup(birthDate: date, today: today) == .from25to34), "\(text)")
        }
        #expect(AgeGroup.under18.birthDates(today: today).through == nil)
        #expect(AgeGroup.over55.birthDates(today: today).after == nil)
        #expect(CalendarDate("2028-02-29")!.yearsEarlier(1) == CalendarDate("2027-02-28"))
    }

    @Test("player lists: friends, genders, age brackets, avoided players and the user themself")
    func players() {
        let criteria = SessionPlayers.Criteria(
            userID: "me", friends: ["f"], genders: ["female"], birthDates: [("1991-11-23", "2001-11-23")],
            avoided: ["x"])
        let counts = SessionPlayers.count(
            "f,male,1995-01-01;g,female,;x,female,1970-05-05;h,,2001-11-23;me,female,1999-01-01", criteria)
        #expect(counts.friends == 1 && counts.preferredGenders == 2 && counts.preferredAgeGroups == 2)
        #expect(counts.avoided == 1 && counts.includesUser)
        #expect(SessionPlayers.count("", criteria) == .init())
    }

    @Test("map links and the sports catalogue")
    func mapsAndSports() {
        let point = GeoPoint(latitude: 47.5, longitude: 8.25)
        #expect(MapLinks.apple(point, name: "A&B #1") == "https://maps.apple.com/?ll=47.500000,8.250000&q=A%26B%20%231")
        #expect(
            MapLinks.google(point, name: "x") == "https://www.google.com/maps/search/?api=1&query=47.500000,8.250000")
        #expect(MapLinks.escaped("Søren's ~Bar_1.") == "S%C3%B8ren%27s%20~Bar_1.")
        var generator = SystemRandomNumberGenerator()
        for value in [0, -0.5, 179.9999995, -89.000001, 0.0000005, 12.3456785]
            + (0..<2000).map({ _ in
                Double.random(in: -180...180, using: &generator)
            })
        {
            #expect(MapLinks.decimal(value) == String(format: "%.6f", value), "\(value)")
        }
        #expect(SportCatalog.builtIn.count >= 40)
        #expect(Set(SportCatalog.builtIn.map(\.slug)).count == SportCatalog.builtIn.count)
        #expect(SportCatalog.builtIn.allSatisfy { SportCatalog.isValidSlug($0.slug) })
        #expect(!SportCatalog.isValidSlug("-x") && !SportCatalog.isValidSlug("A b"))
    }
}
