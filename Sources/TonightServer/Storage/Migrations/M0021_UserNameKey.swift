/// `users.name_key`: the display name folded for search (case, diacritics, punctuation), kept by
/// the user repository whenever a display name is written, so user search is one index lookup.
/// Rows from before this step are filled in at start-up (``UserRepository/backfillNameKeys()``).
struct UserNameKey: Migration {
    let name = "0021_user_name_key"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            "ALTER TABLE users ADD COLUMN name_key TEXT",
            "CREATE INDEX users_name_key ON users(name_key)",
        ]
    }
}
