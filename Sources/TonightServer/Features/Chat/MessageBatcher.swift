/// Stores concurrent chat messages in groups, as ``VoteBatcher`` commits votes: while one group's
/// transaction runs, new messages queue, and the next transaction stores all of them (up to
/// ``maxBatch``), each numbered in its conversation as alone: on PostgreSQL by one statement for
/// the whole group (one round trip), on SQLite by a statement each in one transaction. One
/// message alone still commits at once. Every sender gets its own message's number, after its
/// group committed.
///
/// A group that fails as a whole (PostgreSQL ends a transaction at its first error, such as a
/// client id that raced with itself from another instance) is stored again one message at a time,
/// so one message's error reaches only its sender. A group that gets no answer within
/// ``deadline`` (the database busy timeout, `DATABASE_BUSY_TIMEOUT_MS`) fails its senders (503
/// `database_unavailable`; a message with a client id is safe to send again).
actor MessageBatcher {
    /// One message to store.
    struct Pending: Sendable {
        var conversationID: String
        var id: String
        var sender: String
        var clientID: String?
        var text: String
        var now: Int64
    }

    private let database: Database
    private let maxBatch: Int
    private var queue: [(message: Pending, reply: CheckedContinuation<Int64?, any Error>)] = []
    private var running = false
    /// How long one group may wait for the database.
    let deadline: Duration

    /// Creates a batcher writing to `database`.
    init(database: Database, maxBatch: Int = 16, deadline: Duration = .seconds(10)) {
        self.database = database
        self.maxBatch = maxBatch
        self.deadline = deadline
    }

    /// Stores `message`; returns its number in the conversation, or nil when the conversation
    /// does not exist. Throws the database's error for this message (a unique violation of its
    /// client id, for one).
    func store(_ message: Pending) async throws -> Int64? {
        try await withCheckedThrowingContinuation { continuation in
            queue.append((message, continuation))
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
            let (database, messages) = (database, batch.map(\.message))
            do {
                let numbers = try await withDeadline(deadline) {
                    // Alone, a message is one statement, with no transaction around it.
                    if messages.count == 1 {
                        return [try await Self.store(messages[0], in: database)]
                    }
                    if database.kind == .postgres {
                        let numbers = try await ChatRepository.insertAll(messages, on: database.sql)
                        return messages.map { numbers[$0.id] }
                    }
                    return try await database.transaction { db in
                        var numbers: [Int64?] = []
                        for message in messages {
                            numbers.append(try await ChatRepository.insert(message, on: db, kind: database.kind))
                        }
                        return numbers
                    }
                }
                for (item, number) in zip(batch, numbers) { item.reply.resume(returning: number) }
            } catch is DeadlineExceeded {
                for item in batch { item.reply.resume(throwing: DeadlineExceeded(limit: deadline)) }
            } catch  where batch.count == 1 {
                batch[0].reply.resume(throwing: error)
            } catch {
                // One at a time, so each sender gets its own outcome.
                for item in batch {
                    let message = item.message
                    do {
                        let number = try await withDeadline(deadline) { try await Self.store(message, in: database) }
                        item.reply.resume(returning: number)
                    } catch {
                        item.reply.resume(throwing: error)
                    }
                }
            }
        }
        running = false
    }

    /// One message in a statement of its own.
    private static func store(_ message: Pending, in database: Database) async throws -> Int64? {
        try await database.write { db in try await ChatRepository.insert(message, on: db, kind: database.kind) }
    }
}
