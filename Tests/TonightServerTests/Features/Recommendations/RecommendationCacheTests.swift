import Foundation
import HummingbirdTesting
import Synchronization
import Testing
import TonightCore

@testable import TonightServer

@Suite("Recommendations kept in memory")
struct RecommendationCacheTests {
    typealias Cache = RecommendationCache<String>
    let key = Cache.Key(userID: "u", latitude: 47.37, longitude: 8.54, limit: 20)

    @Test("an answer is given again only at the same version and within its lifetime")
    func versionAndLifetime() async throws {
        // PostgreSQL's shape: a cluster version that notifications and this instance's writes move.
        let cluster = ClusterFeedVersion()
        cluster.listening(true)
        let cache = Cache(lifetime: .milliseconds(200), cluster: cluster)
        let version = try #require(await cache.version())
        cache.keep("answer", for: key, madeAt: version)
        #expect(cache.answer(key, at: version) == "answer")
        #expect(cache.answer(key, at: version + 1) == nil)
        // A write on this instance starts afresh, and a dropped answer stays dropped.
        cache.keep("answer", for: key, madeAt: version)
        cluster.advance()
        let later = try #require(await cache.version())
        #expect(later != version && cache.answer(key, at: later) == nil && cache.count == 0)
        cache.keep("again", for: key, madeAt: later)
        try await Task.sleep(for: .milliseconds(250))
        #expect(cache.answer(key, at: later) == nil)
        #expect(cache.hits == 1)
        // Off, or no version known (the PostgreSQL listener away): nothing is kept or answered.
        #expect(await Cache(lifetime: .zero, cluster: nil, stored: { 1 }).version() == nil)
        #expect(await Cache(lifetime: .seconds(60), cluster: ClusterFeedVersion(), stored: { 1 }).version() == nil)
        #expect(await Cache(lifetime: .seconds(60), cluster: nil, stored: { nil }).version() == nil)
    }

    @Test("a full cache drops stale answers first, then the oldest")
    func capacity() async throws {
        let version = Mutex<Int64>(1)
        let cache = Cache(lifetime: .seconds(60), capacity: 3, cluster: nil, stored: { version.withLock { $0 } })
        let old = try #require(await cache.version())
        cache.keep("stale", for: .init(userID: "a", latitude: 0, longitude: 0, limit: 1), madeAt: old)
        version.withLock { $0 = 2 }
        let now = try #require(await cache.version())
        for user in ["b", "c", "d"] {
            cache.keep(user, for: .init(userID: user, latitude: 0, longitude: 0, limit: 1), madeAt: now)
        }
        #expect(cache.count == 3)
        cache.keep("e", for: .init(userID: "e", latitude: 0, longitude: 0, limit: 1), madeAt: now)
        #expect(cache.count == 3)
        #expect(cache.answer(.init(userID: "b", latitude: 0, longitude: 0, limit: 1), at: now) == nil)
        #expect(cache.answer(.init(userID: "e", latitude: 0, longitude: 0, limit: 1), at: now) == "e")
    }

    @Test("after another's change an answer is given again for a moment; after the member's own write, not")
    func staleForOthers() async throws {
        let cache = Cache(lifetime: .seconds(60), stale: .seconds(30), cluster: nil)
        cache.keep("answer", for: key, madeAt: 1)
        // Another's change moved the version: still given, within the moment.
        #expect(cache.answer(key, at: 2) == "answer")
        // Begun longer ago than the moment: made again.
        let other = Cache.Key(userID: "v", latitude: 47.37, longitude: 8.54, limit: 20)
        cache.keep("old", for: other, madeAt: 1, started: .now - .seconds(31))
        #expect(cache.answer(other, at: 1) == "old")
        #expect(cache.answer(other, at: 2) == nil)
        // The member's own write: made again; one begun after it is given again.
        cache.wrote("u")
        #expect(cache.answer(key, at: 2) == nil)
        try await Task.sleep(for: .milliseconds(2))
        cache.keep("after", for: key, madeAt: 2)
        #expect(cache.answer(key, at: 3) == "after")
        // Another member's write does not hold it back.
        cache.wrote("v")
        #expect(cache.answer(key, at: 3) == "after")
        // A block: every kept answer goes, and one begun before it (still being made then) is not
        // given after it.
        let begun = ContinuousClock.now
        cache.forgetEveryone()
        #expect(cache.answer(key, at: 3) == nil && cache.count == 0)
        cache.keep("made across the block", for: key, madeAt: 3, started: begun)
        #expect(cache.answer(key, at: 3) == "made across the block")
        #expect(cache.answer(key, at: 4) == nil)
        // With no moment, every change counts at once (and writes are not even remembered).
        let exact = Cache(lifetime: .seconds(60), cluster: nil)
        exact.keep("answer", for: key, madeAt: 1)
        #expect(exact.answer(key, at: 2) == nil)
    }

