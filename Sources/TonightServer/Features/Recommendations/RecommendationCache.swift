import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// Session recommendations kept per member, place and page size, and answered again while
/// nothing they were made from has changed: ranking 2,000 sessions with their players costs about
/// 30 ms of CPU, so sixteen members asking at once queued for a quarter of a second.
///
/// An answer is kept under a ``Stamp`` taken before it was made, and given again only while the
/// stamp now is the same and it is younger than ``lifetime`` (a minute: sessions start and the
/// ranking's "now" moves on). The stamp's version is the database's recommendation version
/// (migration 0034: sessions, attendance, friendships, blocks, dismissals, preferences, places):
/// on SQLite the counter row, exact for every process that writes; on PostgreSQL the instance's
/// count of `recs` notifications, withheld while they may be missed. A notification arrives a
/// moment after its commit, so on PostgreSQL the stamp also counts this instance's writes
/// (``RecommendationCacheMiddleware``): a member who has just joined a session here never gets the
/// answer from before. Another instance learns of it when the notification arrives.
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

    /// What the data was when an answer began to be made.
    struct Stamp: Equatable, Sendable {
        var version: Int64
        var writes: UInt64
    }

    private struct Entry {
        var value: Value
        var stamp: Stamp
        /// Uptime nanoseconds.
        var madeAt: UInt64
    }

    let capacity: Int
    let lifetime: Duration
    /// Whether this instance's own writes count (PostgreSQL, where the version comes late).
    let countsWrites: Bool
    private let version: @Sendable () async -> Int64?
    private let entries = Mutex<[Key: Entry]>([:])
    private let writes = Atomic<UInt64>(0)
    private let answered = Atomic<Int>(0)

    /// A cache whose stamps read `version` (`nil`: keep nothing now); a zero `lifetime` turns it off.
    init(
        lifetime: Duration, capacity: Int = 1000, countsWrites: Bool,
        version: @escaping @Sendable () async -> Int64?
    ) {
        self.lifetime = lifetime
        self.capacity = capacity
        self.countsWrites = countsWrites
        self.version = version
    }

    /// The stamp now, or `nil` when nothing may be kept or answered from memory.
    func stamp() async -> Stamp? {
        guard lifetime > .zero else { return nil }
        // The write count first: a write that ends after it moves it again.
        let writes = countsWrites ? self.writes.load(ordering: .sequentiallyConsistent) : 0
        guard let version = await version() else { return nil }
        return Stamp(version: version, writes: writes)
    }

    /// The answer kept for `key` if it was made at `stamp` and is younger than ``lifetime``.
    func answer(_ key: Key, at stamp: Stamp) -> Value? {
        let now = NIODeadline.now().uptimeNanoseconds
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard entry.stamp == stamp, !expired(entry, now: now) else {
                entries[key] = nil
                return nil
            }
            answered.add(1, ordering: .relaxed)
            return entry.value
        }
    }

    /// Keeps `value`, made from the data at `stamp`.
    func keep(_ value: Value, for key: Key, madeAt stamp: Stamp) {
        let now = NIODeadline.now().uptimeNanoseconds
        entries.withLock { entries in
            if entries[key] == nil && entries.count >= capacity {
                entries = entries.filter { $0.value.stamp == stamp && !expired($0.value, now: now) }
                if entries.count >= capacity, let oldest = entries.min(by: { $0.value.madeAt < $1.value.madeAt }) {
                    entries[oldest.key] = nil
                }
            }
            entries[key] = Entry(value: value, stamp: stamp, madeAt: now)
        }
    }

    /// A write through this instance is starting or has ended.
    func noteWrite() {
        if countsWrites { writes.add(1, ordering: .sequentiallyConsistent) }
    }

    /// How many answers are kept (for tests).
    var count: Int { entries.withLock { $0.count } }
    /// How many requests were answered from memory (for tests).
    var hits: Int { answered.load(ordering: .relaxed) }

    private func expired(_ entry: Entry, now: UInt64) -> Bool {
        now &- entry.madeAt >= UInt64(lifetime.components.seconds) * 1_000_000_000
            + UInt64(lifetime.components.attoseconds / 1_000_000_000)
    }
}

/// Counts this instance's writes for the ``RecommendationCache`` (before and after each request
/// that is not a `GET` or `HEAD`), so an answer made while a write was under way is not kept.
struct RecommendationCacheMiddleware<Value: Sendable>: RouterMiddleware {
    typealias Context = AppRequestContext
    let cache: RecommendationCache<Value>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method != .get && request.method != .head else { return try await next(request, context) }
        cache.noteWrite()
        defer { cache.noteWrite() }
        return try await next(request, context)
    }
}
