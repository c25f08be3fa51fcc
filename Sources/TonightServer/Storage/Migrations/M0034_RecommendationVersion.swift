/// A version that moves whenever something a session recommendation reads changes, so that a
/// recommendation kept in memory (``RecommendationCache``) is answered only while it still holds.
/// What moves it: a session changed or deleted (its players, capacity, time, status), attendance,
/// friendships, blocks, dismissals, a member's preferences, home city or shown name, a place
/// changed or deleted.
///
/// Sessions themselves have no insert trigger: one is always inserted with its creator's
/// attendance in the same transaction, which moves the version; a feed import inserting 300,000
/// shows then pays nothing (a row trigger that only checks the kind made such an insert 1.5×
/// slower, measured with the `sqlite3` module).
///
/// SQLite keeps a counter row (`recs_version`) written in the transaction of the change, by any
/// process. PostgreSQL sends `recs` on the live channel instead (as migration 0028 does for the
/// feed), which every instance counts in its own version (``ClusterFeedVersion``).
struct RecommendationVersion: Migration {
    let name = "0034_recommendation_version"

    /// Every change that moves the version: table, trigger event, condition.
    static let changes: [(table: String, event: String, when: String?)] = [
        ("events", "UPDATE", "OLD.kind = 'session' OR NEW.kind = 'session'"),
        ("events", "DELETE", "OLD.kind = 'session'"),
        ("attendance", "INSERT", nil), ("attendance", "UPDATE", nil), ("attendance", "DELETE", nil),
        ("friends", "INSERT", nil), ("friends", "DELETE", nil),
        ("blocks", "INSERT", nil), ("blocks", "DELETE", nil),
        ("dismissals", "INSERT", nil), ("dismissals", "UPDATE", nil), ("dismissals", "DELETE", nil),
        ("users", "UPDATE OF preferences, home_city, username, display_name, avatar_url", nil),
        ("places", "UPDATE", nil), ("places", "DELETE", nil),
    ]

    func statements(for kind: DatabaseKind) -> [String] {
        let triggers = Self.changes.enumerated().map { index, change in
            Self.trigger("recs_version_\(index)", after: change.event, on: change.table, when: change.when, for: kind)
        }
        guard kind == .sqlite else { return triggers }
        return [
            "CREATE TABLE recs_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
            "INSERT INTO recs_version (id, version) VALUES (1, 0)",
        ] + triggers
    }

    /// A row trigger named `name` that moves the version after `event` on `table` (when `when`).
    static func trigger(_ name: String, after event: String, on table: String, when: String?, for kind: DatabaseKind)
        -> String
    {
        let when = when.map { "WHEN (\($0)) " } ?? ""
        return kind == .sqlite
            ? """
            CREATE TRIGGER \(name) AFTER \(event) ON \(table) FOR EACH ROW \(when)\
            BEGIN UPDATE recs_version SET version = version + 1 WHERE id = 1; END
            """
            : """
            CREATE TRIGGER \(name) AFTER \(event) ON \(table) FOR EACH ROW \(when)\
            EXECUTE FUNCTION tonight_notify_change('recs')
            """
    }
}
