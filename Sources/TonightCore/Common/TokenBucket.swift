import Foundation

/// A token bucket: `capacity` requests at once, refilled evenly over `period`.
///
/// Pure value type; the server keeps one per rate-limited key.
public struct TokenBucket: Sendable, Equatable {
    /// The most tokens the bucket holds.
    public let capacity: Double
    /// Seconds to refill the whole bucket.
    public let period: TimeInterval
    /// Tokens available at `updatedAt`.
    public private(set) var tokens: Double
    /// When `tokens` was last computed.
    public private(set) var updatedAt: Date

    /// A full bucket.
    public init(capacity: Int, period: TimeInterval, now: Date) {
        self.capacity = Double(max(1, capacity))
        self.period = max(0.001, period)
        self.tokens = Double(max(1, capacity))
        self.updatedAt = now
    }

    /// A bucket as stored: `tokens` at `updatedAt` (at most `capacity`).
    public init(capacity: Int, period: TimeInterval, tokens: Double, updatedAt: Date) {
        self.capacity = Double(max(1, capacity))
        self.period = max(0.001, period)
        self.tokens = min(Double(max(1, capacity)), tokens)
        self.updatedAt = updatedAt
    }

    /// Takes one token if there is one; otherwise says how many seconds until there is.
    public mutating func take(now: Date) -> TakeResult {
        refill(now: now)
        if tokens >= 1 {
            tokens -= 1
            return .allowed
        }
        let perSecond = capacity / period
        return .limited(retryAfter: max(1, Int(((1 - tokens) / perSecond).rounded(.up))))
    }

    /// Whether the bucket is full again at `now` (so it can be forgotten).
    public func isFull(now: Date) -> Bool {
        var copy = self
        copy.refill(now: now)
        return copy.tokens >= capacity
    }

    private mutating func refill(now: Date) {
        let elapsed = max(0, now.timeIntervalSince(updatedAt))
        tokens = min(capacity, tokens + elapsed * capacity / period)
        updatedAt = now
    }

    /// The outcome of ``take(now:)``.
    public enum TakeResult: Sendable, Equatable {
        case allowed
        case limited(retryAfter: Int)
    }
}
