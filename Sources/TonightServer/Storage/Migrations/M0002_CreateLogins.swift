/// Logins (one per sign-in on a device) and their rotating refresh tokens, stored hashed.
struct CreateLogins: Migration {
    let name = "0002_create_logins"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE logins (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT NOT NULL,
                revoked_at BIGINT,
                user_agent TEXT
            )
            """,
            "CREATE INDEX logins_user ON logins(user_id)",
            """
            CREATE TABLE refresh_tokens (
                token_hash TEXT PRIMARY KEY,
                login_id TEXT NOT NULL REFERENCES logins(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            )
            """,
            "CREATE INDEX refresh_tokens_login ON refresh_tokens(login_id)",
        ]
    }
}
