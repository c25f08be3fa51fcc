/// Change records remember when their followers were told; older records count as told already.
struct EventChangeAlerts: Migration {
    let name = "0017_event_change_alerts"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            "ALTER TABLE event_changes ADD COLUMN notified_at BIGINT",
            "UPDATE event_changes SET notified_at = changed_at",
            "CREATE INDEX event_changes_pending ON event_changes(changed_at) WHERE notified_at IS NULL",
        ]
    }
}
