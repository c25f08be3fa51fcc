import Foundation
import TonightAPI
import TonightCore

/// Turns event rows into API events: one query each for their places, performers, categories and
/// the caller's attendance, however many events there are.
struct EventAssembler: Sendable {
    let events: EventRepository
    let places: PlaceRepository
    let catalog: CatalogRepository
    let sessions: SessionRepository

    /// Built-in and added sports by slug.
    func sports() async throws -> [String: Sport] {
        var all = SportCatalog.bySlug
        for sport in try await sessions.addedSports() { all[sport.slug] = sport }
        return all
    }

    func assemble(
        _ records: [EventRecord], callerID: String?, distanceFrom center: GeoPoint? = nil, withChanges: Bool = false,
        now: Date = Date()
    ) async throws -> [Components.Schemas.Event] {
        guard !records.isEmpty else { return [] }
        let ids = records.map(\.id)
        let placesByID = try await places.find(ids: records.map(\.placeID))
        let performerIDs = try await events.performers(of: ids)
        let artistsByID = try await catalog.artists(ids: performerIDs.values.flatMap { $0 })
        let categories = Dictionary(
            try await catalog.categories().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var mine: [String: AttendanceStatus] = [:]
        if let callerID { mine = try await events.attendance(of: callerID, in: ids) }
        let sports = records.contains { $0.kind == .session } ? try await self.sports() : [:]
        var result: [Components.Schemas.Event] = []
        for record in records {
            guard let place = placesByID[record.placeID] else { continue }
            let changes = withChanges ? try await events.changes(of: record.id) : nil
            result.append(
                .init(
                    record, place: place, distance: center.map { place.location.distance(to: $0) },
                    performers: (performerIDs[record.id] ?? []).compactMap { artistsByID[$0] },
                    category: record.categoryID.flatMap { categories[$0] }, myStatus: mine[record.id],
                    changes: changes, sports: sports, now: now))
        }
        return result
    }
}

extension Components.Schemas.Event {
    init(
        _ event: EventRecord, place: PlaceRecord, distance: Double?, performers: [ArtistRecord],
        category: CategoryRecord?, myStatus: AttendanceStatus?, changes: [EventChangeRecord]?,
        sports: [String: Sport] = [:],
        now: Date
    ) {
        self.init(
            id: event.id, kind: .init(rawValue: event.kind.rawValue) ?? .party, name: event.name,
            description: event.description, status: .init(rawValue: event.status.rawValue) ?? .scheduled,
            start: Clock.date(event.startAt), end: event.endAt.map(Clock.date), localDate: event.localDate,
            localTime: event.localTime.map { String($0.prefix(5)) }, timeZone: event.timeZone,
            place: .init(place, distance: distance, now: now),
            category: category.map { .init(id: $0.id, name: $0.name) },
            performers: performers.map {
                .init(id: $0.id, name: $0.name, imageURL: RemoteImages.link($0.imageURL, kind: .artists, id: $0.id))
            },
            minPrice: event.minPrice, maxPrice: event.maxPrice, currency: event.currency, ticketURL: event.ticketURL,
            onSaleAt: event.onSaleAt.map(Clock.date), organizerId: event.organizerID,
            counts: .init(
                going: Int(event.goingCount), interested: Int(event.interestedCount),
                following: Int(event.followingCount)),
            myStatus: myStatus,
            changes: changes?.map {
                .init(
                    id: $0.id, field: .init(rawValue: $0.field) ?? .status, oldValue: $0.oldValue,
                    newValue: $0.newValue, changedAt: Clock.date($0.changedAt))
            },
            distanceMeters: distance.map { ($0 * 10).rounded() / 10 },
            session: Components.Schemas.SessionInfo(event, sports: sports),
            createdAt: Clock.date(event.createdAt), updatedAt: Clock.date(event.updatedAt))
    }
}

extension Components.Schemas.SessionInfo {
    /// The session part of an event; nil for other kinds. An unknown sport slug (an added sport
    /// since removed from the database by hand) shows its slug as the name.
    init?(_ event: EventRecord, sports: [String: Sport]) {
        guard event.kind == .session, let slug = event.sport else { return nil }
        let sport = sports[slug] ?? Sport(slug: slug, name: slug, icon: "sportscourt")
        let capacity = event.capacity ?? Int(event.goingCount)
        self.init(
            sport: Components.Schemas.Sport(sport),
            skill: Components.Schemas.SkillLevel(rawValue: event.skill ?? "any") ?? .any,
            capacity: capacity,
            occupied: Int(event.goingCount), openSpots: max(0, capacity - Int(event.goingCount)),
            durationMinutes: Int(((event.endAt ?? event.startAt) - event.startAt) / 60_000))
    }
}

extension Components.Schemas.Sport {
    init(_ sport: Sport) {
        self.init(slug: sport.slug, name: sport.name, icon: sport.icon, builtIn: sport.builtIn)
    }
}

/// The category tree: a category and every descendant, and the nested API form.
enum CategoryTree {
    /// `id` and all categories below it.
    static func descendants(of id: String, in categories: [CategoryRecord]) -> [String] {
        let children = Dictionary(grouping: categories.filter { $0.parentID != nil }, by: { $0.parentID! })
        var result: [String] = []
        var queue = [id]
        var seen = Set<String>()
        while let next = queue.popLast() {
            guard seen.insert(next).inserted else { continue }
            result.append(next)
            queue += (children[next] ?? []).map(\.id)
        }
        return result
    }

    /// Roots (no parent, or a parent Tonight does not know) with their children, by name.
    static func nested(_ categories: [CategoryRecord]) -> [Components.Schemas.Category] {
        let known = Set(categories.map(\.id))
        let children = Dictionary(grouping: categories.filter { $0.parentID.map(known.contains) ?? false }) {
            $0.parentID!
        }
        func build(_ category: CategoryRecord, depth: Int) -> Components.Schemas.Category {
            let below = depth < 20 ? (children[category.id] ?? []).map { build($0, depth: depth + 1) } : []
            return .init(id: category.id, name: category.name, children: below)
        }
        return categories.filter { $0.parentID.map { !known.contains($0) } ?? true }.map { build($0, depth: 0) }
    }
}
