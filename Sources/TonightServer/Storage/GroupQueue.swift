/// Handles concurrent requests in groups, one group at a time: while a group is being handled, new
/// items queue, and the next group takes all of them (up to `maxBatch`). One item alone is
/// handled at once. Every submitter gets its own item's outcome once its group is done.
///
/// What a group commit needs (``MessageBatcher``, ``VoteBatcher``): a thousand requests at the
/// same moment cost a handful of transactions instead of a thousand. The handler
/// bounds its own waits (a deadline on the database); the queue itself never waits for anything
/// else.
actor GroupQueue<Item: Sendable, Outcome: Sendable> {
    /// Handles a group; one result per item, in order.
    typealias Handler = @Sendable ([Item]) async -> [Result<Outcome, any Error>]

    /// A handler answered a different number of results than it was given items.
    struct MissingOutcome: Error {}

    private let maxBatch: Int
    private let handle: Handler
    private var queue: [(item: Item, reply: CheckedContinuation<Outcome, any Error>)] = []
    private var running = false

    /// A queue whose groups of at most `maxBatch` items go to `handle`.
    init(maxBatch: Int, handle: @escaping Handler) {
        self.maxBatch = max(1, maxBatch)
        self.handle = handle
    }

    /// Handles `item` with whichever group it joins; returns its outcome or throws its error.
    func submit(_ item: Item) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            queue.append((item, continuation))
            if !running {
                running = true
                Task { await self.drain() }
            }
        }
    }

    private func drain() async {
        while !queue.isEmpty {
            let group = Array(queue.prefix(maxBatch))
            queue.removeFirst(group.count)
            let results = await handle(group.map(\.item))
            for (index, entry) in group.enumerated() {
                entry.reply.resume(with: index < results.count ? results[index] : .failure(MissingOutcome()))
            }
        }
        running = false
    }
}