    @Test("an outdated answer is made again in the background past half the moment, once, while it is given")
    func renewedAhead() async throws {
        let made = Atomic<Int>(0)
        let cache = Cache(lifetime: .seconds(60), stale: .seconds(2), cluster: nil, stored: { 2 })
        let make = { @Sendable () async throws -> String in
            made.add(1, ordering: .relaxed)
            return "new"
        }
        let ask = { @Sendable () async throws -> String in
            try await cache.answer(
                for: "u", around: GeoPoint(latitude: 47.37, longitude: 8.54), limit: 20, at: 2, make: make)
        }
        cache.keep("old", for: key, madeAt: 1)
        // Within the first half: given, nothing made.
        #expect(try await ask() == "old")
        try await Task.sleep(for: .seconds(1.1))
        // Past it: still given, made again once however many ask, then given instead.
        for _ in 0..<5 { #expect(["old", "new"].contains(try await ask())) }
        #expect(try await eventually(within: .seconds(10)) { cache.answer(key, at: 2) == "new" })
        #expect(made.load(ordering: .relaxed) == 1)
        // The same version: kept as it is.
        #expect(try await ask() == "new" && made.load(ordering: .relaxed) == 1)
    }

    @Test(
        "others' changes reach a kept answer within the moment; the member's own writes and blocks at once",
        arguments: Backend.available)
    func othersAndOwn(backend: Backend) async throws {
        try await withApp(backend, configure: { $0.recommendationStaleSeconds = 60 }) { services, client in
            let cache = services.recommendationCache
            let (ana, ben, s1, s2, list) = try await Self.twoSessions(client)
            let s3 =
                try await client.createSession(ben, sport: "tennis", spot: (47.3720, 8.5400, "S3"))["id"] as! String
            let ids = { @Sendable () async throws -> Set<String> in Set(try await list()) }
            // Kept (on PostgreSQL once the listener's heartbeat is fresh).
            #expect(
                try await eventually(within: .seconds(30)) {
                    let hits = cache.hits
                    return try await ids() == [s1, s2, s3] && cache.hits > hits
                })
            // Another's change (a session cancelled outside a request): the version moves, and the
            // kept answer is still given.
            let before = try #require(await cache.version())
            try await services.database.sql.raw("UPDATE events SET status = 'cancelled' WHERE id = \(bind: s2)").run()
            #expect(try await eventually(within: .seconds(10)) { await cache.version() != before })
            var hits = cache.hits
            #expect(try await ids() == [s1, s2, s3] && cache.hits == hits + 1)
            // The member's own write: the next answer is made afresh, with the others' change too.
            let dismissed = try await client.send(
                .post, "/v1/me/recommendations/dismissals", json: ["eventId": s1], token: ana.token)
            #expect(dismissed.status == .noContent)
            hits = cache.hits
            #expect(try await ids() == [s3] && cache.hits == hits)
            #expect(try await ids() == [s3] && cache.hits == hits + 1)
            // A block reaches everyone at once: ben's session, kept in ana's answer, goes with it.
            let blocked = try await client.send(.put, "/v1/me/blocks/\(ana.id)", token: ben.token)
            #expect(blocked.status == .noContent, "\(blocked.text)")
            #expect(try await ids() == [])
        }
    }

