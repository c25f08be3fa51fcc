import Foundation
import HTTPTypes
import Metrics
import NIOCore
import Synchronization

/// Encoded anonymous feed pages, tagged with the database's feed version (see `FeedVersion`: every
/// write that could change a page moves it, by trigger, in its own transaction).
///
/// Two readers share it:
/// - ``FeedCacheMiddleware`` on the async path reads the version from the database for every
///   request and reuses a page only at that exact version (this is where pages are made).
/// - ``CachedPageHandler`` on the event loop answers without any I/O, so it trusts a version the
///   middleware or ``FeedVersionWatcher`` (every ``FeedVersionWatcher/interval``) read
///   recently, and only while no write request of this server has started or finished since that
///   read began (``noteWrite()``). So a client never reads a page older than its own write, or
///   older than any write this server has answered; a change made elsewhere (another process, a
///   background job) is served within one watcher interval.
///
/// Memory is bounded: at ``capacity`` pages the cache starts over. SQLite only (on PostgreSQL,
/// where several instances write, neither reader is installed).
final class FeedPageCache: Sendable {
    /// One cached page and the metrics its route counts in (so the event loop need not look them up).
    struct Page: Sendable {
        let version: Int64
        let body: ByteBuffer
        let requests: Counter
        let duration: Metrics.Timer
    }

    /// A version read from the database, with the write count before the read and when it began.
    struct Confirmation: Sendable {
        var version: Int64
        var writes: UInt64
        var at: UInt64
    }

    /// Signed media URLs change every hour: pages are cached per hour then.
    let signsMedia: Bool
    let capacity: Int
    /// How old a confirmed version may be for the event loop to trust it.
    let trustNanoseconds: UInt64
    private let pages = Mutex<[String: Page]>([:])
    private let writes = Atomic<UInt64>(0)
    private let confirmed = Mutex<Confirmation?>(nil)
    /// How many requests ``CachedPageHandler`` has answered.
    let loopAnswers = Atomic<Int>(0)

    init(signsMedia: Bool, capacity: Int = 5000, trust: Duration = .milliseconds(500)) {
        self.signsMedia = signsMedia
        self.capacity = capacity
        self.trustNanoseconds =
            UInt64(trust.components.seconds) * 1_000_000_000
            + UInt64(trust.components.attoseconds / 1_000_000_000)
    }

    /// Whether a path is one of the cached public reads.
    static func isCached(_ path: some StringProtocol) -> Bool {
        if path == "/v1/feeds/trending" { return true }
        guard path.hasSuffix("/posts") || path.hasSuffix("/comments") else { return false }
        return path.hasPrefix("/v1/places/") || path.hasPrefix("/v1/cities/") || path.hasPrefix("/v1/tags/")
            || path.hasPrefix("/v1/users/") || path.hasPrefix("/v1/posts/")
    }

    /// The cache key of a request target (path and query as sent).
    func key(_ target: String) -> String {
        signsMedia ? target + "#\(Int(Clock.millis() / 3_600_000))" : target
    }

    /// A write request of this server started or finished: pages are not answered on the event
    /// loop again until the version has been read after this.
    func noteWrite() { writes.add(1, ordering: .sequentiallyConsistent) }

    /// The write count to pass to ``confirm(version:writesBefore:)``; take it before reading the version.
    func writeCount() -> UInt64 { writes.load(ordering: .sequentiallyConsistent) }

    /// Records a version read from the database that began after `writesBefore` writes.
    func confirm(version: Int64, writesBefore: UInt64) {
        let now = NIODeadline.now().uptimeNanoseconds
        confirmed.withLock { current in
            if let current, (current.writes, current.version) > (writesBefore, version) { return }
            current = Confirmation(version: version, writes: writesBefore, at: now)
        }
    }

    /// The page for `key` at exactly `version` (the async path, which has just read it).
    func page(_ key: String, at version: Int64) -> Page? {
        guard let page = pages.withLock({ $0[key] }), page.version == version else { return nil }
        return page
    }

    /// The page for `key` if it is current by the rules above (the event loop's path).
    func trustedPage(_ key: String) -> Page? {
        guard let confirmation = confirmed.withLock({ $0 }),
            confirmation.writes == writes.load(ordering: .sequentiallyConsistent),
            NIODeadline.now().uptimeNanoseconds &- confirmation.at < trustNanoseconds
        else { return nil }
        return page(key, at: confirmation.version)
    }

    /// Keeps a page made at `version` for the route `route`.
    func store(_ key: String, version: Int64, body: ByteBuffer, route: String) {
        let dimensions = [
            ("http.route", route), ("http.request.method", "GET"), ("http.response.status_code", "200"),
        ]
        let page = Page(
            version: version, body: body, requests: Counter(label: "hb.requests", dimensions: dimensions),
            duration: Metrics.Timer(
                label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds))
        pages.withLock { pages in
            if pages.count >= capacity { pages.removeAll(keepingCapacity: true) }
            pages[key] = page
        }
    }
}
