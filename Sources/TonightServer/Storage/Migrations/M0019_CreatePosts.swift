/// Media posts and everything hanging off them: votes (the per-user truth behind the `up`/`down`
/// counters), comments, bookmarks, tags, and follows between users.
///
/// A post is made by a member (`author_id`) or by an importer (`source`, `source_id`, unique
/// together so re-imports deduplicate). Its context is a city (`city_key`, always set) and
/// optionally a place and an event; a post with a city but no place is in the city's "pregame"
/// feed. `status` is `processing` → `ready` | `failed` (`failure` says why). `moderation` is
/// `visible`, `hidden` (flagged by enough people, waiting for review) or `removed`. `retention` is
/// the seed's prefix: `media` (expires at `expires_at`), `favorites` or `stick` (kept). Blob keys
/// all live under `posts/<id>/`, so an orphan sweep can tell whose a blob is.
///
/// `post_votes` holds one row per user and post (value −1, 0, +1 and a flag); the counters on
/// `posts` are only ever changed in the transaction that changes a vote row, by the difference.
struct CreatePosts: Migration {
    let name = "0019_create_posts"

    func statements(for kind: DatabaseKind) -> [String] {
        let real = kind == .postgres ? "DOUBLE PRECISION" : "REAL"
        return [
            """
            CREATE TABLE posts (
                id TEXT PRIMARY KEY,
                author_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                source TEXT,
                source_id TEXT,
                source_name TEXT,
                place_id TEXT REFERENCES places(id) ON DELETE SET NULL,
                city_key TEXT NOT NULL,
                event_id TEXT REFERENCES events(id) ON DELETE SET NULL,
                caption TEXT NOT NULL DEFAULT '',
                song_title TEXT,
                song_artist TEXT,
                song_uri TEXT,
                status TEXT NOT NULL,
                failure TEXT,
                media_kind TEXT NOT NULL,
                original_key TEXT NOT NULL,
                original_type TEXT NOT NULL,
                video_key TEXT,
                video_type TEXT,
                poster_key TEXT,
                width INTEGER,
                height INTEGER,
                duration \(real),
                bpm \(real),
                beats TEXT,
                up_count BIGINT NOT NULL DEFAULT 0,
                down_count BIGINT NOT NULL DEFAULT 0,
                flag_count BIGINT NOT NULL DEFAULT 0,
                comment_count BIGINT NOT NULL DEFAULT 0,
                view_count BIGINT NOT NULL DEFAULT 0,
                moderation TEXT NOT NULL DEFAULT 'visible',
                retention TEXT NOT NULL DEFAULT 'media',
                expires_at BIGINT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (source, source_id)
            )
            """,
            "CREATE INDEX posts_place ON posts(place_id, created_at)",
            "CREATE INDEX posts_city ON posts(city_key, created_at)",
            "CREATE INDEX posts_author ON posts(author_id, created_at)",
            "CREATE INDEX posts_expiry ON posts(expires_at)",
            """
            CREATE TABLE post_votes (
                post_id TEXT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                value INTEGER NOT NULL DEFAULT 0,
                flagged BOOLEAN NOT NULL DEFAULT FALSE,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (post_id, user_id)
            )
            """,
            "CREATE INDEX post_votes_user ON post_votes(user_id)",
            """
            CREATE TABLE post_tags (
                tag TEXT NOT NULL,
                post_id TEXT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (tag, post_id)
            )
            """,
            "CREATE INDEX post_tags_feed ON post_tags(tag, created_at)",
            "CREATE INDEX post_tags_post ON post_tags(post_id)",
            """
            CREATE TABLE comments (
                id TEXT PRIMARY KEY,
                post_id TEXT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                author_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                text TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX comments_post ON comments(post_id, created_at)",
            """
            CREATE TABLE bookmarks (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                post_id TEXT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, post_id)
            )
            """,
            "CREATE INDEX bookmarks_feed ON bookmarks(user_id, created_at)",
            """
            CREATE TABLE follows (
                follower_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                followee_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (follower_id, followee_id)
            )
            """,
            "CREATE INDEX follows_followee ON follows(followee_id, created_at)",
        ]
    }
}