    @Test(
        "session recommendations come from memory until something they read changes, by any writer",
        arguments: Backend.available)
    func sessions(backend: Backend) async throws {
        // Every change counts at once here (the moment others' changes may wait: othersAndOwn).
        try await withApp(backend, configure: { $0.recommendationStaleSeconds = 0 }) { services, client in
            let cache = services.recommendationCache
            let (ana, ben, s1, s2, ids) = try await Self.twoSessions(client)
            // Answered from memory the second time (on PostgreSQL while the listener's heartbeat
            // is fresh: a loaded machine can make it stale for a moment, when nothing is kept).
            let fromMemory = { @Sendable (expected: Set<String>) async throws -> Bool in
                try await eventually(within: .seconds(30)) {
                    let hits = cache.hits
                    return try await Set(ids()) == expected && cache.hits > hits
                }
            }
            #expect(try await fromMemory([s1, s2]))
            #expect(cache.count == 1)

            // Another member's write through the API: ben's friendship makes s1's players count.
            try await client.befriend(ana, ben)
            let join = try await client.send(
                .put, "/v1/events/\(s1)/attendance", json: ["status": "going"], token: ben.token)
            #expect(join.status == .ok, "\(join.text)")
            let withFriend = try await client.send(
                .get, "/v1/me/recommendations/sessions?near=47.37,8.54", token: ana.token)
            let first = (withFriend.json["items"] as? [JSON])?.first
            #expect((first?["event"] as? JSON)?["id"] as? String == s1)
            #expect((first?["reasons"] as? [String] ?? []).contains("ben is playing."), "\(withFriend.text)")

            // A change written straight into the database (another process, a job): on SQLite the
            // version row moves in its transaction; on PostgreSQL its notification arrives shortly.
            try await services.database.sql.raw("UPDATE events SET status = 'cancelled' WHERE id = \(bind: s2)").run()
            #expect(try await eventually(within: .seconds(10)) { try await ids() == [s1] })
            #expect(try await fromMemory([s1]))
        }
    }

