import Foundation
import PostgresNIO
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
    ///
    /// A group costs PostgreSQL four round trips whatever its size: the transaction's start, the
    /// lock on its voters and posts (``lockVotable(_:voters:postgres:on:)``), one prepared
    /// statement for everything else (``StoreVotes``), and the commit (more only when a like
    /// crosses a milestone). The lock comes first, in a statement of its own: a statement reads
    /// the rows as they were when it began, so the votes it reads must be read after the lock is
    /// held. A voter whose account is gone is answered ``VoteOutcome/notFound``.
    func apply(_ changes: [VoteChange], flagThreshold: Int, now: Int64) async throws
        -> (outcomes: [VoteOutcome], notifications: [NotificationRecord])
    {
        guard !changes.isEmpty else { return ([], []) }
        let kind = database.kind
        return try await database.transaction { tx in
            let postIDs = Array(Set(changes.map(\.postID))).sorted()
            let (authors, voters) = try await Self.lockVotable(
                postIDs, voters: Array(Set(changes.map(\.userID))).sorted(), postgres: kind == .postgres, on: tx)
            // What the group leaves each (post, user) pair: its last vote and last flag.
            var finals: [VotePair: VoteFinal] = [:]
            for change in changes {
                guard voters.contains(change.userID), let author = authors[change.postID], author != change.userID
                else { continue }
                let pair = VotePair(post: change.postID, user: change.userID)
                var final = finals[pair] ?? VoteFinal(author: author)
                switch change.action {
                case .vote(let value): final.vote = value
                case .flag(let flagged): final.flag = flagged
                }
                finals[pair] = final
            }
            let pairs = finals.sorted { ($0.key.post, $0.key.user) < ($1.key.post, $1.key.user) }
            let stored =
                kind == .postgres
                ? try await Self.storeOnPostgres(pairs, flagThreshold: flagThreshold, now: now, on: tx)
                : try await Self.storeOnSQLite(pairs, flagThreshold: flagThreshold, now: now, on: tx)
            // Each change is answered with its pair as the group left it, beside the post's
            // counters after the group: a double tap's two answers agree with each other and with
            // the counts.
            let outcomes = changes.map { change -> VoteOutcome in
                guard voters.contains(change.userID), let author = authors[change.postID] else { return .notFound }
                guard author != change.userID else { return .ownPost }
                let pair = VotePair(post: change.postID, user: change.userID)
                guard let before = stored.before[pair], let final = finals[pair] else { return .blocked }
                let counters = stored.counters[change.postID] ?? (0, 0, 0)
                return .applied(
                    value: final.vote ?? before.value, flagged: final.flag ?? before.flagged, up: counters.up,
                    down: counters.down)
            }
            var drafts: [NotificationDraft] = []
            for (id, counters) in stored.counters.sorted(by: { $0.key < $1.key }) {
                guard let author = authors[id] ?? nil,
                    let milestone = VoteMilestones.crossed(from: counters.up - counters.addedUp, to: counters.up)
                else { continue }
                drafts.append(
                    NotificationDraft(
                        userID: author, kind: .postVote,
                        text: milestone == 1 ? "Someone liked your post" : "Your post has \(milestone) likes",
                        postID: id))
            }
            return (outcomes, try await NotificationRepository.write(drafts, now: now, on: tx))
        }
    }

    /// Locks the posts that can be voted on (in id order, so two groups never deadlock) and
    /// returns their authors, with the group's voters whose accounts still exist.
    ///
    /// On PostgreSQL the voters' rows are held too (`FOR KEY SHARE`, in id order) until the group
    /// commits, and before any post's lock: the statement's first post row needs the voters'
    /// list, so that subquery runs (and holds them) before the row is locked. An account
    /// deletion, which holds its user's row first and its posts after
    /// (``UserRepository/delete(id:)``), then waits for the group to end, or the group for the
    /// deletion, never each for the other. Without the hold, a group that met a voter deleted a
    /// moment earlier failed whole on the votes' foreign key, and a vote added between a
    /// deletion's count of the account's votes and the account's removal left its post's counter
    /// one off. (On SQLite the single writer keeps the two apart; a voter deleted before the
    /// group is left out the same way.) One statement, not two: groups are written one after
    /// another, so each round trip counts (docs/benchmarks.md has the figures).
    private static func lockVotable(
        _ postIDs: [String], voters userIDs: [String], postgres: Bool, on tx: any SQLDatabase
    ) async throws -> (authors: [String: String?], voters: Set<String>) {
        var authors: [String: String?] = [:]
        var voters: Set<String> = []
        for row in try await tx.raw(
            """
            WITH voters AS (
                SELECT id FROM users WHERE id IN (\(binds: userIDs)) ORDER BY id \(unsafeRaw: postgres ? "FOR KEY SHARE" : ""))
            SELECT id, author_id,
                (SELECT \(unsafeRaw: postgres ? "string_agg" : "group_concat")(id, ',') FROM voters) AS voters
            FROM posts
            WHERE id IN (\(binds: postIDs)) AND moderation = 'visible' AND status = 'ready'
              AND (author_id IS NULL OR author_id NOT IN (SELECT user_id FROM bans))
            ORDER BY id \(unsafeRaw: postgres ? "FOR UPDATE OF posts" : "")
            """
        ).all() {
            authors[try row.decode(column: "id", as: String.self)] = try row.decode(
                column: "author_id", as: String?.self)
            if voters.isEmpty, let list = try row.decode(column: "voters", as: String?.self) {
                voters = Set(list.split(separator: ",").map(String.init))
            }
        }
        return (authors, voters)
    }

    /// SQLite: reads the blocks and the pairs' votes, then writes the votes and each post's
    /// counters (the process's single writer holds the file meanwhile). The same rules as
    /// ``StoreVotes`` on PostgreSQL.
    private static func storeOnSQLite(
        _ pairs: [(key: VotePair, value: VoteFinal)], flagThreshold: Int, now: Int64, on tx: any SQLDatabase
    ) async throws -> StoredVotes {
        var stored = StoredVotes()
        guard !pairs.isEmpty else { return stored }
        let postIDs = Array(Set(pairs.map(\.key.post)))
        let userIDs = Array(Set(pairs.map(\.key.user)))
        // Blocks between voters and authors, either way, in one query for the whole group.
        let authorIDs = Array(Set(pairs.compactMap(\.value.author)))
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
        var votes: [VotePair: VoteState] = [:]
        for row in try await tx.raw(
            """
            SELECT post_id, user_id, value, flagged FROM post_votes
            WHERE post_id IN (\(binds: postIDs)) AND user_id IN (\(binds: userIDs))
            """
        ).all() {
            let pair = VotePair(
                post: try row.decode(column: "post_id", as: String.self),
                user: try row.decode(column: "user_id", as: String.self))
            votes[pair] = VoteState(
                value: try row.decode(column: "value", as: Int.self),
                flagged: try row.decode(column: "flagged", as: Bool.self))
        }
        var deltas: [String: (up: Int64, down: Int64, flags: Int64)] = [:]
        var rows: [[any Encodable & Sendable]] = []
        for (pair, final) in pairs {
            if let author = final.author, blocked.contains([author, pair.user]) { continue }
            let old = votes[pair] ?? VoteState()
            let new = VoteState(value: final.vote ?? old.value, flagged: final.flag ?? old.flagged)
            stored.before[pair] = old
            var delta = deltas[pair.post] ?? (0, 0, 0)
            delta.up += Int64((new.value == 1 ? 1 : 0) - (old.value == 1 ? 1 : 0))
            delta.down += Int64((new.value == -1 ? 1 : 0) - (old.value == -1 ? 1 : 0))
            delta.flags += Int64((new.flagged ? 1 : 0) - (old.flagged ? 1 : 0))
            deltas[pair.post] = delta
            rows.append([pair.post, pair.user, new.value, new.flagged, now])
        }
        try await BulkWrite.upsert(
            "post_votes", columns: ["post_id", "user_id", "value", "flagged", "updated_at"], rows: rows,
            key: ["post_id", "user_id"], on: tx)
        for (id, delta) in deltas.sorted(by: { $0.key < $1.key }) {
            guard
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
            else { continue }
            let up = try row.decode(column: "up_count", as: Int64.self)
            stored.counters[id] = (up, try row.decode(column: "down_count", as: Int64.self), delta.up)
        }
        return stored
    }

    /// PostgreSQL: the whole group's checks and writes in one prepared statement (``StoreVotes``).
    private static func storeOnPostgres(
        _ pairs: [(key: VotePair, value: VoteFinal)], flagThreshold: Int, now: Int64, on tx: any SQLDatabase
    ) async throws -> StoredVotes {
        var stored = StoredVotes()
        guard !pairs.isEmpty else { return stored }
        let statement = StoreVotes(
            pairs: pairs.map { .init(post: $0.key.post, user: $0.key.user, final: $0.value) }, now: now,
            flagThreshold: flagThreshold)
        for (post, user, a, b, c) in try await Database.execute(prepared: statement, on: tx) {
            if let user {
                stored.before[VotePair(post: post, user: user)] = VoteState(value: Int(a), flagged: b != 0)
            } else {
                stored.counters[post] = (a, b, c)
            }
        }
        return stored
    }

    /// The statement of a group's votes on PostgreSQL, after its posts are locked: skips the pairs
    /// whose voter and author block one another, writes the others' votes, moves each post's
    /// counters by the difference and hides a post flagged by the threshold. It answers one row
    /// per pair written, `(post, user, vote before, flag before as 0 or 1, 0)`, and one per post,
    /// `(post, NULL, up, down, ups added)`.
    ///
    /// Prepared, so each connection plans it once; the pairs travel as one JSON array (as
    /// ``ChatRepository/StoreMessages`` explains). PostgreSQL guesses a hundred rows for the array,
    /// so a plain join would read all of a hot post's votes to find a group's few: each pair's
    /// vote is looked up on its own (the `LATERAL … LIMIT 1`). The same rules as the SQLite path
    /// above.
    struct StoreVotes: PostgresPreparedStatement {
        typealias Row = (String, String?, Int64, Int64, Int64)
        static let sql = """
            WITH input AS (
                SELECT * FROM json_to_recordset($1::text::json)
                    AS (post_id text, user_id text, author_id text, vote int4, flag bool)),
            changed AS (
                SELECT input.post_id, input.user_id,
                    COALESCE(old.value, 0) AS old_value, COALESCE(old.flagged, false) AS old_flagged,
                    COALESCE(input.vote, old.value, 0) AS value, COALESCE(input.flag, old.flagged, false) AS flagged
                FROM input
                LEFT JOIN LATERAL (
                    SELECT value, flagged FROM post_votes
                    WHERE post_votes.post_id = input.post_id AND post_votes.user_id = input.user_id LIMIT 1) old ON true
                WHERE input.author_id IS NULL OR NOT EXISTS (
                    SELECT 1 FROM blocks
                    WHERE (blocker_id = input.user_id AND blocked_id = input.author_id)
                        OR (blocker_id = input.author_id AND blocked_id = input.user_id))),
            written AS (
                INSERT INTO post_votes (post_id, user_id, value, flagged, updated_at)
                SELECT post_id, user_id, value, flagged, $2 FROM changed ORDER BY post_id, user_id
                ON CONFLICT (post_id, user_id) DO UPDATE
                    SET value = excluded.value, flagged = excluded.flagged, updated_at = excluded.updated_at),
            deltas AS (
                SELECT post_id,
                    sum((value = 1)::int - (old_value = 1)::int) AS up,
                    sum((value = -1)::int - (old_value = -1)::int) AS down,
                    sum(flagged::int - old_flagged::int) AS flags
                FROM changed GROUP BY post_id),
            counted AS (
                UPDATE posts SET up_count = up_count + deltas.up, down_count = down_count + deltas.down,
                    flag_count = flag_count + deltas.flags,
                    moderation = CASE WHEN moderation = 'visible' AND flag_count + deltas.flags >= $3
                        THEN 'hidden' ELSE moderation END
                FROM deltas WHERE posts.id = deltas.post_id
                RETURNING posts.id, posts.up_count, posts.down_count, deltas.up)
            SELECT post_id, user_id, old_value::int8, old_flagged::int::int8, 0::int8 FROM changed
            UNION ALL
            SELECT id, NULL, up_count::int8, down_count::int8, up::int8 FROM counted
            """

        /// One pair's part of the JSON array: what the group leaves it (nil: unchanged).
        struct Pair: Encodable {
            var post: String
            var user: String
            var final: VoteFinal

            enum CodingKeys: String, CodingKey {
                case post = "post_id", user = "user_id", author = "author_id", vote, flag
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(post, forKey: .post)
                try container.encode(user, forKey: .user)
                try container.encodeIfPresent(final.author, forKey: .author)
                try container.encodeIfPresent(final.vote, forKey: .vote)
                try container.encodeIfPresent(final.flag, forKey: .flag)
            }
        }

        let pairs: [Pair]
        let now: Int64
        let flagThreshold: Int

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(String(decoding: try Self.encoder.encode(pairs), as: UTF8.self))
            bindings.append(now)
            bindings.append(Int64(flagThreshold))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }

        private static let encoder = JSONEncoder()
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
struct VotePair: Hashable, Sendable {
    var post: String
    var user: String
}

/// A user's vote and flag on a post.
struct VoteState: Sendable, Equatable {
    var value = 0
    var flagged = false
}

/// What a group leaves one pair: its last vote and last flag (nil: not changed), and the post's
/// author (nil: an account since deleted).
struct VoteFinal: Sendable {
    var author: String?
    var vote: Int?
    var flag: Bool?
}

/// What a group's writes left: each written pair's vote and flag before the group (a pair not
/// there was skipped: its voter and author block one another), and each post's counters after it
/// with the ups it added.
private struct StoredVotes {
    var before: [VotePair: VoteState] = [:]
    var counters: [String: (up: Int64, down: Int64, addedUp: Int64)] = [:]
}
