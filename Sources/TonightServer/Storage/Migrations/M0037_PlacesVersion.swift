/// A version that moves whenever a place is added, changed or removed, so that nearby-places
/// searches can keep positions and rows in memory (``NearbyIndex``) and trust them while it holds.
/// Session spots (`source = 'spot'`, which members add with their sessions) do not move it: nearby
/// searches never show them.
///
/// SQLite keeps a counter row (`places_version`) written in the transaction of the change, by any
/// process: row triggers for updates and deletes; inserts move it themselves, once per transaction
/// (``Database/movePlacesVersion(on:)``), so that an import of a million places does not pay a
/// trigger per row. PostgreSQL sends `places` on the live channel (as migration 0028 does for the
/// feed) from statement triggers that look at the statement's rows once (transition tables), which
/// every instance counts in its own version (``ClusterFeedVersion``).
struct PlacesVersion: Migration {
    let name = "0037_places_version"

    func statements(for kind: DatabaseKind) -> [String] {
        switch kind {
        case .sqlite:
            [
                "CREATE TABLE places_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
                "INSERT INTO places_version (id, version) VALUES (1, 0)",
                """
                CREATE TRIGGER places_version_update AFTER UPDATE ON places FOR EACH ROW \
                WHEN OLD.source IS NOT 'spot' OR NEW.source IS NOT 'spot' \
                BEGIN UPDATE places_version SET version = version + 1 WHERE id = 1; END
                """,
                """
                CREATE TRIGGER places_version_delete AFTER DELETE ON places FOR EACH ROW \
                WHEN OLD.source IS NOT 'spot' \
                BEGIN UPDATE places_version SET version = version + 1 WHERE id = 1; END
                """,
            ]
        case .postgres:
            [
                // Each branch names only the transition tables its event has.
                """
                CREATE FUNCTION tonight_notify_places() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP = 'INSERT' THEN
                        IF EXISTS (SELECT 1 FROM new_rows WHERE source IS DISTINCT FROM 'spot') THEN
                            PERFORM pg_notify('tonight_live', 'places');
                        END IF;
                    ELSIF TG_OP = 'UPDATE' THEN
                        IF EXISTS (SELECT 1 FROM new_rows WHERE source IS DISTINCT FROM 'spot')
                            OR EXISTS (SELECT 1 FROM old_rows WHERE source IS DISTINCT FROM 'spot') THEN
                            PERFORM pg_notify('tonight_live', 'places');
                        END IF;
                    ELSIF EXISTS (SELECT 1 FROM old_rows WHERE source IS DISTINCT FROM 'spot') THEN
                        PERFORM pg_notify('tonight_live', 'places');
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER places_version_insert AFTER INSERT ON places REFERENCING NEW TABLE AS new_rows \
                FOR EACH STATEMENT EXECUTE FUNCTION tonight_notify_places()
                """,
                """
                CREATE TRIGGER places_version_update AFTER UPDATE ON places \
                REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows \
                FOR EACH STATEMENT EXECUTE FUNCTION tonight_notify_places()
                """,
                """
                CREATE TRIGGER places_version_delete AFTER DELETE ON places REFERENCING OLD TABLE AS old_rows \
                FOR EACH STATEMENT EXECUTE FUNCTION tonight_notify_places()
                """,
            ]
        }
    }
}
