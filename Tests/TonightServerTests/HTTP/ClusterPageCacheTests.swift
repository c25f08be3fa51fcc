import Foundation
import HummingbirdTesting
import NIOConcurrencyHelpers
import SQLKit
import Testing

@testable import TonightServer

/// The anonymous page cache on PostgreSQL (``ClusterFeedVersion``): two instances on one database,
/// each answering a hot feed page from memory, kept exact by the database's change notifications.
@Suite("Cached feed pages across instances")
struct ClusterPageCacheTests {
    /// A cached anonymous feed page of one instance, read until the answer satisfies `check`.
    struct Feed {
        let services: AppServices
        let client: any TestClientProtocol
        let path: String

        /// The first post of the page (an empty object on an error, such as a 503 while the
        /// database is away).
        func first() async throws -> JSON {
            let response = try await client.send(.get, path)
            return (response.json["items"] as? [JSON])?.first ?? [:]
        }

        /// The first post of a read answered from the event loop (the page was cached), within
        /// five seconds; `nil` if none was.
        func fromLoop() async throws -> JSON? {
            let pages = try #require(services.pages)
            for _ in 0..<100 {
                let before = pages.loopAnswers.load(ordering: .relaxed)
                let post = try await first()
                if pages.loopAnswers.load(ordering: .relaxed) > before { return post }
                try await Task.sleep(for: .milliseconds(50))
            }
            return nil
        }
    }

    /// Failed before: PostgreSQL had no page cache, and a cache kept per instance would not see
    /// the other's writes.
    @Test("a vote or a caption changed through one instance shows in the other's cached page within a second")
    func writesReachTheOtherCache() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTwoInstances { a, clientA, b, clientB in
            let author = try await clientA.member("author")
            let voter = try await clientA.member("voter")
            let post = try await insertPost(a, author: author.id, caption: "first")
            let path = "/v1/cities/Halifax$Nova%20Scotia$CA/posts"
            let feedB = Feed(services: b, client: clientB, path: path)
            #expect(try await feedB.fromLoop() != nil)

            let vote = try await clientA.send(.put, "/v1/posts/\(post)/vote", json: ["value": 1], token: voter.token)
            #expect(vote.status == .ok, "\(vote.text)")
            #expect(try await holds(within: .seconds(1)) { try await feedB.first()["up"] as? Int == 1 })

            // A write no instance answered (a job, the CLI): the trigger's notification reaches both.
            try await a.database.sql.raw("UPDATE posts SET caption = 'changed elsewhere' WHERE id = \(bind: post)")
                .run()
            #expect(
                try await holds(within: .seconds(1)) {
                    try await feedB.first()["caption"] as? String == "changed elsewhere"
                })
            #expect(try await feedB.fromLoop()?["caption"] as? String == "changed elsewhere")
        }
    }

    /// Failed before the flush: a change made while the listener was away was never notified, so
    /// the page cached before stayed in use.
    @Test("while the change listener hangs or is cut nothing is answered from the cache; back, the cache starts over")
    func lostListenerFlushes() async throws {
        guard Backend.available.contains(.postgres) else { return }
        let proxy = NIOLockedValueBox<TCPProxy?>(nil)
        try await withTwoInstances(
            second: { config in
                let (through, url) = try await behindProxy(config.databaseURL)
                proxy.withLockedValue { $0 = through }
                config.databaseURL = url
                config.databaseQueryTimeoutMilliseconds = 2000
            }
        ) { a, clientA, b, clientB in
            let proxy = try #require(proxy.withLockedValue { $0 })
            let author = try await clientA.member("author")
            let post = try await insertPost(a, author: author.id, caption: "before")
            let feedB = Feed(services: b, client: clientB, path: "/v1/cities/Halifax$Nova%20Scotia$CA/posts")
            #expect(try await feedB.fromLoop() != nil)
            let pages = try #require(b.pages)

            // A connection that hangs without a reset: once no heartbeat has come back for
            // ClusterFeedVersion.staleAfter, the page is no longer answered (the read goes to the
            // database, which is away: 503).
            proxy.freeze(true)
            try await Task.sleep(for: ClusterFeedVersion.staleAfter + .milliseconds(200))
            let before = pages.loopAnswers.load(ordering: .relaxed)
            let frozen = try await clientB.send(.get, feedB.path)
            #expect(frozen.status == .serviceUnavailable, "\(frozen.status)")
            #expect(pages.loopAnswers.load(ordering: .relaxed) == before)
            try await a.database.sql.raw("UPDATE posts SET caption = 'while frozen' WHERE id = \(bind: post)").run()
            proxy.freeze(false)
            #expect(
                try await holds(within: .seconds(10)) {
                    try await feedB.first()["caption"] as? String == "while frozen"
                })
            #expect(try await feedB.fromLoop()?["caption"] as? String == "while frozen")

            // A connection cut: the notification of a change made meanwhile is lost for good.
            await proxy.cut()
            try await a.database.sql.raw("UPDATE posts SET caption = 'while cut' WHERE id = \(bind: post)").run()
            #expect(try await feedB.first()["caption"] as? String != "before")
            try await proxy.restore()
            #expect(try await feedB.fromLoop()?["caption"] as? String == "while cut")
        }
    }

    /// Failed before: the other instance rebuilt its suggestion index only at its next check,
    /// five seconds later.
    @Test("an artist imported elsewhere shows in an instance's suggestions within a second")
    func importReachesTheOtherSuggester() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTwoInstances { a, _, b, clientB in
            func names() async throws -> [String] {
                let response = try await clientB.send(.get, "/v1/artists/suggest?q=rosa")
                return (response.json["items"] as? [JSON] ?? []).compactMap { $0["name"] as? String }
            }
            #expect(try await names().isEmpty)
            // An import by another process (the CLI), straight after this instance's own check.
            try await b.suggester.check()
            let now = Clock.millis()
            try await a.database.sql.raw(
                """
                INSERT INTO artists (id, name, name_folded, popularity, created_at, updated_at)
                VALUES ('feed:1', 'Rosalía', 'rosalia', 10, \(bind: now), \(bind: now))
                """
            ).run()
            #expect(try await holds(within: .seconds(1)) { try await names().contains { $0.hasPrefix("Rosal") } })
        }
    }
}
