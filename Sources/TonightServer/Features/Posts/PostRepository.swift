import Foundation
import SQLKit
import TonightCore

/// What one viewer did to a post.
struct ViewerState: Sendable, Equatable {
    var vote: Int?
    var flagged = false
    var bookmarked = false
}

/// A row of `posts`, with the names a reader needs (author, place) and its tags.
struct PostRecord: Sendable, Equatable {
    var id: String
    var authorID: String?
    var source: String?
    var sourceID: String?
    var sourceName: String?
    var placeID: String?
    var cityKey: String
    var eventID: String?
    var caption: String
    var songTitle: String?
    var songArtist: String?
    var songURI: String?
    var status: PostStatus
    var failure: String?
    var mediaKind: MediaKind
    var originalKey: String
    var originalType: String
    var videoKey: String?
    var videoType: String?
    var posterKey: String?
    var width: Int?
    var height: Int?
    var duration: Double?
    var bpm: Double?
    var beats: String?
    var upCount: Int64 = 0
    var downCount: Int64 = 0
    var flagCount: Int64 = 0
    var commentCount: Int64 = 0
    var viewCount: Int64 = 0
    var moderation: ModerationState = .visible
    var retention: String = "media"
    var expiresAt: Int64?
    var createdAt: Int64
    var updatedAt: Int64
    /// Joined: the author's username, display name, whether they show it, avatar.
    var authorUsername: String?
    var authorDisplayName: String?
    var authorShowsName: Bool = true
    var authorAvatar: String?
    /// Joined: the place's name.
    var placeName: String?
    /// From `post_tags`.
    var tags: [String] = []

    /// The blob keys the post owns (all under `posts/<id>/`).
    var blobKeys: [String] { Array(Set([originalKey, videoKey, posterKey].compactMap { $0 })) }
}

/// What media processing learnt about a post's file.
struct ProcessedPost: Sendable {
    var videoKey: String
    var contentType: String
    var posterKey: String?
    var width: Int?
    var height: Int?
    var duration: Double?
    var bpm: Double?
    var beats: String?
}

/// Where a feed's posts come from.
enum FeedSource: Sendable, Equatable {
    /// A venue's posts since a time (the recency window).
    case place(String, since: Int64)
    /// A city's posts; `pregame`: only those with no place.
    case city(String, pregame: Bool)
    case tag(String)
    case author(String)
    /// Posts by the users `follower` follows.
    case following(String)
    /// `user`'s bookmarks, by bookmark time.
    case bookmarks(String)
    /// Posts hidden by flags, waiting for a moderator.
    case hidden
}

