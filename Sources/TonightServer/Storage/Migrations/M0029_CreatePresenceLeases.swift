/// Presence per instance: a row for each user with a live socket on an instance, renewed by that
/// instance and gone when its last socket for the user closes. `users.online_until` is kept as the
/// latest lease of any instance (see ``PresenceService``), so a crashed instance's users go
/// offline when its leases run out, and one instance's closed socket does not hide another's.
struct CreatePresenceLeases: Migration {
    let name = "0029_create_presence_leases"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE presence_leases (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                instance TEXT NOT NULL,
                until BIGINT NOT NULL,
                PRIMARY KEY (user_id, instance)
            )
            """,
            "CREATE INDEX presence_leases_until ON presence_leases(until)",
        ]
    }
}
