/// On SQLite a message is numbered and stored by one `INSERT … SELECT` from its conversation;
/// this trigger then moves the conversation's counters in the same statement (PostgreSQL does
/// both in one statement with a data-modifying `WITH`).
struct MessageNumbering: Migration {
    let name = "0018_message_numbering"

    func statements(for kind: DatabaseKind) -> [String] {
        guard kind == .sqlite else { return [] }
        return [
            """
            CREATE TRIGGER messages_number AFTER INSERT ON messages BEGIN
                UPDATE conversations SET last_seq = NEW.seq, updated_at = NEW.created_at,
                    read_a = CASE WHEN user_a = NEW.sender_id THEN NEW.seq ELSE read_a END,
                    read_b = CASE WHEN user_b = NEW.sender_id THEN NEW.seq ELSE read_b END
                WHERE id = NEW.conversation_id;
            END
            """
        ]
    }
}