/// Posts, their media state and their feeds. Votes, comments, bookmarks and follows are in the
/// `PostRepository+…` files.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct PostRepository: Sendable {
    let db: any SQLDatabase
    let database: Database

    static let postColumns = [
        "id", "author_id", "source", "source_id", "source_name", "place_id", "city_key", "event_id", "caption",
        "song_title", "song_artist", "song_uri", "status", "failure", "media_kind", "original_key",
        "original_type", "video_key", "video_type", "poster_key", "width", "height", "duration", "bpm", "beats",
        "up_count",
        "down_count", "flag_count", "comment_count", "view_count", "moderation", "retention", "expires_at",
        "created_at", "updated_at",
    ]
    /// The post columns (prefixed `p.`) and the joined author and place names.
    static let selectList =
        postColumns.map { "p.\($0)" }.joined(separator: ", ")
        + ", u.username AS author_username, u.display_name AS author_display_name,"
        + " u.show_name_on_posts AS author_shows_name, u.avatar_url AS author_avatar, pl.name AS place_name"
    static let joins = "LEFT JOIN users u ON u.id = p.author_id LEFT JOIN places pl ON pl.id = p.place_id"

    /// Stores a new post (with its tags) and, in the same transaction, the job that processes it.
    func create(_ post: PostRecord, job: NewJob?) async throws {
        try await database.transaction { tx in
            try await tx.insert(into: "posts").columns(Self.postColumns).values(Self.values(post)).run()
            try await BulkWrite.upsert(
                "post_tags", columns: ["tag", "post_id", "created_at"],
                rows: post.tags.map { [$0, post.id, post.createdAt] }, key: ["tag", "post_id"], on: tx)
            if let job { try await JobRepository.enqueue([job], now: post.createdAt, on: tx) }
        }
    }

    func find(id: String) async throws -> PostRecord? {
        try await load("p.id = \(bind: id)").first
    }

    /// The moderation state and author of post `id` (nil: no such post): what decides whether its
    /// media is public.
    func moderation(of id: String) async throws -> (state: ModerationState, authorID: String?)? {
        guard
            let row = try await db.raw("SELECT moderation, author_id FROM posts WHERE id = \(bind: id)").first()
        else { return nil }
        return (
            try row.decode(column: "moderation", as: ModerationState.self),
            try row.decode(column: "author_id", as: String?.self)
        )
    }

    /// The imported post with this source id, if any.
    func find(source: String, sourceID: String) async throws -> PostRecord? {
        try await load("p.source = \(bind: source) AND p.source_id = \(bind: sourceID)").first
    }

    /// Deletes the post; returns it (for its blobs) when it existed.
    func delete(id: String) async throws -> PostRecord? {
        guard let post = try await find(id: id) else { return nil }
        try await database.write { db in
            try await db.raw("DELETE FROM posts WHERE id = \(bind: id)").run()
        }
        return post
    }

    /// Marks a processing post ready with its media; false when the post is gone.
    func markReady(id: String, media: ProcessedPost, now: Int64) async throws -> Bool {
        try await database.write { db in
            try await db.raw(
                """
                UPDATE posts SET status = 'ready', failure = NULL, video_key = \(bind: media.videoKey),
                    video_type = \(bind: media.contentType),
                    poster_key = \(bind: media.posterKey), width = \(bind: media.width),
                    height = \(bind: media.height), duration = \(bind: media.duration), bpm = \(bind: media.bpm),
                    beats = \(bind: media.beats), updated_at = \(bind: now)
                WHERE id = \(bind: id) RETURNING id
                """
            ).first() != nil
        }
    }

    /// Marks a processing post failed with a reason.
    func markFailed(id: String, reason: String, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                """
                UPDATE posts SET status = 'failed', failure = \(bind: reason), updated_at = \(bind: now)
                WHERE id = \(bind: id)
                """
            ).run()
        }
    }

    /// A page of a feed, newest first, before a keyset position; hides posts that are not ready
    /// and visible, and authors blocked by or blocking `viewer`.
    func feed(_ source: FeedSource, viewer: String?, before: (Int64, String)?, limit: Int) async throws
        -> [(post: PostRecord, position: Int64)]
    {
        var position = "p.created_at"
        var from = "posts p"
        var filter: SQLQueryString
        switch source {
        case .place(let place, let since):
            filter = "p.place_id = \(bind: place) AND p.created_at >= \(bind: since)"
        case .city(let city, let pregame):
            filter = "p.city_key = \(bind: city)\(unsafeRaw: pregame ? " AND p.place_id IS NULL" : "")"
        case .tag(let tag):
            from = "post_tags t JOIN posts p ON p.id = t.post_id"
            position = "t.created_at"
            filter = "t.tag = \(bind: tag)"
        case .author(let author):
            filter = "p.author_id = \(bind: author)"
        case .following(let follower):
            from = "follows f JOIN posts p ON p.author_id = f.followee_id"
            filter = "f.follower_id = \(bind: follower)"
        case .bookmarks(let user):
            from = "bookmarks b JOIN posts p ON p.id = b.post_id"
            position = "b.created_at"
            filter = "b.user_id = \(bind: user)"
        case .hidden:
            filter = "p.moderation = 'hidden'"
        }
        if let before { filter = "\(filter) AND \(Keyset.before(before, position, "p.id"))" }
        // Bookmarks stay visible to their owner whatever their state; other feeds show ready,
        // visible posts only.
        switch source {
        case .bookmarks, .hidden: break
        default: filter = "\(filter) AND p.status = 'ready' AND p.moderation = 'visible'"
        }
        filter = "\(filter) AND \(Self.notBlocked(viewer))"
        let rows = try await db.raw(
            """
            SELECT \(unsafeRaw: Self.selectList), \(unsafeRaw: position) AS feed_position
            FROM \(unsafeRaw: from) \(unsafeRaw: Self.joins)
            WHERE \(filter)
            ORDER BY \(unsafeRaw: position) DESC, p.id DESC LIMIT \(bind: limit)
            """
        ).all()
        var posts = try rows.map {
            (post: try Self.decode($0), position: try $0.decode(column: "feed_position", as: Int64.self))
        }
        let tags = try await tags(of: posts.map(\.post.id))
        for index in posts.indices { posts[index].post.tags = tags[posts[index].post.id] ?? [] }
        return posts
    }

    /// Ready, visible posts since `since` (optionally in one city), for ranking.
    func recent(city: String?, since: Int64, viewer: String?, limit: Int) async throws -> [PostRecord] {
        var filter: SQLQueryString =
            "p.created_at >= \(bind: since) AND p.status = 'ready' AND p.moderation = 'visible'"
        if let city { filter = "\(filter) AND p.city_key = \(bind: city)" }
        return try await load("\(filter) AND \(Self.notBlocked(viewer))", order: "p.created_at DESC", limit: limit)
    }

    /// The caller's votes, flags and bookmarks on these posts.
    func viewerState(_ viewer: String, posts: [String]) async throws -> [String: ViewerState] {
        guard !posts.isEmpty else { return [:] }
        var state: [String: ViewerState] = [:]
        for row in try await db.raw(
            "SELECT post_id, value, flagged FROM post_votes WHERE user_id = \(bind: viewer) AND post_id IN (\(binds: posts))"
        ).all() {
            let id = try row.decode(column: "post_id", as: String.self)
            state[id, default: .init()].vote = try row.decode(column: "value", as: Int.self)
            state[id, default: .init()].flagged = try row.decode(column: "flagged", as: Bool.self)
        }
        for row in try await db.raw(
            "SELECT post_id FROM bookmarks WHERE user_id = \(bind: viewer) AND post_id IN (\(binds: posts))"
        ).all() {
            state[try row.decode(column: "post_id", as: String.self), default: .init()].bookmarked = true
        }
        return state
    }

    /// Adds counted views (post id → count); unknown ids are ignored.
    func addViews(_ counts: [String: Int64]) async throws {
        guard !counts.isEmpty else { return }
        try await database.transaction { tx in
            for (id, count) in counts.sorted(by: { $0.key < $1.key }) {
                try await tx.raw("UPDATE posts SET view_count = view_count + \(bind: count) WHERE id = \(bind: id)")
                    .run()
            }
        }
    }

    /// Posts whose retention ran out, oldest first.
    func expired(now: Int64, limit: Int) async throws -> [PostRecord] {
        try await load(
            "p.retention = 'media' AND p.expires_at IS NOT NULL AND p.expires_at <= \(bind: now)",
            order: "p.expires_at", limit: limit)
    }

    /// Whether a post with this id exists (the orphan sweep asks for blobs' owners).
    func existing(ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return Set(
            try await db.raw("SELECT id FROM posts WHERE id IN (\(binds: ids))").all()
                .map { try $0.decode(column: "id", as: String.self) })
    }

    /// Songs used on posts whose title or artist contains `query` (case-insensitive for ASCII
    /// letters), most used first.
    func songs(matching query: String, limit: Int) async throws -> [SongHit] {
        let pattern = "%" + SQLText.likeEscaped(query.lowercased()) + "%"
        return try await db.raw(
            """
            SELECT song_title, MIN(song_artist) AS song_artist, song_uri, COUNT(*) AS uses FROM posts
            WHERE song_title IS NOT NULL AND status = 'ready' AND moderation = 'visible'
                AND (LOWER(song_title) LIKE \(bind: pattern) ESCAPE '\\' OR LOWER(song_artist) LIKE \(bind: pattern) ESCAPE '\\')
            GROUP BY song_title, song_uri ORDER BY uses DESC, song_title LIMIT \(bind: limit)
            """
        ).all().map { row in
            SongHit(
                title: try row.decode(column: "song_title", as: String.self),
                artist: try row.decode(column: "song_artist", as: String?.self),
                uri: try row.decode(column: "song_uri", as: String?.self))
        }
    }

    /// Moves a post to a retention tier (`expiresAt` nil for the kept tiers).
    func setRetention(id: String, retention: String, expiresAt: Int64?, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                """
                UPDATE posts SET retention = \(bind: retention), expires_at = \(bind: expiresAt), updated_at = \(bind: now)
                WHERE id = \(bind: id)
                """
            ).run()
        }
    }

    /// Makes a hidden post visible again and clears its flags (rows and counter together; a
    /// visible post's flags too, which before left its counter above its flagged rows).
    func restore(id: String, now: Int64) async throws {
        let lock = database.kind == .postgres ? "FOR UPDATE" : ""
        try await database.transaction { tx in
            try await tx.raw("SELECT id FROM posts WHERE id = \(bind: id) \(unsafeRaw: lock)").run()
            try await tx.raw("UPDATE post_votes SET flagged = FALSE WHERE post_id = \(bind: id) AND flagged").run()
            try await tx.raw(
                """
                UPDATE posts SET flag_count = 0, updated_at = \(bind: now),
                    moderation = CASE WHEN moderation = 'hidden' THEN 'visible' ELSE moderation END
                WHERE id = \(bind: id)
                """
            ).run()
        }
    }

    /// Before an account is deleted, with its votes and comments by cascade: takes them out of
    /// the counters of the posts they were on, so that the counters keep matching the rows. On
    /// PostgreSQL those posts are locked first, in id order, as a group of votes locks them.
    static func withdraw(userID: String, postgres: Bool, on tx: any SQLDatabase) async throws {
        if postgres {
            try await tx.raw(
                """
                SELECT id FROM posts WHERE id IN (SELECT post_id FROM post_votes WHERE user_id = \(bind: userID)
                    UNION SELECT post_id FROM comments WHERE author_id = \(bind: userID))
                ORDER BY id FOR UPDATE
                """
            ).run()
        }
        try await tx.raw(
            """
            UPDATE posts SET up_count = up_count - v.up, down_count = down_count - v.down,
                flag_count = flag_count - v.flags
            FROM (SELECT post_id, SUM(CASE WHEN value = 1 THEN 1 ELSE 0 END) AS up,
                    SUM(CASE WHEN value = -1 THEN 1 ELSE 0 END) AS down,
                    SUM(CASE WHEN flagged THEN 1 ELSE 0 END) AS flags
                FROM post_votes WHERE user_id = \(bind: userID) GROUP BY post_id) AS v
            WHERE posts.id = v.post_id
            """
        ).run()
        try await tx.raw(
            """
            UPDATE posts SET comment_count = comment_count - c.n
            FROM (SELECT post_id, COUNT(*) AS n FROM comments WHERE author_id = \(bind: userID) GROUP BY post_id) AS c
            WHERE posts.id = c.post_id
            """
        ).run()
    }

    // MARK: - Helpers

    /// Authors hidden from `viewer`: banned ones, and those blocked by or blocking `viewer`.
    static func notBlocked(_ viewer: String?) -> SQLQueryString {
        guard let viewer else { return "(p.author_id IS NULL OR p.author_id NOT IN (SELECT user_id FROM bans))" }
        return """
            (p.author_id IS NULL OR p.author_id NOT IN (
                SELECT blocked_id FROM blocks WHERE blocker_id = \(bind: viewer)
                UNION SELECT blocker_id FROM blocks WHERE blocked_id = \(bind: viewer)
                UNION SELECT user_id FROM bans))
            """
    }

    /// Posts matching `filter`, with their tags.
    func load(_ filter: SQLQueryString, order: String = "p.created_at DESC", limit: Int = 1) async throws
        -> [PostRecord]
    {
        var posts = try await db.raw(
            """
            SELECT \(unsafeRaw: Self.selectList) FROM posts p \(unsafeRaw: Self.joins)
            WHERE \(filter) ORDER BY \(unsafeRaw: order) LIMIT \(bind: limit)
            """
        ).all().map(Self.decode)
        let tags = try await tags(of: posts.map(\.id))
        for index in posts.indices { posts[index].tags = tags[posts[index].id] ?? [] }
        return posts
    }

    /// Tags by post id, each list in alphabetical order.
    func tags(of posts: [String]) async throws -> [String: [String]] {
        guard !posts.isEmpty else { return [:] }
        var tags: [String: [String]] = [:]
        for row in try await db.raw(
            "SELECT post_id, tag FROM post_tags WHERE post_id IN (\(binds: posts)) ORDER BY tag"
        ).all() {
            tags[try row.decode(column: "post_id", as: String.self), default: []].append(
                try row.decode(column: "tag", as: String.self))
        }
        return tags
    }

    static func values(_ p: PostRecord) -> [any Encodable & Sendable] {
        [
            p.id, p.authorID, p.source, p.sourceID, p.sourceName, p.placeID, p.cityKey, p.eventID, p.caption,
            p.songTitle, p.songArtist, p.songURI, p.status, p.failure, p.mediaKind, p.originalKey, p.originalType,
            p.videoKey, p.videoType, p.posterKey, p.width, p.height, p.duration, p.bpm, p.beats, p.upCount, p.downCount,
            p.flagCount, p.commentCount, p.viewCount, p.moderation, p.retention, p.expiresAt, p.createdAt,
            p.updatedAt,
        ]
    }

    static func decode(_ row: any SQLRow) throws -> PostRecord {
        func text(_ column: String) throws -> String? { try row.decode(column: column, as: String?.self) }
        func int(_ column: String) throws -> Int64? { try row.decode(column: column, as: Int64?.self) }
        func real(_ column: String) throws -> Double? { try row.decode(column: column, as: Double?.self) }
        return PostRecord(
            id: try row.decode(column: "id", as: String.self), authorID: try text("author_id"),
            source: try text("source"), sourceID: try text("source_id"), sourceName: try text("source_name"),
            placeID: try text("place_id"), cityKey: try row.decode(column: "city_key", as: String.self),
            eventID: try text("event_id"), caption: try row.decode(column: "caption", as: String.self),
            songTitle: try text("song_title"), songArtist: try text("song_artist"), songURI: try text("song_uri"),
            status: try row.decode(column: "status", as: PostStatus.self), failure: try text("failure"),
            mediaKind: try row.decode(column: "media_kind", as: MediaKind.self),
            originalKey: try row.decode(column: "original_key", as: String.self),
            originalType: try row.decode(column: "original_type", as: String.self), videoKey: try text("video_key"),
            videoType: try text("video_type"), posterKey: try text("poster_key"), width: try int("width").map(Int.init),
            height: try int("height").map(Int.init), duration: try real("duration"), bpm: try real("bpm"),
            beats: try text("beats"), upCount: try row.decode(column: "up_count", as: Int64.self),
            downCount: try row.decode(column: "down_count", as: Int64.self),
            flagCount: try row.decode(column: "flag_count", as: Int64.self),
            commentCount: try row.decode(column: "comment_count", as: Int64.self),
            viewCount: try row.decode(column: "view_count", as: Int64.self),
            moderation: try row.decode(column: "moderation", as: ModerationState.self),
            retention: try row.decode(column: "retention", as: String.self), expiresAt: try int("expires_at"),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self),
            authorUsername: try text("author_username"), authorDisplayName: try text("author_display_name"),
            authorShowsName: try row.decode(column: "author_shows_name", as: Bool?.self) ?? true,
            authorAvatar: try text("author_avatar"), placeName: try text("place_name"))
    }
}
