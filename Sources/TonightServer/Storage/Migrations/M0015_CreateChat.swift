/// One-to-one conversations and their messages, and presence.
///
/// A conversation holds one pair (`user_a < user_b`, unique) with each side's read position;
/// `last_seq` numbers its messages 1, 2, 3… under the conversation's row lock, so the order is the
/// same for everyone and `seq` is the sync cursor. A message's `client_id` is unique per sender in
/// a conversation, so a retried send stores nothing twice. A match conversation ends with its
/// match. `users.online_until` is when a user's live sockets stop counting as online unless an
/// instance renews it (every 30 s while connected); `last_seen_at` is the last time it did.
struct CreateChat: Migration {
    let name = "0015_create_chat"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE conversations (
                id TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                user_a TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                user_b TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                match_id TEXT REFERENCES matches(id) ON DELETE CASCADE,
                last_seq BIGINT NOT NULL DEFAULT 0,
                read_a BIGINT NOT NULL DEFAULT 0,
                read_b BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (user_a, user_b)
            )
            """,
            "CREATE INDEX conversations_a ON conversations(user_a, updated_at)",
            "CREATE INDEX conversations_b ON conversations(user_b, updated_at)",
            """
            CREATE TABLE messages (
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                seq BIGINT NOT NULL,
                id TEXT NOT NULL UNIQUE,
                sender_id TEXT NOT NULL,
                client_id TEXT,
                text TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (conversation_id, seq)
            )
            """,
            "CREATE UNIQUE INDEX messages_client ON messages(conversation_id, sender_id, client_id)",
            "ALTER TABLE users ADD COLUMN online_until BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE users ADD COLUMN last_seen_at BIGINT",
        ]
    }
}
