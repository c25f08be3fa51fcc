import Logging

/// Commits concurrent votes in groups: while one group's transaction runs, new votes queue, and
/// the next transaction takes all of them (up to ``maxBatch``). One vote alone still commits at
/// once; a thousand at the same moment cost a handful of transactions instead of a thousand.
/// Every caller gets the outcome of its own change, after its group committed.
///
/// A group that gets no answer from the database within ``deadline`` fails its callers (503
/// `database_unavailable`: a vote is a PUT, safe to repeat) and the batcher goes on with the next
/// group: one hung call on a lost connection no longer stops every later vote.
actor VoteBatcher {
    private let repository: PostRepository
    private let flagThreshold: Int
    private let maxBatch: Int
    private let notifier: Notifier?
    private var queue: [(change: VoteChange, reply: CheckedContinuation<VoteOutcome, any Error>)] = []
    private var running = false
    /// How long one group may wait for the database.
    let deadline: Duration

    /// Creates a batcher over `repository`.
    init(
        repository: PostRepository, flagThreshold: Int, notifier: Notifier?, maxBatch: Int = 500,
        deadline: Duration = .seconds(10)
    ) {
        self.repository = repository
        self.deadline = deadline
        self.notifier = notifier
        self.flagThreshold = flagThreshold
        self.maxBatch = maxBatch
    }

    /// Applies one change with whichever group it joins; returns its outcome.
    func submit(_ change: VoteChange) async throws -> VoteOutcome {
        try await withCheckedThrowingContinuation { continuation in
            queue.append((change, continuation))
            if !running {
                running = true
                Task { await self.drain() }
            }
        }
    }

    private func drain() async {
        while !queue.isEmpty {
            let batch = Array(queue.prefix(maxBatch))
            queue.removeFirst(batch.count)
            do {
                let (repository, changes, threshold) = (repository, batch.map(\.change), flagThreshold)
                let (outcomes, notifications) = try await withDeadline(deadline) {
                    try await repository.apply(changes, flagThreshold: threshold, now: Clock.millis())
                }
                for (item, outcome) in zip(batch, outcomes) { item.reply.resume(returning: outcome) }
                if !notifications.isEmpty, let notifier {
                    _ = try? await withDeadline(deadline) { await notifier.publish(notifications) }
                }
            } catch {
                for item in batch { item.reply.resume(throwing: error) }
            }
        }
        running = false
    }
}
