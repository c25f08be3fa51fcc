import Foundation
import TonightAPI
import TonightCore

/// `GET /v1/sessions` as a search: its parameters checked and turned into an ``EventQuery`` of
/// sessions, with the order and the exact checks SQL leaves over (not started, within the radius).
struct SessionSearch: Sendable {
    typealias Parameters = Operations.SearchSessions.Input.Query

    var query: EventQuery
    var byDistance: Bool
    var now: Date

    /// Checks `q`, listing every bad parameter at once (400); `caller` is asked only for
    /// `withFriends`.
    init(_ q: Parameters, now: Date, caller: () throws -> String) throws {
        self.now = now
        var issues: [FieldIssue] = []
        query = EventQuery(from: Clock.millis(now))
        query.kinds = [.session]
        (query.near, query.radius) = Paging.near(q.near, radius: q.radius, issues: &issues)
        query.cityKey = q.city
        if let text = q.sport {
            let slugs = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if slugs.isEmpty || slugs.count > 20 || !slugs.allSatisfy(SportCatalog.isValidSlug) {
                issues.append(
                    .init(field: "sport", code: "invalid", message: "Give 1–20 sport slugs separated by commas."))
            } else {
                query.sports = slugs
            }
        }
        query.skill = q.skill?.rawValue
        if let box = q.bbox {
            switch BoundingBox.parse(box) {
            case .success(let parsed): query.bbox = parsed
            case .failure(let issue): issues.append(issue)
            }
        }
        let first = q.from.map { (CalendarDate($0), "from") }
        let last = q.to.map { (CalendarDate($0), "to") }
        for case (nil, let field)? in [first, last] {
            issues.append(.init(field: field, code: "invalid", message: "Use YYYY-MM-DD."))
        }
        if let a = first?.0, let b = last?.0, b < a {
            issues.append(.init(field: "to", code: "before_from", message: "to is before from."))
        }
        if first != nil || last != nil {
            query.localDates = (first?.0?.description ?? "0000-01-01", last?.0?.description ?? "9999-12-31")
        }
        query.localTimes = q.timeOfDay.map(Self.localTimes)
        query.openOnly = q.openOnly == true
        if q.withFriends == true { query.friendsOf = try caller() }
        byDistance = q.sort == .distance
        if byDistance && query.near == nil {
            issues.append(.init(field: "sort", code: "needs_near", message: "Sorting by distance needs near."))
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
    }

    /// Local start times of a part of the day, as `[from, to)` ranges of `HH:MM`.
    static func localTimes(_ part: Components.Schemas.TimeOfDay) -> [(from: String, to: String)] {
        switch part {
        case .morning: [("05:00", "12:00")]
        case .afternoon: [("12:00", "17:00")]
        case .evening: [("17:00", "22:00")]
        case .night: [("22:00", "24:00"), ("00:00", "05:00")]
        }
    }
}

extension EventService {
    /// One page of `search`: sessions not yet started, by start or nearest first; SQL narrows by grid
    /// cells and the exact distance is checked here.
    func searchPage(_ search: SessionSearch, cursor: String?, limit: Int, callerID: String?) async throws
        -> Components.Schemas.EventPage
    {
        let query = search.query
        let started = Clock.millis(search.now)
        let keep = { (batch: [EventRecord]) async throws -> [EventRecord] in
            let upcoming = batch.filter { $0.startAt >= started }
            guard let center = query.near else { return upcoming }
            let placesByID = try await places.find(ids: upcoming.map(\.placeID))
            return upcoming.filter {
                (placesByID[$0.placeID]?.location.distance(to: center) ?? .infinity) <= query.radius
            }
        }
        return try await searchPage(
            query, cursor: cursor, limit: limit, byStart: !search.byDistance, callerID: callerID, now: search.now,
            keepBatch: keep
        ) { matches, placesByID in
            query.near.map { EventService.byDistance(matches, from: $0, places: placesByID) } ?? matches
        }
    }
}
