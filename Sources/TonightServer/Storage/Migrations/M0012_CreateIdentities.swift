/// Identities from OpenID Connect providers linked to accounts: `(provider, subject)` names one
/// person at one provider and belongs to exactly one account.
struct CreateIdentities: Migration {
    let name = "0012_create_identities"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE identities (
                provider TEXT NOT NULL,
                subject TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                email TEXT,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (provider, subject)
            )
            """,
            "CREATE INDEX identities_user ON identities(user_id)",
        ]
    }
}
