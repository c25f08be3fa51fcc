/// Invitations from one user to a friend for an event or session; one per event, inviter and
/// invitee.
struct CreateInvitations: Migration {
    let name = "0014_create_invitations"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE invitations (
                id TEXT PRIMARY KEY,
                event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
                from_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                to_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                status TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (event_id, from_id, to_id)
            )
            """,
            "CREATE INDEX invitations_to ON invitations(to_id, created_at)",
            "CREATE INDEX invitations_from ON invitations(from_id, created_at)",
        ]
    }
}
