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
/// At most ``capacity`` answers are kept; when full, stale ones go first, then the oldest.
final class RecommendationCache<Value: Sendable>: Sendable {
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
    }

    let capacity: Int
    let lifetime: Duration
    /// PostgreSQL: the version the `recs` notifications and this instance's writes move.
    let cluster: ClusterFeedVersion?
    private let stored: @Sendable () async -> Int64?
    private let entries = Mutex<[Key: Entry]>([:])
    private let answered = Atomic<Int>(0)

    /// A cache over `cluster`'s version when given, else over `stored` (the database's counter;
    /// `nil`: keep nothing now); a zero `lifetime` turns it off.
    init(
        lifetime: Duration, capacity: Int = 1000, cluster: ClusterFeedVersion?,
        stored: @escaping @Sendable () async -> Int64? = { nil }
    ) {
        self.lifetime = lifetime
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

    /// The answer kept for `key` if it was made at `version` and is younger than ``lifetime``.
    func answer(_ key: Key, at version: Int64) -> Value? {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard entry.version == version, now - entry.madeAt < lifetime else {
                entries[key] = nil
                return nil
            }
            answered.add(1, ordering: .relaxed)
            return entry.value
        }
    }

    /// Keeps `value`, made from the data at `version`.
    func keep(_ value: Value, for key: Key, madeAt version: Int64) {
        let now = ContinuousClock.now
        entries.withLock { entries in
            if entries[key] == nil && entries.count >= capacity {
                entries = entries.filter { $0.value.version == version && now - $0.value.madeAt < lifetime }
                if entries.count >= capacity, let oldest = entries.min(by: { $0.value.madeAt < $1.value.madeAt }) {
                    entries[oldest.key] = nil
                }
            }
            entries[key] = Entry(value: value, version: version, madeAt: now)
        }
    }

    /// The answer for `userID` around `center` in pages of `limit`: the one kept at `version`, or
    /// the one `make` makes now, then kept under `version`. With no `version` (a refresh, or
    /// nothing may be kept now) it is always made and never kept. Read `version` before the first
    /// read of the data `make` uses: a change after it makes a different version.
    func answer(
        for userID: String, around center: GeoPoint, limit: Int, at version: Int64?,
        make: () async throws -> Value
    ) async throws -> Value {
        let key = Key(userID: userID, latitude: center.latitude, longitude: center.longitude, limit: limit)
        if let version, let kept = answer(key, at: version) { return kept }
        let value = try await make()
        if let version { keep(value, for: key, madeAt: version) }
        return value
    }

    /// How many answers are kept (for tests).
    var count: Int { entries.withLock { $0.count } }
    /// How many requests were answered from memory (for tests).
    var hits: Int { answered.load(ordering: .relaxed) }
}
