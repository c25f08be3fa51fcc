import SQLKit
import TonightCore

/// One vote or flag change by one user.
struct VoteChange: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        /// Set the vote to −1, 0 or +1.
        case vote(Int)
        /// Set or clear the flag.
        case flag(Bool)
    }
    var postID: String
    var userID: String
    var action: Action
}

/// What a vote change left: the user's vote and flag and the post's counters, or why it was refused.
enum VoteOutcome: Sendable, Equatable {
    case applied(value: Int, flagged: Bool, up: Int64, down: Int64)
    /// No such post (or not ready, hidden by flags, removed, or by a banned author).
    case notFound
    /// The author's own post.
    case ownPost
    /// The voter and the author block one another (the post is not there for them).
    case blocked
}

/// Votes and flags, applied in groups: many users' changes in one transaction.
extension PostRepository {
    /// Applies `changes` in order in one transaction and returns an outcome for each. The
    /// per-user rows are the truth; each post's counters move by exactly the difference its rows
    /// made, under the post's row lock (PostgreSQL) or the single writer (SQLite). A post flagged
    /// by `flagThreshold` distinct users is hidden pending review.
    func apply(_ changes: [VoteChange], flagThreshold: Int, now: Int64) async throws
        -> (outcomes: [VoteOutcome], notifications: [NotificationRecord])
    {
        guard !changes.isEmpty else { return ([], []) }
        let lock = database.kind == .postgres ? "FOR UPDATE" : ""
        return try await database.transaction { tx in
            let postIDs = Array(Set(changes.map(\.postID))).sorted()
            // Lock the posts (in id order, so two batches never deadlock) and learn their authors.
            var authors: [String: String?] = [:]
            for row in try await tx.raw(
                """
                SELECT id, author_id FROM posts
                WHERE id IN (\(binds: postIDs)) AND moderation = 'visible' AND status = 'ready'
                  AND (author_id IS NULL OR author_id NOT IN (SELECT user_id FROM bans))
                ORDER BY id \(unsafeRaw: lock)
                """
            ).all() {
                authors[try row.decode(column: "id", as: String.self)] = try row.decode(
                    column: "author_id", as: String?.self)
            }
            let userIDs = Array(Set(changes.map(\.userID)))
            // Blocks between voters and authors, either way, in one query for the whole group.
            let authorIDs = Array(Set(authors.values.compactMap { $0 }))
            var blocked = Set<[String]>()  // [blocker, blocked], stored both ways
            if !authorIDs.isEmpty {
                for row in try await tx.raw(
                    """
                    SELECT blocker_id, blocked_id FROM blocks
                    WHERE (blocker_id IN (\(binds: userIDs)) AND blocked_id IN (\(binds: authorIDs)))
                        OR (blocked_id IN (\(binds: userIDs)) AND blocker_id IN (\(binds: authorIDs)))
                    """
                ).all() {
                    let a = try row.decode(column: "blocker_id", as: String.self)
                    let b = try row.decode(column: "blocked_id", as: String.self)
                    blocked.insert([a, b])
                    blocked.insert([b, a])
                }
            }
            var state: [Pair: (value: Int, flagged: Bool)] = [:]
            for row in try await tx.raw(
                """
                SELECT post_id, user_id, value, flagged FROM post_votes
                WHERE post_id IN (\(binds: postIDs)) AND user_id IN (\(binds: userIDs))
                """
            ).all() {
                let pair = Pair(
                    post: try row.decode(column: "post_id", as: String.self),
                    user: try row.decode(column: "user_id", as: String.self))
                state[pair] = (
                    try row.decode(column: "value", as: Int.self), try row.decode(column: "flagged", as: Bool.self)
                )
            }
            // Apply in order in memory; remember each post's counter deltas and the rows to write.
            var deltas: [String: (up: Int64, down: Int64, flags: Int64)] = [:]
            var touched: [Pair] = []
            var seen = Set<Pair>()
            var results: [VoteOutcome?] = []
            for change in changes {
                guard let author = authors[change.postID] else {
                    results.append(.notFound)
                    continue
                }
                guard author != change.userID else {
                    results.append(.ownPost)
                    continue
                }
                if let author, blocked.contains([author, change.userID]) {
                    results.append(.blocked)
                    continue
                }
                let pair = Pair(post: change.postID, user: change.userID)
                let old = state[pair]
                var new = old ?? (0, false)
                switch change.action {
                case .vote(let value): new.value = value
                case .flag(let flagged): new.flagged = flagged
                }
                var delta = deltas[change.postID] ?? (0, 0, 0)
                delta.up += Int64((new.value == 1 ? 1 : 0) - (old?.value == 1 ? 1 : 0))
                delta.down += Int64((new.value == -1 ? 1 : 0) - (old?.value == -1 ? 1 : 0))
                delta.flags += Int64((new.flagged ? 1 : 0) - ((old?.flagged ?? false) ? 1 : 0))
                deltas[change.postID] = delta
                state[pair] = new
                if seen.insert(pair).inserted { touched.append(pair) }
                results.append(nil)
            }
            try await BulkWrite.upsert(
                "post_votes", columns: ["post_id", "user_id", "value", "flagged", "updated_at"],
                rows: touched.map { pair in
                    let row = state[pair] ?? (0, false)
                    return [pair.post, pair.user, row.value, row.flagged, now]
                }, key: ["post_id", "user_id"], on: tx)
            var counters: [String: (up: Int64, down: Int64)] = [:]
            var drafts: [NotificationDraft] = []
            for id in postIDs where authors[id] != nil {
                let delta = deltas[id] ?? (0, 0, 0)
                let row = try await tx.raw(
                    """
                    UPDATE posts SET up_count = up_count + \(bind: delta.up),
                        down_count = down_count + \(bind: delta.down),
                        flag_count = flag_count + \(bind: delta.flags),
                        moderation = CASE WHEN moderation = 'visible' AND flag_count + \(bind: delta.flags) >= \(bind: flagThreshold)
                            THEN 'hidden' ELSE moderation END
                    WHERE id = \(bind: id) RETURNING up_count, down_count
                    """
                ).first()
                if let row {
                    let up = try row.decode(column: "up_count", as: Int64.self)
                    counters[id] = (up, try row.decode(column: "down_count", as: Int64.self))
                    if let author = authors[id] ?? nil,
                        let milestone = VoteMilestones.crossed(from: up - delta.up, to: up)
                    {
                        drafts.append(
                            NotificationDraft(
                                userID: author, kind: .postVote,
                                text: milestone == 1 ? "Someone liked your post" : "Your post has \(milestone) likes",
                                postID: id))
                    }
                }
            }
            let notifications = try await NotificationRepository.write(drafts, now: now, on: tx)
            let outcomes = zip(changes, results).map { change, result in
                if let result { return result }
                let row = state[Pair(post: change.postID, user: change.userID)] ?? (0, false)
                let count = counters[change.postID] ?? (0, 0)
                return VoteOutcome.applied(value: row.value, flagged: row.flagged, up: count.up, down: count.down)
            }
            return (outcomes, notifications)
        }
    }

    /// Recomputes counters from the vote rows (for checks): (up, down, flags).
    func countVotes(postID: String) async throws -> (up: Int64, down: Int64, flags: Int64) {
        let row = try await db.raw(
            """
            SELECT COALESCE(SUM(CASE WHEN value = 1 THEN 1 ELSE 0 END), 0) AS up,
                COALESCE(SUM(CASE WHEN value = -1 THEN 1 ELSE 0 END), 0) AS down,
                COALESCE(SUM(CASE WHEN flagged THEN 1 ELSE 0 END), 0) AS flags
            FROM post_votes WHERE post_id = \(bind: postID)
            """
        ).first()
        return (
            try row?.decode(column: "up", as: Int64.self) ?? 0, try row?.decode(column: "down", as: Int64.self) ?? 0,
            try row?.decode(column: "flags", as: Int64.self) ?? 0
        )
    }
}

/// A (post, user) key.
private struct Pair: Hashable {
    var post: String
    var user: String
}
