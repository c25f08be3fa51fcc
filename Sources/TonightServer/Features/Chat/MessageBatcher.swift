import SQLKit

/// Stores concurrent chat messages in groups, as ``VoteBatcher`` commits votes: while one group's
/// statement runs, new messages queue, and the next statement stores all of them (a
/// ``GroupQueue``, up to 64 a group), each numbered in its conversation as alone, by one statement
/// for the whole group on either engine (``ChatRepository/insertAll(_:in:)``: the checks of who may
/// write included). One message alone still commits at once. Every sender gets
/// its own message's outcome (``Stored``), after its group committed.
///
/// A group that fails as a whole (its statement ends at its first error, such as a client id that
/// raced with itself from another instance) is stored again one message at a time,
/// so one message's error reaches only its sender; one that found the database busy fails all its
/// senders (503 `database_busy`). A group that gets no answer within ``deadline``
/// (``Database/groupDeadline``) fails its senders (503 `database_unavailable`; a message with a
/// client id is safe to send again).
struct MessageBatcher: Sendable {
    /// One message to store; encoded, it is a row as ``ChatRepository/StoreMessages`` reads it.
    struct Pending: Sendable, Encodable {
        var conversationID: String
        var id: String
        var sender: String
        var clientID: String?
        var text: String
        var now: Int64

        enum CodingKeys: String, CodingKey {
            case conversationID = "conversation_id"
            case id
            case sender = "sender_id"
            case clientID = "client_id"
            case text = "body"
            case now = "created_at"
        }
    }

    /// A stored message: its number, its conversation's members, and until when the member who
    /// did not send it is online (0 when never).
    struct Stored: Sendable, Equatable {
        var seq: Int64
        var userA: String
        var userB: String
        var recipientOnlineUntil: Int64

        init(seq: Int64, userA: String, userB: String, recipientOnlineUntil: Int64) {
            self.seq = seq
            self.userA = userA
            self.userB = userB
            self.recipientOnlineUntil = recipientOnlineUntil
        }

        /// The rest from `row`'s `user_a`, `user_b` and `online_until`.
        init(seq: Int64, row: any SQLRow) throws {
            self.seq = seq
            userA = try row.decode(column: "user_a", as: String.self)
            userB = try row.decode(column: "user_b", as: String.self)
            recipientOnlineUntil = try row.decode(column: "online_until", as: Int64.self)
        }
    }

    /// How long one group may wait for the database.
    let deadline: Duration
    private let queue: GroupQueue<Pending, Stored?>

    /// Creates a batcher writing to `database`. Groups of up to 64: a group is one statement, and
    /// SQLite writes one group at a time whatever its size, so 64 stored about a tenth more flat
    /// out than 16 (docs/benchmarks.md, Chat); on PostgreSQL the delivery p99 across two instances
    /// at 1,000 messages/s was the same within the runs' spread (19-71 ms with either).
    init(database: Database, maxBatch: Int = 64, deadline: Duration = .seconds(10)) {
        self.deadline = deadline
        queue = GroupQueue(maxBatch: maxBatch) { messages in
            await Self.store(messages, in: database, deadline: deadline)
        }
    }

    /// Stores `message` if its sender may write in its conversation (a member; friends with the
    /// other, or matched); nil when not. Throws the database's error for this message (a unique
    /// violation of its client id, for one).
    func store(_ message: Pending) async throws -> Stored? {
        try await queue.submit(message)
    }

    /// Stores one group: what became of each message, or its error.
    private static func store(_ messages: [Pending], in database: Database, deadline: Duration) async
        -> [Result<Stored?, any Error>]
    {
        do {
            return try await withDeadline(deadline) {
                let stored = try await ChatRepository.insertAll(messages, in: database)
                return messages.map { .success(stored[$0.id]) }
            }
        } catch is DeadlineExceeded {
            return messages.map { _ in .failure(DeadlineExceeded(limit: deadline)) }
        } catch  where messages.count == 1 || Database.isBusy(error) {
            // A busy database fails each message alike: one at a time, each would wait again.
            return messages.map { _ in .failure(error) }
        } catch {
            // One at a time, so each sender gets its own outcome.
            var results: [Result<Stored?, any Error>] = []
            for message in messages {
                do {
                    results.append(
                        .success(
                            try await withDeadline(deadline) {
                                try await ChatRepository.insertAll([message], in: database)[message.id]
                            }))
                } catch {
                    results.append(.failure(error))
                }
            }
            return results
        }
    }
}
