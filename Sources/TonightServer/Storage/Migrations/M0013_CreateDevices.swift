/// Push tokens. A token belongs to one user at a time (the phone's current owner).
struct CreateDevices: Migration {
    let name = "0013_create_devices"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE devices (
                token TEXT PRIMARY KEY,
                platform TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX devices_user ON devices(user_id)",
        ]
    }
}
