import Foundation

/// Runs `body`, failing instead of hanging if it has not finished after `limit` (a hang detector
/// for code that must never wait on a peer, not a timing claim).
func finishes<T: Sendable>(
    within limit: Duration = .seconds(90), _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        guard let first else { throw CancellationError() }
        return first
    }
}

/// Polls `condition` every 100 ms for up to `limit`.
func eventually(within limit: Duration = .seconds(60), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}
