/// Event categories (a tree), artists with their search words, artist affinity and favourites.
///
/// `artist_words.word` holds each folded word of an artist's name; search-as-you-type is a
/// range scan `word >= prefix AND word < prefix+U+10FFFF`, so PostgreSQL gets the column in the
/// "C" collation (byte order), which SQLite uses anyway.
struct CreateCatalog: Migration {
    let name = "0006_create_catalog"

    func statements(for kind: DatabaseKind) -> [String] {
        let byteOrder = kind == .postgres ? " COLLATE \"C\"" : ""
        return [
            """
            CREATE TABLE categories (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                parent_id TEXT,
                source TEXT,
                source_id TEXT,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE UNIQUE INDEX categories_source ON categories(source, source_id)",
            """
            CREATE TABLE artists (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                name_folded TEXT NOT NULL,
                category_id TEXT,
                image_url TEXT,
                url TEXT,
                popularity BIGINT NOT NULL DEFAULT 0,
                favorites_count BIGINT NOT NULL DEFAULT 0,
                source TEXT,
                source_id TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE UNIQUE INDEX artists_source ON artists(source, source_id)",
            "CREATE INDEX artists_name ON artists(name_folded)",
            "CREATE INDEX artists_category ON artists(category_id, popularity)",
            """
            CREATE TABLE artist_words (
                word TEXT\(byteOrder) NOT NULL,
                artist_id TEXT NOT NULL REFERENCES artists(id) ON DELETE CASCADE,
                PRIMARY KEY (word, artist_id)
            )
            """,
            "CREATE INDEX artist_words_artist ON artist_words(artist_id)",
            """
            CREATE TABLE affinity (
                artist_id TEXT NOT NULL REFERENCES artists(id) ON DELETE CASCADE,
                similar_id TEXT NOT NULL REFERENCES artists(id) ON DELETE CASCADE,
                score DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (artist_id, similar_id)
            )
            """,
            """
            CREATE TABLE favorite_artists (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                artist_id TEXT NOT NULL REFERENCES artists(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, artist_id)
            )
            """,
            "CREATE INDEX favorite_artists_artist ON favorite_artists(artist_id)",
        ]
    }
}
