import Foundation
import TonightAPI
import TonightCore

/// `GET /v1/events` as a search: its parameters checked and turned into the SQL side
/// (``EventQuery``) and the parts SQL cannot decide — the `when` window in each event's own time
/// zone, the words relevance is scored on, and the order.
struct EventSearch: Sendable {
    typealias Parameters = Operations.ListEvents.Input.Query
    typealias Sort = Parameters.SortPayload

    var query: EventQuery
    var when: When?
    var words: [Substring] = []
    var sort: Sort
    var now: Date

    /// Checks `q`, listing every bad parameter at once (400); `categories` expands a category to
    /// its descendants.
    init(_ q: Parameters, now: Date, categories: () async throws -> [CategoryRecord]) async throws {
        self.now = now
        var issues: [FieldIssue] = []
        query = EventQuery(from: Clock.millis(now))
        (query.near, query.radius) = Paging.near(q.near, radius: q.radius, issues: &issues)
        query.cityKey = q.city
        if let text = q.when {
            switch When.parse(text) {
            case .success(let parsed): when = parsed
            case .failure(let issue): issues.append(issue)
            }
        }
        if let price = q.maxPrice {
            if price.isFinite && price >= 0 {
                query.maxPrice = price
            } else {
                issues.append(.init(field: "maxPrice", code: "out_of_range", message: "Use a price of 0 or more."))
            }
        }
        if let text = q.q {
            if TextRules.isClean(text) {
                words = SearchText.words(text)
                if !words.isEmpty { query.text = words.joined(separator: " ") }
            } else {
                issues.append(.init(field: "q", code: "invalid", message: "No control characters."))
            }
        }
        sort = q.sort ?? .start
        if sort == .distance && query.near == nil {
            issues.append(.init(field: "sort", code: "needs_near", message: "Sorting by distance needs near."))
        }
        if sort == .relevance && words.isEmpty {
            issues.append(.init(field: "sort", code: "needs_q", message: "Sorting by relevance needs q."))
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
        if let category = q.category {
            query.categoryIDs = CategoryTree.descendants(of: category, in: try await categories())
        }
        if let artist = q.artist { query.artistIDs = [artist] }
        query.status = q.status.flatMap { EventStatus(rawValue: $0.rawValue) }
        query.kinds = EventKind.set(q.kind)
        // SQL reads a day more than asked (an event whose time is not announced starts at its
        // local midnight); the exact check then runs in each event's own time zone.
        query.from = Clock.millis(now) - EventWindows.slack
        if let when { query.within(when, now: now) }
    }

    /// Whether `record` is in the asked window (upcoming, without `when`), in its own time zone.
    func keeps(_ record: EventRecord) -> Bool {
        guard let when else { return EventWindows.isUpcoming(record, now: now) }
        return EventWindows.contains(record, when: when, now: now)
    }
}

extension EventService {
    /// One page of `search`: by start through the keyset cursor; by distance or relevance over up
    /// to 2,000 matches (relevance scores the name, the place and the performers against the words).
    func searchPage(_ search: EventSearch, cursor: String?, limit: Int, callerID: String?) async throws
        -> Components.Schemas.EventPage
    {
        try await searchPage(
            search.query, cursor: cursor, limit: limit, byStart: search.sort == .start, callerID: callerID,
            now: search.now, keepBatch: { $0.filter(search.keeps) }
        ) { matches, placesByID in
            if search.sort == .distance, let center = search.query.near {
                return EventService.byDistance(matches, from: center, places: placesByID)
            }
            return try await byRelevance(matches, to: search.words, places: placesByID)
        }
    }

    /// `matches` most relevant to `words` first, then by start.
    func byRelevance(_ matches: [EventRecord], to words: [Substring], places: [String: PlaceRecord]) async throws
        -> [EventRecord]
    {
        let performers = try await events.performers(of: matches.map(\.id))
        let artists = try await catalog.artists(ids: performers.values.flatMap { $0 })
        let scores = Dictionary(
            matches.map { e in
                (
                    e.id,
                    EventRelevance.score(
                        words: words, name: e.name, placeName: places[e.placeID]?.name ?? "",
                        performers: (performers[e.id] ?? []).compactMap { artists[$0]?.name })
                )
            }, uniquingKeysWith: { a, _ in a })
        return matches.sorted {
            (-(scores[$0.id] ?? 0), $0.startAt, $0.id) < (-(scores[$1.id] ?? 0), $1.startAt, $1.id)
        }
    }
}

extension EventKind {
    /// The kinds a list asked for (`kind=show&kind=party`); nil when it asked for none (every kind).
    static func set(_ asked: [Components.Schemas.EventKind]?) -> Set<EventKind>? {
        guard let asked, !asked.isEmpty else { return nil }
        return Set(asked.compactMap { EventKind(rawValue: $0.rawValue) })
    }
}
