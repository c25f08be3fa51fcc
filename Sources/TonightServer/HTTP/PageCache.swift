import Foundation
import HTTPTypes
import Metrics
import NIOCore
import Synchronization

/// Encoded anonymous answers kept in memory, of two kinds:
///
/// **Feed pages** (feeds and comments), tagged with the database's feed version (see
/// `FeedVersion`: every write that could change a page moves it, by trigger, in its own
/// transaction). ``PageCacheMiddleware`` on the async path reads the version from the database
/// for every request and reuses a page only at that exact version (this is where pages are made).
/// ``CachedPageHandler`` on the event loop answers without any I/O, so it trusts a version the
/// middleware read within ``trustNanoseconds`` (`FEED_CACHE_TRUST_MS`, 250 ms; after that the
/// next request takes the async path and reads it again), and only while no write request of this
/// server has started or finished since that read began (``noteWrite()``).
///
/// **Artist suggestions**, kept until the first of: a write request of this server starts or
/// ends, the suggester's index is rebuilt (``ArtistSuggester`` notices imports by other processes
/// within its check interval), or the answer's own expiry (the handler says when a count in it
/// would change: the start of the soonest show it counts).
///
/// So a client never reads an answer older than a write this server has answered, its own
/// included; a change made elsewhere (another process, a background job) shows within that time on
/// feeds and within the suggester's check interval on suggestions.
///
/// **On PostgreSQL**, where several instances write and a counter row would be updated by every
/// vote, the version is ``ClusterFeedVersion``: a number in this process that moves on every write
/// request here and on every change notification from the database (any instance, job or import),
/// so both paths compare against it without any I/O. Artist suggestions are not cached there.
///
/// Memory is bounded: at ``capacity`` answers the cache starts over.
final class PageCache: Sendable {
    /// One cached answer and the metrics its route counts in (so the event loop need not look them up).
    struct Page: Sendable {
        let validity: Validity
        let body: ByteBuffer
        let requests: Counter
        let duration: Metrics.Timer
    }

    /// When a page may be answered.
    enum Validity: Sendable {
        /// A feed page: at this feed version.
        case feedVersion(Int64)
        /// A suggestion: until a write, a new index generation, or the deadline (uptime nanoseconds).
        case until(writes: UInt64, generation: Int, deadline: UInt64)
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

    /// The suggester's index generation (see ``ArtistSuggester``).
    let suggestions: SuggestionGeneration
    /// On PostgreSQL: the feed version kept in this process (`nil`: read from the database).
    let cluster: ClusterFeedVersion?

    init(
        signsMedia: Bool, suggestions: SuggestionGeneration, cluster: ClusterFeedVersion? = nil, capacity: Int = 5000,
        trust: Duration = .milliseconds(250)
    ) {
        self.signsMedia = signsMedia
        self.suggestions = suggestions
        self.cluster = cluster
        self.capacity = capacity
        self.trustNanoseconds =
            UInt64(trust.components.seconds) * 1_000_000_000
            + UInt64(trust.components.attoseconds / 1_000_000_000)
    }

    /// The path of artist suggestions.
    static let suggestPath = "/v1/artists/suggest"

    /// Whether a path is one of the cached public reads: the operations marked
    /// `x-tonight-page-cache: true` in openapi.yaml (``CacheablePages``).
    static func isCached(_ path: some StringProtocol) -> Bool {
        cacheable.contains { $0.matches(path) }
    }

    /// Whether a path is one of the feed pages (every cached read but the artist suggestions, which
    /// follow the suggester's index generation instead of the feed version).
    static func isFeed(_ path: some StringProtocol) -> Bool {
        path != suggestPath && isCached(path)
    }

    /// ``CacheablePages/templates``, split once into segments.
    private static let cacheable = CacheablePages.templates.map(PathTemplate.init)

    /// The cache key of a request target (path and query as sent). Feed pages with signed media
    /// URLs are kept per hour (the signatures change every hour).
    func key(_ target: String) -> String {
        signsMedia && !target.hasPrefix(Self.suggestPath) ? target + "#\(Int(Clock.millis() / 3_600_000))" : target
    }

    /// A write request of this server started or finished: pages are not answered on the event
    /// loop again until the version has been read after this.
    func noteWrite() {
        writes.add(1, ordering: .sequentiallyConsistent)
        cluster?.advance()
    }

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

    /// The feed page for `key` at exactly `version` (the async path, which has just read it).
    func page(_ key: String, at version: Int64) -> Page? {
        guard let page = pages.withLock({ $0[key] }), case .feedVersion(version) = page.validity else { return nil }
        return page
    }

    /// The page for `key` if it is current by the rules above (the event loop's path; suggestions
    /// also on the async path).
    func trustedPage(_ key: String) -> Page? {
        guard let page = pages.withLock({ $0[key] }) else { return nil }
        let now = NIODeadline.now().uptimeNanoseconds
        let currentWrites = writes.load(ordering: .sequentiallyConsistent)
        switch page.validity {
        case .feedVersion(let version) where cluster != nil:
            guard cluster?.current == version else { return nil }
        case .feedVersion(let version):
            guard let confirmation = confirmed.withLock({ $0 }), confirmation.writes == currentWrites,
                now &- confirmation.at < trustNanoseconds, confirmation.version == version
            else { return nil }
        case .until(let writes, let generation, let deadline):
            guard writes == currentWrites, generation == suggestions.current, now < deadline else { return nil }
        }
        return page
    }

