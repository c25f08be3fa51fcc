/// Commits concurrent votes in groups (a ``GroupQueue``): while one group's transaction runs, new
/// votes queue, and the next transaction takes all of them (up to 500). One vote alone still
/// commits at once; a thousand at the same moment cost a handful of transactions instead of a
/// thousand. Every caller gets the outcome of its own change, after its group committed.
///
/// A group that gets no answer from the database within ``deadline`` (``Database/groupDeadline``)
/// fails its callers (503 `database_unavailable`: a vote is a PUT, safe to repeat) and the batcher
/// goes on with the next group: one hung call on a lost connection no longer stops every later
/// vote. A group that found an SQLite file busy fails its callers with 503 `database_busy`, and
/// none of its votes is stored.
struct VoteBatcher: Sendable {
    /// How long one group may wait for the database.
    let deadline: Duration
    private let queue: GroupQueue<VoteChange, VoteOutcome>

    /// Creates a batcher over `repository`.
    init(
        repository: PostRepository, flagThreshold: Int, notifier: Notifier?, maxBatch: Int = 500,
        deadline: Duration = .seconds(10)
    ) {
        self.deadline = deadline
        queue = GroupQueue(maxBatch: maxBatch) { changes in
            do {
                let (outcomes, notifications) = try await withDeadline(deadline) {
                    try await repository.apply(changes, flagThreshold: flagThreshold, now: Clock.millis())
                }
                // Beside the group's answers (the voters do not wait for it) and without holding
                // up the next group; a milestone is rare, so such tasks are few.
                if !notifications.isEmpty, let notifier {
                    Task { _ = try? await withDeadline(deadline) { await notifier.publish(notifications) } }
                }
                return outcomes.map { .success($0) }
            } catch {
                return changes.map { _ in .failure(error) }
            }
        }
    }

    /// Applies one change with whichever group it joins; returns its outcome.
    func submit(_ change: VoteChange) async throws -> VoteOutcome {
        try await queue.submit(change)
    }
}
