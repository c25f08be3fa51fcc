import Crypto
import Foundation
import SQLKit
import TonightCore

/// Token buckets kept in the database, so a rate limit holds across every instance on one
/// PostgreSQL. Taking a token is one statement (an upsert that refills the bucket by the time
/// since its last use, takes a token if there is one, and says whether it did), so requests for a
/// hot key queue on its row for microseconds, not for a transaction's round trips. Keys are
/// stored as SHA-256 digests: they carry client input (an account name, an address).
struct RateBucketRepository: Sendable {
    let database: Database

    /// Takes one token from `key`'s bucket of `capacity` per `period` seconds (full when new).
    func take(_ key: String, capacity: Int, period: TimeInterval, now: Date) async throws -> TokenBucket.TakeResult {
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        let capacity = Double(max(1, capacity))
        let perMillisecond = capacity / max(1, period * 1000)
        let refilled: SQLQueryString =
            "LEAST(\(bind: capacity), rate_buckets.tokens + GREATEST(0, \(bind: millis) - rate_buckets.updated_at) * \(bind: perMillisecond))"
        let row = try await database.write { db in
            try await db.raw(
                """
                INSERT INTO rate_buckets (key, tokens, updated_at, taken) VALUES (\(bind: Self.digest(key)), \(bind: capacity - 1), \(bind: millis), TRUE)
                ON CONFLICT (key) DO UPDATE SET
                    tokens = CASE WHEN \(refilled) >= 1 THEN \(refilled) - 1 ELSE \(refilled) END,
                    taken = \(refilled) >= 1,
                    updated_at = \(bind: millis)
                RETURNING tokens, taken
                """
            ).first()
        }
        guard let row, try !row.decode(column: "taken", as: Bool.self) else { return .allowed }
        let tokens = try row.decode(column: "tokens", as: Double.self)
        let perSecond = perMillisecond * 1000
        return .limited(retryAfter: max(1, Int(((1 - tokens) / perSecond).rounded(.up))))
    }

    /// `key`'s bucket as stored, refilled to `now` (nil if it was never drawn from).
    func read(_ key: String, capacity: Int, period: TimeInterval, now: Date) async throws -> TokenBucket? {
        guard
            let row = try await database.sql.raw(
                "SELECT tokens, updated_at FROM rate_buckets WHERE key = \(bind: Self.digest(key))"
            ).first()
        else { return nil }
        return TokenBucket(
            capacity: capacity, period: period, tokens: try row.decode(column: "tokens", as: Double.self),
            updatedAt: Date(timeIntervalSince1970: Double(try row.decode(column: "updated_at", as: Int64.self)) / 1000))
    }

    /// Forgets buckets untouched since `cutoff` (milliseconds): by then they are full again.
    func purge(before cutoff: Int64) async throws {
        try await database.write { db in
            try await db.raw("DELETE FROM rate_buckets WHERE updated_at < \(bind: cutoff)").run()
        }
    }

    private static func digest(_ key: String) -> String {
        SHA256.hash(data: Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
