import Foundation
import TonightCore

/// Token buckets keyed by purpose and client (`login-ip:1.2.3.4`). The embedded server (SQLite,
/// one process) keeps them in memory; on PostgreSQL they live in the database
/// (``RateBucketRepository``), so a limit holds for the whole cluster however many instances share
/// the load (each limited request costs one statement there).
public actor RateLimiter {
    private var buckets: [String: TokenBucket] = [:]
    private var lastSweep = Date()
    private let store: RateBucketRepository?

    /// Buckets in this process's memory.
    public init() { store = nil }

    /// Buckets in `store` when given (shared by every instance), else in memory.
    init(store: RateBucketRepository?) { self.store = store }

    /// Takes one token for `key` from a bucket of `capacity` per `period` seconds; throws 429
    /// with Retry-After when empty. A capacity of 0 or less disables the limit.
    public func check(_ key: String, capacity: Int, period: TimeInterval, now: Date = Date()) async throws {
        guard capacity > 0 else { return }
        if case .limited(let retryAfter) = try await take(key, capacity: capacity, period: period, now: now) {
            throw APIError.rateLimited(retryAfter: retryAfter)
        }
    }

    /// Throws 429 when `key`'s bucket is empty, without taking a token: for limits that count
    /// failures, checked before the attempt and drawn from (``spend(_:capacity:period:now:)``) only
    /// when it fails.
    public func ensureAvailable(_ key: String, capacity: Int, period: TimeInterval, now: Date = Date()) async throws {
        guard capacity > 0, var bucket = try await existing(key, capacity: capacity, period: period, now: now) else {
            return
        }
        if case .limited(let retryAfter) = bucket.take(now: now) { throw APIError.rateLimited(retryAfter: retryAfter) }
    }

    /// Takes a token from `key`'s bucket if one is left (a failure counted after the fact).
    public func spend(_ key: String, capacity: Int, period: TimeInterval, now: Date = Date()) async throws {
        guard capacity > 0 else { return }
        _ = try await take(key, capacity: capacity, period: period, now: now)
    }

    /// Whether `key`'s bucket has been drawn from and has not refilled yet.
    public func isDrawn(_ key: String, capacity: Int, period: TimeInterval, now: Date = Date()) async throws -> Bool {
        guard capacity > 0 else { return false }
        return try await existing(key, capacity: capacity, period: period, now: now).map { !$0.isFull(now: now) }
            ?? false
    }

    /// Takes a token from `key`'s bucket (full if new).
    private func take(_ key: String, capacity: Int, period: TimeInterval, now: Date) async throws
        -> TokenBucket.TakeResult
    {
        if let store { return try await store.take(key, capacity: capacity, period: period, now: now) }
        sweep(now: now)
        var bucket = buckets[key] ?? TokenBucket(capacity: capacity, period: period, now: now)
        let result = bucket.take(now: now)
        buckets[key] = bucket
        return result
    }

    /// `key`'s bucket if it was ever drawn from.
    private func existing(_ key: String, capacity: Int, period: TimeInterval, now: Date) async throws -> TokenBucket? {
        if let store { return try await store.read(key, capacity: capacity, period: period, now: now) }
        return buckets[key]
    }

    /// Forgets full buckets once a minute so memory stays bounded by recent clients.
    private func sweep(now: Date) {
        guard now.timeIntervalSince(lastSweep) > 60 else { return }
        lastSweep = now
        buckets = buckets.filter { !$0.value.isFull(now: now) }
    }
}
