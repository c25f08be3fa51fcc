import Foundation
import PostgresNIO
import SQLKit
import TonightAPI
import TonightCore

/// How a conversation began (a match on a wall, or a direct message), as the contract names it.
typealias ConversationKind = Components.Schemas.ConversationKind

/// A row of `conversations`.
struct ConversationRecord: Sendable, Equatable {
    var id: String
    var kind: ConversationKind
    var userA: String
    var userB: String
    var matchID: String?
    var lastSeq: Int64
    var readA: Int64
    var readB: Int64
    var createdAt: Int64
    var updatedAt: Int64

    func includes(_ user: String) -> Bool { user == userA || user == userB }
    func other(than user: String) -> String { user == userA ? userB : userA }
    /// Whether its two members may still write, given whether they are `friends`: a match
    /// conversation exists only with its match; a direct one needs the friendship.
    func allowsWriting(friends: Bool) -> Bool { matchID != nil || friends }
    /// `user`'s read position.
    func read(of user: String) -> Int64 { user == userA ? readA : readB }
    /// How many messages `user` has not read.
    func unread(for user: String) -> Int { Int(max(0, lastSeq - read(of: user))) }
}

/// A row of `messages`.
struct MessageRecord: Sendable, Equatable {
    var conversationID: String
    var seq: Int64
    var id: String
    var senderID: String
    var clientID: String?
    var text: String
    var createdAt: Int64
}

