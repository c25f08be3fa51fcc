/// An advertisement that may be placed on feeds (already filtered by area).
public struct AdCandidate: Sendable, Equatable {
    /// The advertisement's identifier; placement order is ascending by id.
    public var id: String
    /// The feeds it targets: any one matching pattern is enough.
    public var patterns: [FeedPattern]
    /// The 1-based feed pages it appears on.
    public var pages: Set<Int>
    /// How it is shown: 0 = on its own page, 1 = as an overlay.
    public var style: Int

    /// Creates a candidate.
    public init(id: String, patterns: [FeedPattern], pages: Set<Int>, style: Int) {
        self.id = id
        self.patterns = patterns
        self.pages = pages
        self.style = style
    }
}

/// A feed as seen by placement: its kind and name.
public struct FeedIdentity: Sendable, Equatable {
    /// The kind of feed.
    public var kind: FeedKind
    /// The feed's name (a city or venue name).
    public var name: String

    /// Creates a feed identity.
    public init(kind: FeedKind, name: String) {
        self.kind = kind
        self.name = name
    }
}

/// Decides which advertisements go on a page of a feed.
public enum AdPlacement {
    /// The ads that go on `page` (1-based) of `feed`: those whose pages contain
    /// `page` and any of whose patterns matches the feed. Ordered by ascending
    /// `id`; candidates with equal ids keep their input order.
    public static func ads(for feed: FeedIdentity, page: Int, from candidates: [AdCandidate]) -> [AdCandidate] {
        candidates.enumerated()
            .filter { _, ad in
                ad.pages.contains(page) && ad.patterns.contains { $0.matches(kind: feed.kind, name: feed.name) }
            }
            .sorted { lhs, rhs in
                lhs.element.id != rhs.element.id ? lhs.element.id < rhs.element.id : lhs.offset < rhs.offset
            }
            .map(\.element)
    }
}
