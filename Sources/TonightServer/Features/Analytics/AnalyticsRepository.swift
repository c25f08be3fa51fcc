import Foundation
import SQLKit
import TonightCore

/// One stored client event.
struct AnalyticsRecord: Sendable, Equatable {
    var id: String
    var userID: String?
    var name: String
    var cityKey: String?
    var properties: String
    var occurredAt: Int64
    var receivedAt: Int64
}

/// One day of the admin report, per city.
public struct ReportRow: Sendable, Equatable {
    /// `YYYY-MM-DD` (UTC).
    public var day: String
    /// A city key, or `all` for the day's totals.
    public var city: String
    public var activeUsers: Int
    public var posts: Int
    public var votes: Int
}

/// Analytics events, feedback and the daily report over them.
///
/// Over SQLKit.
struct AnalyticsRepository: Sendable {
    let db: any SQLDatabase
    let database: Database

    func add(_ events: [AnalyticsRecord]) async throws {
        try await database.write { db in
            try await BulkWrite.upsert(
                "analytics_events",
                columns: ["id", "user_id", "name", "city_key", "properties", "occurred_at", "received_at"],
                rows: events.map {
                    [$0.id, $0.userID, $0.name, $0.cityKey, $0.properties, $0.occurredAt, $0.receivedAt]
                },
                key: ["id"], on: db)
        }
    }

    func addFeedback(id: String, userID: String?, text: String, email: String?, appVersion: String?, now: Int64)
        async throws
    {
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO feedback (id, user_id, text, email, app_version, created_at)
                VALUES (\(bind: id), \(bind: userID), \(bind: text), \(bind: email), \(bind: appVersion), \(bind: now))
                """
            ).run()
        }
    }

    /// Per day since `since` (UTC days): active users (anyone with an event, a post or a vote that
    /// day), posts and votes (by the time of each user's latest vote), per city and in all.
    func report(since: Int64) async throws -> [ReportRow] {
        // (day, city, user) activity facts from the three sources; days are computed in Swift.
        let events = try await db.raw(
            "SELECT occurred_at AS t, city_key AS city, user_id AS u FROM analytics_events WHERE occurred_at >= \(bind: since)"
        ).all()
        let posts = try await db.raw(
            "SELECT created_at AS t, city_key AS city, author_id AS u FROM posts WHERE created_at >= \(bind: since)"
        ).all()
        let votes = try await db.raw(
            """
            SELECT v.updated_at AS t, p.city_key AS city, v.user_id AS u FROM post_votes v JOIN posts p ON p.id = v.post_id
            WHERE v.updated_at >= \(bind: since) AND v.value <> 0
            """
        ).all()
        struct Key: Hashable {
            var day: String
            var city: String
        }
        var active: [Key: Set<String>] = [:]
        var postCount: [Key: Int] = [:]
        var voteCount: [Key: Int] = [:]
        func facts(_ rows: [any SQLRow], _ each: (Key, String?) -> Void) throws {
            for row in rows {
                let day = Self.day(try row.decode(column: "t", as: Int64.self))
                let city = try row.decode(column: "city", as: String?.self) ?? "unknown"
                let user = try row.decode(column: "u", as: String?.self)
                each(Key(day: day, city: city), user)
                each(Key(day: day, city: "all"), user)
            }
        }
        try facts(events) { key, user in if let user { active[key, default: []].insert(user) } }
        try facts(posts) { key, user in
            postCount[key, default: 0] += 1
            if let user { active[key, default: []].insert(user) }
        }
        try facts(votes) { key, user in
            voteCount[key, default: 0] += 1
            if let user { active[key, default: []].insert(user) }
        }
        let keys = Set(active.keys).union(postCount.keys).union(voteCount.keys)
        return keys.sorted { ($0.day, $0.city == "all" ? "" : $0.city) < ($1.day, $1.city == "all" ? "" : $1.city) }
            .map { key in
                ReportRow(
                    day: key.day, city: key.city, activeUsers: active[key]?.count ?? 0, posts: postCount[key] ?? 0,
                    votes: voteCount[key] ?? 0)
            }
    }

    /// The UTC day of a millisecond time, `YYYY-MM-DD`.
    static func day(_ millis: Int64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: Clock.date(millis))
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
