/// Live messages too large for a PostgreSQL notification (8000 bytes) wait here for a moment;
/// the notification carries the row id.
struct CreateLiveOutbox: Migration {
    let name = "0016_create_live_outbox"

    func statements(for kind: DatabaseKind) -> [String] {
        ["CREATE TABLE live_outbox (id TEXT PRIMARY KEY, payload TEXT NOT NULL, created_at BIGINT NOT NULL)"]
    }
}
