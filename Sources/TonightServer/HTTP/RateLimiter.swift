import Foundation
import TonightCore

/// In-process token buckets keyed by purpose and client (`login-ip:1.2.3.4`). Limits hold per
/// server process; behind a load balancer each instance limits on its own.
public actor RateLimiter {
    private var buckets: [String: TokenBucket] = [:]
    private var lastSweep = Date()

    /// Creates an empty limiter.
    public init() {}

    /// Takes one token for `key` from a bucket of `capacity` per `period` seconds; throws 429
    /// with Retry-After when empty. A capacity of 0 or less disables the limit.
    public func check(_ key: String, capacity: Int, period: TimeInterval, now: Date = Date()) throws {
        guard capacity > 0 else { return }
        sweep(now: now)
        var bucket = buckets[key] ?? TokenBucket(capacity: capacity, period: period, now: now)
        let result = bucket.take(now: now)
        buckets[key] = bucket
        if case .limited(let retryAfter) = result { throw APIError.rateLimited(retryAfter: retryAfter) }
    }

    /// Throws 429 when `key`'s bucket is empty, without taking a token: for limits that count
    /// failures, checked before the attempt and drawn from (``spend(_:capacity:period:now:)``) only
    /// when it fails.
    public func ensureAvailable(_ key: String, capacity: Int, period: TimeInterval, now: Date = Date()) throws {
        guard capacity > 0, var bucket = buckets[key] else { return }
        if case .limited(let retryAfter) = bucket.take(now: now) { throw APIError.rateLimited(retryAfter: retryAfter) }
    }

    /// Takes a token from `key`'s bucket if one is left (a failure counted after the fact).
    public func spend(_ key: String, capacity: Int, period: TimeInterval, now: Date = Date()) {
        guard capacity > 0 else { return }
        sweep(now: now)
        var bucket = buckets[key] ?? TokenBucket(capacity: capacity, period: period, now: now)
        _ = bucket.take(now: now)
        buckets[key] = bucket
    }

    /// Whether `key`'s bucket has been drawn from and has not refilled yet.
    public func isDrawn(_ key: String, now: Date = Date()) -> Bool {
        buckets[key].map { !$0.isFull(now: now) } ?? false
    }

    /// Forgets full buckets once a minute so memory stays bounded by recent clients.
    private func sweep(now: Date) {
        guard now.timeIntervalSince(lastSweep) > 60 else { return }
        lastSweep = now
        buckets = buckets.filter { !$0.value.isFull(now: now) }
    }
}
