import Testing

@testable import TonightCore

private func ad(_ id: String, _ patterns: [String], pages: Set<Int> = [1], style: Int = 0) throws -> AdCandidate {
    AdCandidate(id: id, patterns: try patterns.map { try FeedPattern($0) }, pages: pages, style: style)
}

private func ids(_ feed: FeedIdentity, page: Int = 1, _ candidates: [AdCandidate]) -> [String] {
    AdPlacement.ads(for: feed, page: page, from: candidates).map(\.id)
}

@Suite("AdPlacement")
struct AdPlacementTests {
    let halifaxAll = FeedIdentity(kind: .all, name: "Halifax")

    @Test("feed kind must match")
    func byKind() throws {
        let candidates = [try ad("1", ["a:Halifax"]), try ad("2", ["p:Halifax"]), try ad("3", ["v:Halifax"])]
        #expect(ids(halifaxAll, candidates) == ["1"])
        #expect(ids(FeedIdentity(kind: .pregame, name: "Halifax"), candidates) == ["2"])
        #expect(ids(FeedIdentity(kind: .place, name: "Halifax"), candidates) == ["3"])
    }

    @Test("feed name must match the whole pattern")
    func byPattern() throws {
        let candidates = [try ad("1", ["a:Halifax"]), try ad("2", ["a:(Halifax|Sydney)"]), try ad("3", ["a:Hal"])]
        #expect(ids(halifaxAll, candidates) == ["1", "2"])
        #expect(ids(FeedIdentity(kind: .all, name: "sydney"), candidates) == ["2"])
        #expect(ids(FeedIdentity(kind: .all, name: "Antigonish"), candidates).isEmpty)
    }

    @Test("page must be one of the ad's pages")
    func byPage() throws {
        let candidates = [try ad("1", ["a:.*"], pages: [1, 3]), try ad("2", ["a:.*"], pages: [2])]
        #expect(ids(halifaxAll, page: 1, candidates) == ["1"])
        #expect(ids(halifaxAll, page: 2, candidates) == ["2"])
        #expect(ids(halifaxAll, page: 3, candidates) == ["1"])
        #expect(ids(halifaxAll, page: 4, candidates).isEmpty)
        #expect(ids(halifaxAll, page: 0, candidates).isEmpty)
    }

    @Test("any one of several patterns is enough")
    func multiplePatterns() throws {
        let candidates = [try ad("1", ["a:Halifax", "v:Club.*"]), try ad("2", [])]
        #expect(ids(halifaxAll, candidates) == ["1"])
        #expect(ids(FeedIdentity(kind: .place, name: "Club Med"), candidates) == ["1"])
        #expect(ids(FeedIdentity(kind: .pregame, name: "Halifax"), candidates).isEmpty)
        #expect(ids(FeedIdentity(kind: .place, name: "Halifax"), candidates).isEmpty)
    }

    @Test("order is by id, then input order; candidates come back unchanged")
    func stableOrder() throws {
        let candidates = [
            try ad("c", ["a:.*"]), try ad("a", ["a:.*"], style: 1), try ad("b", ["p:.*"]),
            try ad("b", ["a:.*"], style: 0), try ad("b", ["a:.*"], style: 1), try ad("a0", ["a:.*"]),
        ]
        let placed = AdPlacement.ads(for: halifaxAll, page: 1, from: candidates)
        #expect(placed.map(\.id) == ["a", "a0", "b", "b", "c"])
        #expect(placed.filter { $0.id == "b" }.map(\.style) == [0, 1])
        #expect(placed.first == candidates[1])
        #expect(AdPlacement.ads(for: halifaxAll, page: 1, from: candidates.reversed()).map(\.id) == placed.map(\.id))
        #expect(AdPlacement.ads(for: halifaxAll, page: 1, from: []).isEmpty)
    }
}
