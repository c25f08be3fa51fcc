import Foundation

/// When a failed job runs again: exponential backoff with a cap, and a dead state after
/// `maxAttempts` failures.
public struct RetryPolicy: Sendable, Equatable {
    /// Delay after the first failure.
    public var baseDelay: TimeInterval
    /// The longest delay between two attempts.
    public var maxDelay: TimeInterval

    /// Creates a policy.
    public init(baseDelay: TimeInterval = 5, maxDelay: TimeInterval = 3600) {
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The delay before the next attempt, after `attempts` attempts have failed (1-based):
    /// `baseDelay · 2^(attempts−1)`, capped at `maxDelay`.
    public func delay(afterAttempts attempts: Int) -> TimeInterval {
        let exponent = Double(max(0, attempts - 1))
        return min(maxDelay, baseDelay * pow(2, min(exponent, 40)))
    }

    /// What happens after a failure: retry at a time, or give up.
    public func next(afterAttempts attempts: Int, maxAttempts: Int, now: Date) -> Decision {
        if attempts >= maxAttempts { return .dead }
        return .retry(at: now.addingTimeInterval(delay(afterAttempts: attempts)))
    }

    /// The outcome of ``next(afterAttempts:maxAttempts:now:)``.
    public enum Decision: Sendable, Equatable {
        case retry(at: Date)
        case dead
    }
}
