/// Accounts and anonymous devices (a device is a user row with `is_anonymous`, so upgrading it
/// to an account keeps everything it did).
struct CreateUsers: Migration {
    let name = "0001_create_users"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                is_anonymous BOOLEAN NOT NULL,
                username TEXT,
                username_key TEXT UNIQUE,
                email TEXT,
                email_key TEXT UNIQUE,
                password_hash TEXT,
                role TEXT NOT NULL DEFAULT 'user',
                display_name TEXT,
                show_name_on_posts BOOLEAN NOT NULL DEFAULT TRUE,
                gender TEXT,
                birth_date TEXT,
                bio TEXT,
                home_city TEXT,
                preferences TEXT NOT NULL DEFAULT '{}',
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """
        ]
    }
}