    /// Keeps a page for the route `route`.
    func store(_ key: String, _ validity: Validity, body: ByteBuffer, route: String) {
        let dimensions = [
            ("http.route", route), ("http.request.method", "GET"), ("http.response.status_code", "200"),
        ]
        let page = Page(
            validity: validity, body: body, requests: Counter(label: "hb.requests", dimensions: dimensions),
            duration: Metrics.Timer(
                label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds))
        pages.withLock { pages in
            if pages.count >= capacity { pages.removeAll(keepingCapacity: true) }
            pages[key] = page
        }
    }
}

/// The generation of ``ArtistSuggester``'s index, readable from any thread: it moves whenever the
/// index is rebuilt, which ends every cached suggestion.
final class SuggestionGeneration: Sendable {
    private let value = Atomic<Int>(0)

    /// The current generation.
    var current: Int { value.load(ordering: .sequentiallyConsistent) }

    /// Starts a new generation.
    func advance() { value.add(1, ordering: .sequentiallyConsistent) }
}

/// The feed version of an instance on PostgreSQL (see ``PageCache``): it moves on every write
/// request of this instance (``PageCache/noteWrite()``) and on every `feed` notification the
/// database sends (migration 0028's triggers, through ``PostgresFanout``). A second one counts
/// the `recs` notifications of migration 0034 for the ``RecommendationCache``.
///
/// Notifications are lost while the listener is not subscribed and late while its connection
/// hangs, so the version is withheld (nothing is cached or answered from the cache) unless the
/// listener has subscribed and its connection answered a heartbeat within ``staleAfter``; and
/// subscribing again, or a heartbeat after a silence that long, moves it, which drops every page
/// kept before.
final class ClusterFeedVersion: Sendable {
    /// How long after the last heartbeat the version is trusted (the listener asks every second).
    static let staleAfter = Duration.seconds(3)
    private static let staleNanoseconds = UInt64(staleAfter.components.seconds) * 1_000_000_000
    private let value = Atomic<Int64>(0)
    /// Uptime nanoseconds of the last heartbeat; 0 while not subscribed.
    private let beatAt = Atomic<UInt64>(0)

    /// The version now, or `nil` while change notifications may be missed.
    var current: Int64? {
        let beat = beatAt.load(ordering: .sequentiallyConsistent)
        guard beat != 0, NIODeadline.now().uptimeNanoseconds &- beat < Self.staleNanoseconds else { return nil }
        return value.load(ordering: .sequentiallyConsistent)
    }

    /// Something a feed page shows has changed.
    func advance() { value.add(1, ordering: .sequentiallyConsistent) }

    /// The change listener has subscribed (`true`) or lost its connection (`false`).
    func listening(_ on: Bool) {
        if on {
            advance()
            beatAt.store(NIODeadline.now().uptimeNanoseconds, ordering: .sequentiallyConsistent)
        } else {
            beatAt.store(0, ordering: .sequentiallyConsistent)
            advance()
        }
    }

    /// The listener's connection answered a heartbeat.
    func heartbeat() {
        let now = NIODeadline.now().uptimeNanoseconds
        let last = beatAt.load(ordering: .sequentiallyConsistent)
        guard last != 0 else { return }
        if now &- last >= Self.staleNanoseconds { advance() }
        beatAt.store(now, ordering: .sequentiallyConsistent)
    }
}

/// How long the answer being made stays true, as its handler tells ``PageCacheMiddleware``
/// (through ``current``): `nil` until the handler says the answer may be kept.
final class AnswerLifetime: Sendable {
    /// The lifetime of the request being handled, if its answer can be cached.
    @TaskLocal static var current: AnswerLifetime?
    private let until = Mutex<Int64?>(nil)

    /// The answer may be kept until this wall-clock time (Unix milliseconds).
    func keep(until millis: Int64) { until.withLock { $0 = millis } }

    /// When the answer stops being true, if the handler allowed keeping it.
    var deadline: Int64? { until.withLock { $0 } }
}

/// A spec path template such as `/v1/places/{placeId}/posts`: a `{name}` segment matches any one
/// non-empty segment, the others match themselves.
struct PathTemplate: Sendable {
    /// The template's segments as UTF-8 (nil: a `{name}` that any one segment fills).
    private let segments: [[UInt8]?]

    init(_ template: String) {
        segments = template.split(separator: "/", omittingEmptySubsequences: false).map {
            $0.hasPrefix("{") && $0.hasSuffix("}") ? nil : Array($0.utf8)
        }
    }

    /// Whether `path` (without its query) fits the template. Every request's path is checked on
    /// the event loop, so this walks its UTF-8 in place instead of splitting it or comparing
    /// characters (grapheme by grapheme, that cost /health 2 % of its time).
    func matches(_ path: some StringProtocol) -> Bool {
        let bytes = path.utf8
        var index = 0
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
            guard index < segments.count else { return false }
            if let literal = segments[index] {
                guard bytes[start..<end].elementsEqual(literal) else { return false }
            } else if start == end {
                return false
            }
            index += 1
            guard end < bytes.endIndex else { break }
            start = bytes.index(after: end)
        }
        return index == segments.count
    }
}
