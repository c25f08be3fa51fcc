/// The recommendation version (migration 0034) moved by what explore cards read too, so they can
/// be kept in memory as session recommendations are: a show or party changed or deleted, and a
/// member's favourite artists. Inserted events, performers, artists, categories and affinity come
/// in bulk (imports) or with an event's creation: those writes move the version once per
/// transaction themselves (``Database/moveRecommendationVersion(on:)``) instead of a row trigger
/// that would run for each of 300,000 rows of a feed import.
struct RecommendationVersionEvents: Migration {
    let name = "0035_recommendation_version_events"

    /// Every change that moves the version: table, trigger event, condition.
    static let changes: [(table: String, event: String, when: String?)] = [
        ("events", "UPDATE", "OLD.kind <> 'session' AND NEW.kind <> 'session'"),
        ("events", "DELETE", "OLD.kind <> 'session'"),
        ("favorite_artists", "INSERT", nil), ("favorite_artists", "DELETE", nil),
    ]

    func statements(for kind: DatabaseKind) -> [String] {
        Self.changes.enumerated().map { index, change in
            RecommendationVersion.trigger(
                "recs_version_events_\(index)", after: change.event, on: change.table, when: change.when, for: kind)
        }
    }
}
