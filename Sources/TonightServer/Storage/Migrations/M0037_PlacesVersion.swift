/// A version that moves whenever a place is added, changed or removed, so that nearby-places
/// searches can keep positions and rows in memory (``NearbyIndex``) and trust them while it holds.
///
/// SQLite keeps a counter row (`places_version`) written in the transaction of the change, by any
/// process: row triggers for updates and deletes; inserts move it themselves, once per transaction
/// (``Database/movePlacesVersion(on:)``), so that an import of a million places does not pay a
/// trigger per row. PostgreSQL sends `places` on the live channel (as migration 0028 does for the
/// feed) from statement triggers, which every instance counts in its own version
/// (``ClusterFeedVersion``).
struct PlacesVersion: Migration {
    let name = "0037_places_version"

    func statements(for kind: DatabaseKind) -> [String] {
        switch kind {
        case .sqlite:
            ["CREATE TABLE places_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)"]
                + ["INSERT INTO places_version (id, version) VALUES (1, 0)"]
                + ["UPDATE", "DELETE"].map { event in
                    """
                    CREATE TRIGGER places_version_\(event.lowercased()) AFTER \(event) ON places FOR EACH ROW \
                    BEGIN UPDATE places_version SET version = version + 1 WHERE id = 1; END
                    """
                }
        case .postgres:
            [
                """
                CREATE TRIGGER places_version AFTER INSERT OR UPDATE OR DELETE ON places FOR EACH STATEMENT \
                EXECUTE FUNCTION tonight_notify_change('places')
                """
            ]
        }
    }
}