/// Conversations and messages.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct ChatRepository: Sendable {
    let db: any SQLDatabase
    let database: Database
    /// Stores messages in groups (see ``MessageBatcher``).
    let batcher: MessageBatcher

    init(db: any SQLDatabase, database: Database, batcher: MessageBatcher? = nil) {
        self.db = db
        self.database = database
        self.batcher = batcher ?? MessageBatcher(database: database)
    }

    static let columns = "id, kind, user_a, user_b, match_id, last_seq, read_a, read_b, created_at, updated_at"
    fileprivate static let messageColumns = "conversation_id, seq, id, sender_id, client_id, text, created_at"

    func conversation(id: String) async throws -> ConversationRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM conversations WHERE id = \(bind: id)").first()
            .map(Self.decode)
    }

    /// Why a message was refused (``send(in:from:text:clientID:now:)`` checks as it
    /// stores): the conversation, if any, and whether its members may write (the store's rule).
    func writingRights(_ id: String) async throws -> (conversation: ConversationRecord, writable: Bool)? {
        let sql: SQLQueryString = """
            SELECT \(unsafeRaw: Self.columns), \(unsafeRaw: Self.writable("conversations")) AS writable
            FROM conversations WHERE id = \(bind: id)
            """
        return try await db.raw(sql).first().map {
            (try Self.decode($0), try $0.decode(column: "writable", as: Bool.self))
        }
    }

    /// The pair's conversation, made (of `kind`) if there is none.
    func open(_ a: String, _ b: String, kind: ConversationKind, now: Int64) async throws -> ConversationRecord {
        try await Self.open(a, b, kind: kind, matchID: nil, now: now, on: db)
    }

    /// The pair's conversation on `db` (inside the caller's transaction), made if missing; a
    /// match conversation belongs to its match.
    static func open(
        _ a: String, _ b: String, kind: ConversationKind, matchID: String?, now: Int64, on db: any SQLDatabase
    )
        async throws -> ConversationRecord
    {
        let pair = WallRules.pair(a, b)
        try await db.raw(
            """
            INSERT INTO conversations (id, kind, user_a, user_b, match_id, created_at, updated_at)
            VALUES (\(bind: Identifier.make()), \(bind: kind), \(bind: pair.first), \(bind: pair.second),
                \(bind: matchID), \(bind: now), \(bind: now))
            ON CONFLICT (user_a, user_b) DO UPDATE SET
                match_id = COALESCE(excluded.match_id, conversations.match_id),
                kind = CASE WHEN excluded.match_id IS NULL THEN conversations.kind ELSE excluded.kind END
            """
        ).run()
        guard
            let row = try await db.raw(
                """
                SELECT \(unsafeRaw: columns) FROM conversations
                WHERE user_a = \(bind: pair.first) AND user_b = \(bind: pair.second)
                """
            ).first()
        else { throw APIError(status: 500, code: .internalError, detail: "The conversation vanished.") }
        return try decode(row)
    }

    /// The pair's conversation, if any.
    func conversation(between a: String, and b: String) async throws -> ConversationRecord? {
        let pair = WallRules.pair(a, b)
        return try await db.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM conversations
            WHERE user_a = \(bind: pair.first) AND user_b = \(bind: pair.second)
            """
        ).first().map(Self.decode)
    }

    /// Online state and last-seen time of users, by id.
    func presence(of users: [String]) async throws -> [String: (onlineUntil: Int64, lastSeen: Int64?)] {
        guard !users.isEmpty else { return [:] }
        let rows = try await db.raw(
            "SELECT id, online_until, last_seen_at FROM users WHERE id IN (\(binds: Array(Set(users))))"
        ).all()
        var result: [String: (onlineUntil: Int64, lastSeen: Int64?)] = [:]
        for row in rows {
            result[try row.decode(column: "id", as: String.self)] = (
                try row.decode(column: "online_until", as: Int64.self),
                try row.decode(column: "last_seen_at", as: Int64?.self)
            )
        }
        return result
    }

    /// `user`'s conversations by latest activity, before a keyset position.
    func conversations(of user: String, before: (Int64, String)?, limit: Int) async throws -> [ConversationRecord] {
        var sql: SQLQueryString =
            "SELECT \(unsafeRaw: Self.columns) FROM conversations WHERE (user_a = \(bind: user) OR user_b = \(bind: user))"
        if let before { sql = sql + " AND " + Keyset.before(before, "updated_at", "id") }
        sql = sql + " ORDER BY updated_at DESC, id DESC LIMIT \(unsafeRaw: String(limit))"
        return try await db.raw(sql).all().map(Self.decode)
    }

    /// The last message of each conversation, by conversation id.
    func lastMessages(of conversations: [ConversationRecord]) async throws -> [String: MessageRecord] {
        let keyed = conversations.filter { $0.lastSeq > 0 }
        guard !keyed.isEmpty else { return [:] }
        let rows = try await db.raw(
            """
            SELECT \(unsafeRaw: Self.messageColumns.split(separator: ",").map { "m." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
            FROM messages m JOIN conversations c ON c.id = m.conversation_id AND m.seq = c.last_seq
            WHERE c.id IN (\(binds: keyed.map(\.id)))
            """
        ).all()
        return Dictionary(uniqueKeysWithValues: try rows.map(Self.decodeMessage).map { ($0.conversationID, $0) })
    }

    func totalUnread(of user: String) async throws -> Int {
        let row = try await db.raw(
            """
            SELECT CAST(COALESCE(SUM(CASE WHEN user_a = \(bind: user) THEN last_seq - read_a ELSE last_seq - read_b END), 0)
                AS BIGINT) AS n
            FROM conversations WHERE user_a = \(bind: user) OR user_b = \(bind: user)
            """
        ).first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }

    /// Stores a message as the conversation's next one, if `sender` may write there (see
    /// ``MessageBatcher/Stored``); with a `clientID` already used by the sender there, returns
    /// that message instead (`stored` nil). Nil when the message was refused: no such
    /// conversation, not a member, or no longer friends or matched (``writingRights(_:)``
    /// tells which).
    func send(in conversationID: String, from sender: String, text: String, clientID: String?, now: Int64)
        async throws -> (message: MessageRecord, stored: MessageBatcher.Stored?)?
    {
        if let clientID, let earlier = try await message(conversationID, sender: sender, clientID: clientID) {
            return (earlier, nil)
        }
        let id = Identifier.make()
        let pending = MessageBatcher.Pending(
            conversationID: conversationID, id: id, sender: sender, clientID: clientID, text: text, now: now)
        do {
            guard let stored = try await batcher.store(pending) else { return nil }
            let message = MessageRecord(
                conversationID: conversationID, seq: stored.seq, id: id,
                senderID: sender, clientID: clientID, text: text, createdAt: now)
            return (message, stored)
        } catch  where Database.isUniqueViolation(error) {
            // The same client id raced with itself: the other attempt stored it.
            guard let clientID, let earlier = try await message(conversationID, sender: sender, clientID: clientID)
            else { throw error }
            return (earlier, nil)
        }
    }

    /// Whether the members of conversation `table` may write to each other: it is a match's, or
    /// they are friends (``ConversationRecord/allowsWriting(friends:)`` says the same in Swift,
    /// for the conversation's own answers).
    fileprivate static func writable(_ table: String) -> String {
        """
        (\(table).match_id IS NOT NULL OR EXISTS (SELECT 1 FROM friends
            WHERE friends.user_id = \(table).user_a AND friends.friend_id = \(table).user_b))
        """
    }

    /// Stores `messages` with one statement, each only if its sender may write there (a member,
    /// and friends with the other unless it is a match's conversation), numbered as storing them
    /// one after another would (in the order given within each conversation, the sender's read
    /// position moved to their own last one), and returns what was stored by message id, with the
    /// members and until when the recipient is online (none for one refused). It fails as a whole,
    /// a client id stored twice included.
    ///
    /// One statement for the whole group: on PostgreSQL one round trip, checks included, and
    /// prepared (``StoreMessages``); on SQLite one statement instead of one per message, each of
    /// which cost a hop to SQLite's threads and a parse (``storeMessagesSQLite``).
    static func insertAll(_ messages: [MessageBatcher.Pending], in database: Database) async throws
        -> [String: MessageBatcher.Stored]
    {
        var stored: [String: MessageBatcher.Stored] = [:]
        if database.kind == .sqlite {
            let json = try Self.encoded(messages)
            let rows = try await database.groupWrite { writer in
                try await writer.rows(prepared: Self.storeMessagesSQLite, [.text(json)])
            }
            for row in rows {
                let id = try row.decode(column: "id", as: String.self)
                stored[id] = try .init(seq: try row.decode(column: "seq", as: Int64.self), row: row)
            }
            return stored
        }
        for (id, seq, userA, userB, onlineUntil) in try await database.execute(prepared: StoreMessages(messages)) {
            stored[id] = .init(seq: seq, userA: userA, userB: userB, recipientOnlineUntil: onlineUntil)
        }
        return stored
    }

    /// SQLite's statement of ``insertAll(_:in:)``, for the messages as a JSON array: numbered from
    /// their conversations' counters in a materialised step, so every number is read before the
    /// first row is stored; the trigger `messages_number` then moves each conversation's counters
    /// row by row, in the order given. Run on the group writer's connection, prepared once
    /// (``Database/groupWrite(_:)``).
    private static let storeMessagesSQLite = """
        WITH ranked AS MATERIALIZED (
            SELECT conversations.id AS conversation_id, input.key AS ord,
                conversations.last_seq + row_number() OVER (PARTITION BY conversations.id ORDER BY input.key) AS seq,
                input.value ->> 'id' AS id, input.value ->> 'sender_id' AS sender_id,
                input.value ->> 'client_id' AS client_id, input.value ->> 'body' AS body,
                input.value ->> 'created_at' AS created_at
            FROM json_each(?1) AS input
            JOIN conversations ON conversations.id = input.value ->> 'conversation_id'
                AND input.value ->> 'sender_id' IN (conversations.user_a, conversations.user_b)
                AND \(writable("conversations")))
        INSERT INTO messages (\(messageColumns))
        SELECT conversation_id, seq, id, sender_id, client_id, body, created_at FROM ranked ORDER BY ord
        RETURNING id, seq,
            (SELECT user_a FROM conversations c WHERE c.id = messages.conversation_id) AS user_a,
            (SELECT user_b FROM conversations c WHERE c.id = messages.conversation_id) AS user_b,
            COALESCE((SELECT online_until FROM users WHERE users.id = (
                SELECT CASE WHEN c.user_a = messages.sender_id THEN c.user_b ELSE c.user_a END
                FROM conversations c WHERE c.id = messages.conversation_id)), 0) AS online_until
        """

    /// The statement of ``insertAll(_:in:)``, prepared: one for any number of messages, so each
    /// connection plans it once. Planned anew each time, its common table expressions cost
    /// PostgreSQL more than running them. The messages travel as one JSON array: PostgreSQL keeps a
    /// generic plan only when it estimates the custom ones no cheaper, and it sees the length of
    /// an array parameter (so it planned each group again) but not of a JSON one.
    struct StoreMessages: PostgresPreparedStatement {
        typealias Row = (String, Int64, String, String, Int64)
        static let sql = """
            WITH input AS (
                SELECT * FROM ROWS FROM (json_to_recordset($1::text::json) AS (conversation_id text, id text,
                    sender_id text, client_id text, body text, created_at int8)) WITH ORDINALITY
                    AS t(conversation_id, id, sender_id, client_id, body, created_at, ord)),
            allowed AS (
                SELECT input.*, conversations.user_a, conversations.user_b FROM input
                JOIN conversations ON conversations.id = input.conversation_id
                    AND input.sender_id IN (conversations.user_a, conversations.user_b)
                    AND \(ChatRepository.writable("conversations"))),
            ranked AS (
                SELECT allowed.*, row_number() OVER (PARTITION BY conversation_id ORDER BY ord) AS k FROM allowed),
            totals AS (
                SELECT conversation_id, count(*) AS n, max(created_at) AS now FROM ranked GROUP BY conversation_id),
            c AS (
                UPDATE conversations SET last_seq = last_seq + totals.n, updated_at = totals.now,
                    read_a = COALESCE(last_seq + (SELECT max(k) FROM ranked
                        WHERE ranked.conversation_id = conversations.id AND ranked.sender_id = conversations.user_a), read_a),
                    read_b = COALESCE(last_seq + (SELECT max(k) FROM ranked
                        WHERE ranked.conversation_id = conversations.id AND ranked.sender_id = conversations.user_b), read_b)
                FROM totals WHERE conversations.id = totals.conversation_id
                RETURNING conversations.id, conversations.last_seq - totals.n AS base),
            stored AS (
                INSERT INTO messages (\(ChatRepository.messageColumns))
                SELECT c.id, c.base + ranked.k, ranked.id, ranked.sender_id, ranked.client_id, ranked.body,
                    ranked.created_at
                FROM ranked JOIN c ON c.id = ranked.conversation_id
                RETURNING id, seq)
            SELECT stored.id, stored.seq, ranked.user_a, ranked.user_b, COALESCE(users.online_until, 0)
            FROM stored JOIN ranked ON ranked.id = stored.id
            LEFT JOIN users ON users.id = CASE WHEN ranked.sender_id = ranked.user_a
                THEN ranked.user_b ELSE ranked.user_a END
            """
        let messages: [MessageBatcher.Pending]

        init(_ messages: [MessageBatcher.Pending]) { self.messages = messages }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(try ChatRepository.encoded(messages))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// `messages` as the JSON array both engines' group statements read.
    fileprivate static func encoded(_ messages: [MessageBatcher.Pending]) throws -> String {
        String(decoding: try encoder.encode(messages), as: UTF8.self)
    }

    private static let encoder = JSONEncoder()

    /// Messages after `since` (oldest first), or the newest before `before`, ascending.
    func messages(in conversationID: String, before: Int64?, since: Int64?, limit: Int) async throws
        -> [MessageRecord]
    {
        var sql: SQLQueryString =
            "SELECT \(unsafeRaw: Self.messageColumns) FROM messages WHERE conversation_id = \(bind: conversationID)"
        if let since {
            sql = sql + " AND seq > \(bind: since)"
            if let before { sql = sql + " AND seq < \(bind: before)" }
            sql = sql + " ORDER BY seq LIMIT \(unsafeRaw: String(limit))"
            return try await db.raw(sql).all().map(Self.decodeMessage)
        }
        if let before { sql = sql + " AND seq < \(bind: before)" }
        sql = sql + " ORDER BY seq DESC LIMIT \(unsafeRaw: String(limit))"
        return try await db.raw(sql).all().map(Self.decodeMessage).reversed()
    }

    /// Moves `user`'s read position forward to `seq` (never back, never past the last message).
    func markRead(_ conversationID: String, user: String, upTo seq: Int64) async throws -> ConversationRecord? {
        try await db.raw(
            """
            UPDATE conversations SET
                read_a = CASE WHEN user_a = \(bind: user) AND \(bind: seq) > read_a
                    THEN CASE WHEN \(bind: seq) < last_seq THEN \(bind: seq) ELSE last_seq END ELSE read_a END,
                read_b = CASE WHEN user_b = \(bind: user) AND \(bind: seq) > read_b
                    THEN CASE WHEN \(bind: seq) < last_seq THEN \(bind: seq) ELSE last_seq END ELSE read_b END
            WHERE id = \(bind: conversationID) RETURNING \(unsafeRaw: Self.columns)
            """
        ).first().map(Self.decode)
    }

    private func message(_ conversationID: String, sender: String, clientID: String) async throws -> MessageRecord? {
        try await db.raw(
            """
            SELECT \(unsafeRaw: Self.messageColumns) FROM messages
            WHERE conversation_id = \(bind: conversationID) AND sender_id = \(bind: sender) AND client_id = \(bind: clientID)
            """
        ).first().map(Self.decodeMessage)
    }

    static func decode(_ row: any SQLRow) throws -> ConversationRecord {
        ConversationRecord(
            id: try row.decode(column: "id", as: String.self),
            kind: try row.decode(column: "kind", as: ConversationKind.self),
            userA: try row.decode(column: "user_a", as: String.self),
            userB: try row.decode(column: "user_b", as: String.self),
            matchID: try row.decode(column: "match_id", as: String?.self),
            lastSeq: try row.decode(column: "last_seq", as: Int64.self),
            readA: try row.decode(column: "read_a", as: Int64.self),
            readB: try row.decode(column: "read_b", as: Int64.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self))
    }

    static func decodeMessage(_ row: any SQLRow) throws -> MessageRecord {
        MessageRecord(
            conversationID: try row.decode(column: "conversation_id", as: String.self),
            seq: try row.decode(column: "seq", as: Int64.self),
            id: try row.decode(column: "id", as: String.self),
            senderID: try row.decode(column: "sender_id", as: String.self),
            clientID: try row.decode(column: "client_id", as: String?.self),
            text: try row.decode(column: "text", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self))
    }
}
