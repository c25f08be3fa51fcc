/// Email verification, address changes and password resets: when an account's address was
/// verified, the language its mail is written in, and the single-use tokens of mailed links
/// (stored as hashes; see ``EmailLinks``).
struct CreateEmailTokens: Migration {
    let name = "0031_create_email_tokens"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            "ALTER TABLE users ADD COLUMN email_verified_at BIGINT",
            "ALTER TABLE users ADD COLUMN language TEXT",
            """
            CREATE TABLE email_tokens (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                purpose TEXT NOT NULL,
                email TEXT NOT NULL,
                token_hash TEXT NOT NULL UNIQUE,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            )
            """,
            "CREATE INDEX email_tokens_user ON email_tokens(user_id, purpose)",
        ]
    }
}
