import Foundation
import Hummingbird
import Synchronization
import TonightCore

/// Session recommendations and explore cards kept per member, place and page size, and answered
/// again while nothing they were made from has changed: ranking 2,000 sessions with their players
/// costs about 30 ms of CPU, so sixteen members asking at once queued for a quarter of a second;
/// the cards' cold start ranks every show in the circle tonight.
///
/// An answer is kept under the version read before it was made, and given again only while the
/// version now is the same and the answer is younger than ``lifetime`` (a minute: sessions start
/// and the ranking's "now" moves on). The version is the database's recommendation version
/// (migrations 0034 and 0035: events, performers, artists, categories and affinity, attendance,
/// friendships, blocks, dismissals, favourites, preferences, places): on
/// SQLite the counter row, exact for every process that writes; on PostgreSQL the instance's
/// ``ClusterFeedVersion`` for `recs` notifications, withheld while they may be missed. A
/// notification arrives a moment after its commit, so there this instance's writes move that
/// version too (``LocalWritesMiddleware``, as the page cache's writes move the feed's): a
/// member who has just joined a session here never gets the answer from before. Another instance
/// learns of it when the notification arrives.
///
/// Others' changes are tolerated for a moment: an answer is given again for up to ``stale``
/// (`RECS_STALE_SECONDS`, 10 s) after it was begun although the version moved, unless the member
/// wrote since (``wrote(_:)``, from ``OwnWritesMiddleware``: their own join, dismissal or
/// friendship shows at once) or someone blocked someone on this instance (``forgetEveryone()``).
/// The version is one for the whole database, so without this every change anywhere (another
/// member's interest in a show, twice a second) made every member's answer again: 16 members
/// asking at once then had p99 257 ms instead of 19 ms (docs/benchmarks.md). With it, a member's
/// answer is made at most once per ``stale`` whatever the others write, and shows their changes
/// within it. On a cluster, a member's own write through another instance is such a change too.
///
/// At most ``capacity`` answers are kept; when full, stale ones go first, then the oldest.
final class RecommendationCache<Value: Sendable>: KeptPerMember {
    /// Whose answer, for which centre and page size.
    struct Key: Hashable, Sendable {
        var userID: String
        var latitude: Double
        var longitude: Double
        var limit: Int
    }

    private struct Entry {
        var value: Value
        var version: Int64
        var madeAt: ContinuousClock.Instant
        /// When its making began: data read after it.
        var started: ContinuousClock.Instant
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// When each member last wrote (within ``stale``).
        var wrote: [String: ContinuousClock.Instant] = [:]
        /// The answers being made again in the background.
        var renewing: Set<Key> = []
        /// The last block (``forgetEveryone()``): an answer begun before it is not tolerated, so
        /// one still being made then (in a request or in the background) is not given after it.
        var forgotten = ContinuousClock.Instant.now - .seconds(3600)
        /// When ``wrote`` was last rid of writes older than ``stale``.
        var pruned = ContinuousClock.Instant.now
    }

    let capacity: Int
    let lifetime: Duration
    /// How long an answer is given again after others' changes moved the version.
    let stale: Duration
    /// PostgreSQL: the version the `recs` notifications and this instance's writes move.
    let cluster: ClusterFeedVersion?
    private let stored: @Sendable () async -> Int64?
    private let state = Mutex(State())
    private let answered = Atomic<Int>(0)

    /// A cache over `cluster`'s version when given, else over `stored` (the database's counter;
    /// `nil`: keep nothing now); a zero `lifetime` turns it off, a zero `stale` makes every change
    /// count at once.
    init(
        lifetime: Duration, stale: Duration = .zero, capacity: Int = 1000, cluster: ClusterFeedVersion?,
        stored: @escaping @Sendable () async -> Int64? = { nil }
    ) {
        self.lifetime = lifetime
        self.stale = stale
        self.capacity = capacity
        self.cluster = cluster
        self.stored = stored
    }

    /// The version now, or `nil` when nothing may be kept or answered from memory.
    func version() async -> Int64? {
        guard lifetime > .zero else { return nil }
        if let cluster { return cluster.current }
        return await stored()
    }

    /// The answer kept for `key` if it is younger than ``lifetime`` and was made at `version`, or
    /// begun less than ``stale`` ago with no write of its member since.
    func answer(_ key: Key, at version: Int64) -> Value? {
        find(key, at: version)?.value
    }

