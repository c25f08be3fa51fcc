import SQLKit
import TonightCore

/// A comment with its author's public names.
struct CommentRecord: Sendable, Equatable {
    var id: String
    var postID: String
    var authorID: String
    var text: String
    var createdAt: Int64
    var authorUsername: String?
    var authorDisplayName: String?
    var authorShowsName: Bool = true
    var authorAvatar: String?
}

/// Comments, bookmarks and follows.
extension PostRepository {
    /// Stores a comment, counts it on the post and notifies (`notice`), in one transaction.
    func addComment(_ c: CommentRecord, notice: NotificationDraft?) async throws -> [NotificationRecord] {
        try await database.transaction { tx in
            try await tx.raw(
                """
                INSERT INTO comments (id, post_id, author_id, text, created_at)
                VALUES (\(bind: c.id), \(bind: c.postID), \(bind: c.authorID), \(bind: c.text), \(bind: c.createdAt))
                """
            ).run()
            try await tx.raw("UPDATE posts SET comment_count = comment_count + 1 WHERE id = \(bind: c.postID)").run()
            return try await NotificationRepository.write(notice.map { [$0] } ?? [], now: c.createdAt, on: tx)
        }
    }

    func comment(id: String) async throws -> CommentRecord? {
        try await db.raw(
            "SELECT \(unsafeRaw: Self.commentColumns) FROM comments c LEFT JOIN users u ON u.id = c.author_id WHERE c.id = \(bind: id)"
        ).first().map(Self.decodeComment)
    }

    /// Deletes a comment and uncounts it; false when it was not there.
    func deleteComment(id: String, postID: String) async throws -> Bool {
        try await database.transaction { tx in
            guard
                try await tx.raw(
                    "DELETE FROM comments WHERE id = \(bind: id) AND post_id = \(bind: postID) RETURNING id"
                ).first() != nil
            else { return false }
            try await tx.raw("UPDATE posts SET comment_count = comment_count - 1 WHERE id = \(bind: postID)").run()
            return true
        }
    }

    /// Comments on a post, oldest first, after a keyset position; hides authors blocked either way.
    func comments(postID: String, viewer: String?, after: (Int64, String)?, limit: Int) async throws -> [CommentRecord]
    {
        var filter: SQLQueryString = "c.post_id = \(bind: postID) AND c.author_id NOT IN (SELECT user_id FROM bans)"
        if let after { filter = "\(filter) AND \(Keyset.after(after, "c.created_at", "c.id"))" }
        if let viewer {
            filter = """
                \(filter) AND c.author_id NOT IN (
                    SELECT blocked_id FROM blocks WHERE blocker_id = \(bind: viewer)
                    UNION SELECT blocker_id FROM blocks WHERE blocked_id = \(bind: viewer))
                """
        }
        return try await db.raw(
            """
            SELECT \(unsafeRaw: Self.commentColumns) FROM comments c LEFT JOIN users u ON u.id = c.author_id
            WHERE \(filter) ORDER BY c.created_at, c.id LIMIT \(bind: limit)
            """
        ).all().map(Self.decodeComment)
    }

    func bookmark(user: String, post: String, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO bookmarks (user_id, post_id, created_at) VALUES (\(bind: user), \(bind: post), \(bind: now))
                ON CONFLICT (user_id, post_id) DO NOTHING
                """
            ).run()
        }
    }

    func unbookmark(user: String, post: String) async throws {
        try await database.write { db in
            try await db.raw("DELETE FROM bookmarks WHERE user_id = \(bind: user) AND post_id = \(bind: post)").run()
        }
    }

    func follow(_ follower: String, _ followee: String, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO follows (follower_id, followee_id, created_at) VALUES (\(bind: follower), \(bind: followee), \(bind: now))
                ON CONFLICT (follower_id, followee_id) DO NOTHING
                """
            ).run()
        }
    }

    func unfollow(_ follower: String, _ followee: String) async throws {
        try await database.write { db in
            try await db.raw(
                "DELETE FROM follows WHERE follower_id = \(bind: follower) AND followee_id = \(bind: followee)"
            ).run()
        }
    }

    /// How many users follow `user`, and whether `viewer` is one of them.
    func followers(of user: String, viewer: String?) async throws -> (count: Int64, followedByViewer: Bool) {
        let row = try await db.raw(
            """
            SELECT COUNT(*) AS followers,
                COALESCE(SUM(CASE WHEN follower_id = \(bind: viewer ?? "") THEN 1 ELSE 0 END), 0) AS mine
            FROM follows WHERE followee_id = \(bind: user)
            """
        ).first()
        return (
            try row?.decode(column: "followers", as: Int64.self) ?? 0,
            (try row?.decode(column: "mine", as: Int64.self) ?? 0) > 0
        )
    }

    static let commentColumns =
        "c.id, c.post_id, c.author_id, c.text, c.created_at, u.username AS author_username,"
        + " u.display_name AS author_display_name, u.show_name_on_posts AS author_shows_name,"
        + " u.avatar_url AS author_avatar"

    static func decodeComment(_ row: any SQLRow) throws -> CommentRecord {
        CommentRecord(
            id: try row.decode(column: "id", as: String.self),
            postID: try row.decode(column: "post_id", as: String.self),
            authorID: try row.decode(column: "author_id", as: String.self),
            text: try row.decode(column: "text", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            authorUsername: try row.decode(column: "author_username", as: String?.self),
            authorDisplayName: try row.decode(column: "author_display_name", as: String?.self),
            authorShowsName: try row.decode(column: "author_shows_name", as: Bool?.self) ?? true,
            authorAvatar: try row.decode(column: "author_avatar", as: String?.self))
    }
}
