import Foundation
import TonightAPI
import TonightCore

/// The event operations several features share: finding an event, who may change it, storing an
/// edit with its change records, paging a filtered search, and the API form of events.
struct EventService: Sendable {
    let events: EventRepository
    let places: PlaceRepository
    let catalog: CatalogRepository
    let sessions: SessionRepository

    var assembler: EventAssembler {
        EventAssembler(events: events, places: places, catalog: catalog, sessions: sessions)
    }

    func find(_ id: String) async throws -> EventRecord {
        guard let event = try await events.find(id: id) else { throw APIError.notFound("No such event.") }
        return event
    }

    /// Organisers change their own parties; moderators change anything, including imported shows.
    static func requireOrganizer(_ caller: Principal, of event: EventRecord) throws {
        guard caller.role >= .moderator || (event.organizerID == caller.userID && event.organizerID != nil) else {
            throw APIError.forbidden("Only the organiser or a moderator can do this.", code: .notOrganizer)
        }
    }

    /// Stores an edit of `old` with its change records and answers the event as stored.
    func saveEdit(_ event: EventRecord, from old: EventRecord, by caller: Principal) async throws
        -> Components.Schemas.Event
    {
        var event = event
        event.updatedAt = Clock.millis()
        try await events.update(event, performers: nil, changes: EventChanges.between(old, event, origin: "edit"))
        let stored = try await events.find(id: event.id) ?? event
        guard let item = try await assembler.assemble([stored], callerID: caller.userID, withChanges: true).first
        else { throw APIError.notFound("No such event.") }
        return item
    }

    /// Fills a page in start order, asking for more rows while the exact filter drops some.
    func keysetPage(_ base: EventQuery, limit: Int, keep: (EventRecord) -> Bool) async throws
        -> ([EventRecord], String?)
    {
        try await keysetPage(base, limit: limit, keepBatch: { $0.filter(keep) })
    }

    /// ``keysetPage(_:limit:keep:)`` with a filter that sees a whole batch (to read what it needs at once).
    func keysetPage(
        _ base: EventQuery, limit: Int, keepBatch: ([EventRecord]) async throws -> [EventRecord]
    ) async throws -> ([EventRecord], String?) {
        var query = base
        query.limit = max(50, limit * 2)
        var kept: [EventRecord] = []
        while true {
            let batch = try await events.search(query)
            for record in try await keepBatch(batch) {
                kept.append(record)
                if kept.count == limit + 1 { break }
            }
            if kept.count > limit || batch.count < query.limit { break }
            guard let last = batch.last else { break }
            query.after = (last.startAt, last.id)
        }
        if kept.count > limit {
            let page = Array(kept.prefix(limit))
            return (page, Paging.keysetCursor(page[limit - 1].startAt, page[limit - 1].id))
        }
        return (kept, nil)
    }

    /// One page of a filtered search as the API shows it. By start, pages follow a keyset cursor
    /// through the filtered batches; otherwise up to 2,000 matches are ordered by `rank` (which
    /// gets the matches' places) and paged by offset.
    func searchPage(
        _ base: EventQuery, cursor: String?, limit: Int, byStart: Bool, callerID: String?, now: Date,
        keepBatch: ([EventRecord]) async throws -> [EventRecord],
        rank: ([EventRecord], [String: PlaceRecord]) async throws -> [EventRecord]
    ) async throws -> Components.Schemas.EventPage {
        var query = base
        if byStart {
            query.after = try Paging.keyset(cursor).map { (startAt: $0.0, id: $0.1) }
            let (records, next) = try await keysetPage(query, limit: limit, keepBatch: keepBatch)
            let items = try await assembler.assemble(records, callerID: callerID, distanceFrom: query.near, now: now)
            return .init(items: items, nextCursor: next)
        }
        let offset = try Paging.offset(cursor)
        query.limit = 2000
        let matches = try await keepBatch(try await events.search(query))
        let placesByID = try await places.find(ids: matches.map(\.placeID))
        let page = Paging.page(try await rank(matches, placesByID), offset: offset, limit: limit)
        let items = try await assembler.assemble(page.items, callerID: callerID, distanceFrom: query.near, now: now)
        return .init(items: items, nextCursor: page.next)
    }

    /// `events` nearest `center` first, then by start.
    static func byDistance(_ events: [EventRecord], from center: GeoPoint, places: [String: PlaceRecord])
        -> [EventRecord]
    {
        let distance = { (e: EventRecord) in places[e.placeID].map { $0.location.distance(to: center) } ?? .infinity }
        return events.sorted { (distance($0), $0.startAt, $0.id) < (distance($1), $1.startAt, $1.id) }
    }
}
