import Foundation
import SQLKit
import TonightCore

/// Token buckets kept in the database, so a rate limit holds across every instance on one
/// PostgreSQL: a change reads its bucket under a row lock, applies ``TokenBucket``'s arithmetic
/// and writes it back, in one transaction (concurrent requests for one key queue on the row).
struct RateBucketRepository: Sendable {
    let database: Database

    /// Applies `change` to `key`'s bucket (a full one if there is none yet) and stores the result.
    func update<T: Sendable>(
        _ key: String, capacity: Int, period: TimeInterval, now: Date,
        _ change: @escaping @Sendable (inout TokenBucket) -> T
    ) async throws -> T {
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        return try await database.transaction { db in
            try await db.raw(
                """
                INSERT INTO rate_buckets (key, tokens, updated_at) VALUES (\(bind: key), \(bind: Double(capacity)), \(bind: millis))
                ON CONFLICT (key) DO NOTHING
                """
            ).run()
            let row = try await db.raw(
                "SELECT tokens, updated_at FROM rate_buckets WHERE key = \(bind: key) FOR UPDATE"
            ).first()
            var bucket = try Self.bucket(row, capacity: capacity, period: period, now: now)
            let result = change(&bucket)
            try await db.raw(
                """
                UPDATE rate_buckets SET tokens = \(bind: bucket.tokens),
                    updated_at = \(bind: Int64(bucket.updatedAt.timeIntervalSince1970 * 1000))
                WHERE key = \(bind: key)
                """
            ).run()
            return result
        }
    }

    /// `key`'s bucket as stored (a full one if there is none), not changed.
    func read(_ key: String, capacity: Int, period: TimeInterval, now: Date) async throws -> TokenBucket {
        let row = try await database.sql.raw(
            "SELECT tokens, updated_at FROM rate_buckets WHERE key = \(bind: key)"
        ).first()
        return try Self.bucket(row, capacity: capacity, period: period, now: now)
    }

    /// Forgets buckets untouched since `cutoff` (milliseconds): by then they are full again.
    func purge(before cutoff: Int64) async throws {
        try await database.write { db in
            try await db.raw("DELETE FROM rate_buckets WHERE updated_at < \(bind: cutoff)").run()
        }
    }

    private static func bucket(_ row: (any SQLRow)?, capacity: Int, period: TimeInterval, now: Date) throws
        -> TokenBucket
    {
        guard let row else { return TokenBucket(capacity: capacity, period: period, now: now) }
        return TokenBucket(
            capacity: capacity, period: period, tokens: try row.decode(column: "tokens", as: Double.self),
            updatedAt: Date(timeIntervalSince1970: Double(try row.decode(column: "updated_at", as: Int64.self)) / 1000))
    }
}
