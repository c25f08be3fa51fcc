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

    /// Forgets full buckets once a minute so memory stays bounded by recent clients.
    private func sweep(now: Date) {
        guard now.timeIntervalSince(lastSweep) > 60 else { return }
        lastSweep = now
        buckets = buckets.filter { !$0.value.isFull(now: now) }
    }
}