    /// The answer kept for `key` (as ``answer(_:at:)``), and whether the caller is to make it again
    /// in the background: it stands for a version that moved, and half of ``stale`` has passed
    /// (once per answer: the key is then marked as being made again).
    private func find(_ key: Key, at version: Int64) -> (value: Value, renew: Bool)? {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            let tolerated =
                now - entry.started < stale && state.forgotten < entry.started
                && state.wrote[key.userID].map { $0 < entry.started } ?? true
            guard now - entry.madeAt < lifetime, entry.version == version || tolerated else {
                state.entries[key] = nil
                return nil
            }
            answered.add(1, ordering: .relaxed)
            let renew =
                entry.version != version && now - entry.started >= stale / 2 && state.renewing.insert(key).inserted
            return (entry.value, renew)
        }
    }

    /// Keeps `value`, made from the data at `version`, begun at `started`.
    func keep(_ value: Value, for key: Key, madeAt version: Int64, started: ContinuousClock.Instant = .now) {
        let now = ContinuousClock.now
        state.withLock { state in
            if state.entries[key] == nil && state.entries.count >= capacity {
                state.entries = state.entries.filter {
                    now - $0.value.madeAt < lifetime && ($0.value.version == version || now - $0.value.started < stale)
                }
                if state.entries.count >= capacity,
                    let oldest = state.entries.min(by: { $0.value.madeAt < $1.value.madeAt })
                {
                    state.entries[oldest.key] = nil
                }
            }
            state.entries[key] = Entry(value: value, version: version, madeAt: now, started: started)
        }
    }

    /// `userID` changed something (after its commit): their next answer is made again.
    func wrote(_ userID: String) {
        guard stale > .zero else { return }
        let now = ContinuousClock.now
        state.withLock { state in
            // A write older than `stale` holds back no answer: every one begun before it is too old.
            // At most once per half of it, so that many writers do not make every write a scan.
            if state.wrote.count >= 10 * capacity && now - state.pruned >= stale / 2 {
                state.wrote = state.wrote.filter { now - $0.value < stale }
                state.pruned = now
            }
            state.wrote[userID] = now
        }
    }

    /// A change that must reach everyone at once (a block): every kept answer is dropped.
    func forgetEveryone() {
        let now = ContinuousClock.now
        state.withLock { state in
            state.entries.removeAll()
            state.forgotten = now
        }
    }

    /// The answer for `userID` around `center` in pages of `limit`: the one kept at `version`, or
    /// the one `make` makes now, then kept under `version`. With no `version` (a refresh, or
    /// nothing may be kept now) it is always made and never kept. Read `version` before the first
    /// read of the data `make` uses: a change after it makes a different version.
    ///
    /// A kept answer that others' changes have outdated is made again in the background once half
    /// of ``stale`` has passed, while it is still given: a member who keeps asking never waits for
    /// it to be made, and every member's answers, begun at the same moment, do not all fall due
    /// at the next one together.
    func answer(
        for userID: String, around center: GeoPoint, limit: Int, at version: Int64?,
        make: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let key = Key(userID: userID, latitude: center.latitude, longitude: center.longitude, limit: limit)
        if let version, let (kept, renew) = find(key, at: version) {
            if renew { self.renew(key, make: make) }
            return kept
        }
        let started = ContinuousClock.now
        let value = try await make()
        if let version { keep(value, for: key, madeAt: version, started: started) }
        return value
    }

    /// Makes the answer for `key` again, in a task of its own, and keeps it (a failure keeps the
    /// answer there was; the next request past ``stale`` makes it).
    private func renew(_ key: Key, make: @escaping @Sendable () async throws -> Value) {
        Task {
            defer { state.withLock { _ = $0.renewing.remove(key) } }
            guard let version = await version() else { return }
            let started = ContinuousClock.now
            guard let value = try? await make() else { return }
            keep(value, for: key, madeAt: version, started: started)
        }
    }

    /// How many answers are kept (for tests).
    var count: Int { state.withLock { $0.entries.count } }
    /// How many requests were answered from memory (for tests).
    var hits: Int { answered.load(ordering: .relaxed) }
}

/// What ``OwnWritesMiddleware`` tells a cache kept per member.
protocol KeptPerMember: Sendable {
    /// `userID` changed something (after its commit).
    func wrote(_ userID: String)
    /// A change that must reach everyone at once.
    func forgetEveryone()
}