    @Test(
        "explore cards come from memory until an event, a favourite or an import changes them",
        arguments: Backend.available)
    func cards(backend: Backend) async throws {
        // Every change counts at once here (the moment others' changes may wait: othersAndOwn).
        try await withApp(backend, configure: { $0.recommendationStaleSeconds = 0 }) { services, client in
            let cache = services.cardCache
            let mod = try await moderatorToken(services, client)
            let club = try await createPlace(client, token: mod, name: "Club", lat: 47.37, lon: 8.54)["id"] as! String
            // Running now, so tonight's at any hour.
            let began = Date().addingTimeInterval(-600)
            let ends = Date().addingTimeInterval(3 * 3600)
            try await insertShow(services, id: "t1", place: club, start: began, performers: [], end: ends)
            let ana = try await client.member("ana")
            let path = "/v1/me/recommendations/events?near=47.37,8.54"
            let ids = { @Sendable (query: String) async throws -> [String] in
                let r = try await client.send(.get, path + query, token: ana.token)
                #expect(r.status == .ok, "\(r.text)")
                return (r.json["items"] as? [JSON] ?? []).compactMap { ($0["event"] as? JSON)?["id"] as? String }
            }
            // (On PostgreSQL a write outside a request is seen when its notification arrives.)
            #expect(try await eventually(within: .seconds(10)) { try await ids("") == ["t1"] })
            // Answered from memory (on PostgreSQL while the listener's heartbeat is fresh: a
            // loaded machine can make it stale for a moment, when nothing is kept).
            #expect(
                try await eventually(within: .seconds(30)) {
                    let hits = cache.hits
                    return try await ids("") == ["t1"] && cache.hits > hits
                })
            // A refresh is made afresh, and not kept.
            let hits = cache.hits
            #expect(try await ids("&refresh=true") == ["t1"])
            #expect(cache.hits == hits)

            // A show inserted (an organiser's new event, an import's batch) moves the version.
            try await insertShow(
                services, id: "t2", place: club, start: began.addingTimeInterval(60), performers: [], end: ends)
            #expect(try await eventually(within: .seconds(10)) { try await ids("") == ["t1", "t2"] })
            // A change written straight into the database, by trigger.
            try await services.database.sql.raw("UPDATE events SET status = 'cancelled' WHERE id = 't1'").run()
            #expect(try await eventually(within: .seconds(10)) { try await ids("") == ["t2"] })
            // A category renamed by an import: the next card names it so, although the catalogue
            // keeps categories for two seconds (kept cards read them afresh).
            try await services.database.sql.raw(
                "INSERT INTO categories (id, name, updated_at) VALUES ('c1', 'Rock', 0)"
            ).run()
            try await services.database.sql.raw("UPDATE events SET category_id = 'c1' WHERE id = 't2'").run()
            let category = { @Sendable () async throws -> String? in
                let r = try await client.send(.get, path, token: ana.token)
                return (((r.json["items"] as? [JSON])?.first?["event"] as? JSON)?["category"] as? JSON)?["name"]
                    as? String
            }
            #expect(try await eventually(within: .seconds(10)) { try await category() == "Rock" })
            _ = try await services.catalog.categories()
            try await services.database.transaction { db in
                try await db.raw("UPDATE categories SET name = 'Pop' WHERE id = 'c1'").run()
                try await services.database.moveRecommendationVersion(on: db)
            }
            #expect(try await eventually(within: .seconds(10)) { try await category() == "Pop" })

            // A refresh that brings a dismissed card back is a write in a GET: the next answer
            // has the card, at once (on PostgreSQL before the notification comes back).
            let dismissed = try await client.send(
                .post, "/v1/me/recommendations/dismissals", json: ["eventId": "t2"], token: ana.token)
            #expect(dismissed.status == .noContent)
            #expect(try await ids("") == [])
            #expect(try await ids("&refresh=true") == ["t2"])
            #expect(try await ids("") == ["t2"])
            // A favourite through the API, an affinity import and a feed import.
            try await insertArtist(services, id: "a", name: "Artist A")
            try await insertArtist(services, id: "b", name: "Artist B")
            let moved = { @Sendable (change: @Sendable () async throws -> Void) async throws -> Bool in
                let before = try #require(await cache.version())
                try await change()
                return try await eventually(within: .seconds(10)) { await cache.version() != before }
            }
            #expect(try await moved { _ = try await client.send(.put, "/v1/me/favorites/artists/a", token: ana.token) })
            #expect(try await services.catalog.favorites(userID: ana.id, offset: 0, limit: 10).map(\.id) == ["a"])
            #expect(
                try await moved { try await services.catalog.upsertAffinity([[.init("a"), .init("b"), .init(0.5)]]) })
            let feed = try temporaryFile(sampleFeed(), suffix: ".xml")
            #expect(
                try await moved { _ = try await Importer.run(.feed, path: feed, dryRun: false, services: services) })
            // The same feed again writes nothing, and keeps what is kept. (The version once it
            // stays put: on PostgreSQL a notification of the first import may still be on its way.)
            func steady() async throws -> Int64? {
                var last = await cache.version()
                for _ in 0..<50 {
                    try await Task.sleep(for: .milliseconds(300))
                    let now = await cache.version()
                    if now == last { return now }
                    last = now
                }
                return last
            }
            let settled = try await steady()
            _ = try await Importer.run(.feed, path: feed, dryRun: false, services: services)
            #expect(try await steady() == settled)
        }
    }

    /// Members ana and ben, cleo's tennis and football sessions S1 and S2 at the centre, and ana's
    /// session recommendations there (the events' ids, in order).
    static func twoSessions(_ client: any TestClientProtocol) async throws -> (
        ana: TestUser, ben: TestUser, s1: String, s2: String, ids: @Sendable () async throws -> [String]
    ) {
        let ana = try await client.member("ana")
        let ben = try await client.member("ben")
        let cleo = try await client.member("cleo")
        let s1 = try await client.createSession(cleo, sport: "tennis", spot: (47.3700, 8.5400, "S1"))["id"] as! String
        let s2 = try await client.createSession(cleo, sport: "football", spot: (47.3710, 8.5400, "S2"))["id"] as! String
        let ids = { @Sendable () async throws -> [String] in
            let r = try await client.send(.get, "/v1/me/recommendations/sessions?near=47.37,8.54", token: ana.token)
            #expect(r.status == .ok, "\(r.text)")
            return (r.json["items"] as? [JSON] ?? []).compactMap { ($0["event"] as? JSON)?["id"] as? String }
        }
        return (ana, ben, s1, s2, ids)
    }
}
