import Foundation
import NIOConcurrencyHelpers
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct PlacesHandlers: Sendable {
    let geo: GeoService
    let places: PlaceRepository
    let events: EventRepository
    /// Positions and rows for nearby searches, kept in memory (`nil`: off).
    let nearby: NearbyIndex?

    func listPlaces(_ input: Operations.ListPlaces.Input) async throws -> Operations.ListPlaces.Output {
        let q = input.query
        let limit = try Paging.limit(q.limit)
        let offset = try Paging.offset(q.cursor)
        var issues: [FieldIssue] = []
        var query = PlaceQuery()
        (query.near, query.radius) = Paging.near(q.near, radius: q.radius, issues: &issues)
        if let box = q.bbox {
            switch BoundingBox.parse(box) {
            case .success(let bbox): query.bbox = bbox
            case .failure(let issue): issues.append(issue)
            }
        }
        if let text = q.q {
            guard TextRules.isClean(text) else {
                throw APIError.validation([.init(field: "q", code: "invalid", message: "No control characters.")])
            }
            query.text = SearchText.fold(text)
        }
        query.category = q.category?.rawValue
        query.group = q.group.flatMap { PlaceGroup(rawValue: $0.rawValue) }
        query.cityKey = q.city
        guard issues.isEmpty else { throw APIError.validation(issues) }

        let now = Date()
        let keep: (PlaceRecord) -> Bool = { place in
            (q.openNow != true || PlaceHours.state(place, at: now) == .open)
                && (q.openTonight != true || PlaceHours.openTonight(place, now: now) == .open)
        }
        let page: (items: [(PlaceRecord, Double?)], next: String?)
        if let center = query.near {
            let found = try await nearbyPage(query, center: center, offset: offset, limit: limit, keep: keep)
            if let answer = EncodedAnswer.current, let version = found.version,
                let fragments = nearby?.fragments(found.items.map(\.0.id), at: version)
            {
                // The same page from the bytes kept per place (see PlaceJSON).
                let items = zip(found.items, fragments).map { item, fragment in
                    (fragment, item.1, Components.Schemas.OpenState(PlaceHours.state(item.0, at: now)))
                }
                answer.set(PlaceJSON.page(items, next: found.next))
                return .ok(.init(body: .json(.init(items: [], nextCursor: found.next))))
            }
            page = (found.items, found.next)
        } else {
            let found = try await places.candidates(query).filter(keep).map { ($0, nil as Double?) }
            page = Paging.page(found, offset: offset, limit: limit)
        }
        let items = page.items.map { Components.Schemas.Place($0.0, distance: $0.1, now: now) }
        return .ok(.init(body: .json(.init(items: items, nextCursor: page.next))))
    }

    /// Places within the circle, nearest first: positions come from the index, full rows only for
    /// the page (read in slices in distance order while a filter on the rows drops some). The search
    /// starts with a small circle and widens it until the page is full: every place nearer than the
    /// circle's edge is in it, so in a dense city a page reads a few dozen rows, not thousands. The
    /// next circle is sized from the places the last one held (their number grows with the area),
    /// so most pages take one or two searches.
    ///
    /// Positions and rows come from the ``NearbyIndex`` when it is on and covers the query (read
    /// at the version read first, which the answer gives), otherwise from the database (no version).
    func nearbyPage(
        _ query: PlaceQuery, center: GeoPoint, offset: Int, limit: Int, keep: (PlaceRecord) -> Bool
    ) async throws -> (items: [(PlaceRecord, Double?)], next: String?, version: Int64?) {
        let places = self.places
        var hits: (PlaceQuery) async throws -> [PlaceHit] = { try await places.nearby($0) }
        var rows: ([String]) async throws -> [String: PlaceRecord] = { try await places.find(ids: $0) }
        var version: Int64?
        if let nearby, NearbyIndex.covers(query), let current = await nearby.version() {
            version = current
            hits = { try await nearby.hits($0, at: current, load: places.spots(inCells:)) }
            rows = { try await nearby.rows($0, at: current, read: places.find(ids:)) }
        }
        var circle = query
        circle.radius = min(query.radius, 300)
        while true {
            let ranked = try await hits(circle)
                .map { ($0.id, $0.location.distance(to: center)) }
                .filter { $0.1 <= circle.radius }
                .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
            var kept: [(PlaceRecord, Double?)] = []
            var start = 0
            while start < ranked.count, kept.count <= offset + limit {
                let slice = ranked[start..<min(ranked.count, start + (start == 0 ? offset + limit + 1 : 100))]
                let found = try await rows(slice.map(\.0))
                for (id, distance) in slice {
                    if let place = found[id], keep(place) { kept.append((place, distance)) }
                }
                start += slice.count
            }
            let full = kept.count > offset + limit
            if full || circle.radius >= query.radius {
                let items = Array(kept.dropFirst(offset).prefix(limit))
                return (items, full ? Paging.offsetCursor(offset + limit) : nil, version)
            }
            circle.radius = min(
                query.radius, PlaceGrid.widened(circle.radius, found: kept.count, wanted: offset + limit + 1))
        }
    }

    func getPlace(_ input: Operations.GetPlace.Input) async throws -> Operations.GetPlace.Output {
        guard let place = try await places.find(id: input.path.placeId) else {
            throw APIError.notFound("No such place.")
        }
        return .ok(.init(body: .json(.init(place, distance: nil, now: Date()))))
    }

    func createPlace(_ input: Operations.CreatePlace.Input) async throws -> Operations.CreatePlace.Output {
        let caller = try RequestInfo.requireModerator()
        let body = input.body.json
        let now = Clock.millis()
        var place = PlaceRecord(
            id: Identifier.make(), name: "", category: body.category.rawValue, latitude: 0, longitude: 0,
            timeZone: "UTC", createdBy: caller.userID, createdAt: now, updatedAt: now)
        try PlaceEdit.apply(
            .init(
                name: body.name, category: body.category, location: body.location, street: body.street,
                postalCode: body.postalCode, openingHours: body.openingHours, imageURL: body.imageURL,
                website: body.website), to: &place, geo: geo)
        try await places.insert(place)
        return .created(.init(body: .json(.init(place, distance: nil, now: Date()))))
    }

    func updatePlace(_ input: Operations.UpdatePlace.Input) async throws -> Operations.UpdatePlace.Output {
        _ = try RequestInfo.requireModerator()
        let patch = input.body.json
        guard var place = try await places.find(id: input.path.placeId) else {
            throw APIError.notFound("No such place.")
        }
        try PlaceEdit.apply(patch, to: &place, geo: geo)
        place.updatedAt = Clock.millis()
        try await places.update(place)
        return .ok(.init(body: .json(.init(place, distance: nil, now: Date()))))
    }
}

/// Validation of place edits, apart from I/O: every invalid field is reported at once.
enum PlaceEdit {
    static func apply(_ patch: Components.Schemas.PlacePatch, to place: inout PlaceRecord, geo: GeoService) throws {
        var issues: [FieldIssue] = []
        if let name = patch.name?.trimmingCharacters(in: .whitespacesAndNewlines) {
            if name.isEmpty || name.count > 200 || !TextRules.isClean(name) {
                issues.append(.init(field: "name", code: "invalid", message: "Use 1–200 characters."))
            } else {
                place.name = name
            }
        }
        if let category = patch.category { place.category = category.rawValue }
        if let location = patch.location {
            let found = GeoPoint.issues(
                latitude: location.lat, longitude: location.lon, latitudeField: "location.lat",
                longitudeField: "location.lon")
            if found.isEmpty {
                place.latitude = location.lat
                place.longitude = location.lon
                if let locality = geo.locality(of: place.location) {
                    place.city = locality.city
                    place.region = locality.region
                    place.country = locality.country
                    place.cityKey = locality.cityKey
                    place.regionKey = locality.regionKey
                    place.timeZone = locality.timeZone
                }
            } else {
                issues += found
            }
        }
        func text(_ value: String?, _ field: String, max: Int, assign: (String?) -> Void) {
            guard let value else { return }
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.count > max || !TextRules.isClean(trimmed) {
                issues.append(.init(field: field, code: "invalid", message: "At most \(max) characters."))
            } else {
                assign(trimmed.isEmpty ? nil : trimmed)
            }
        }
        text(patch.street, "street", max: 200) { place.street = $0 }
        text(patch.postalCode, "postalCode", max: 20) { place.postalCode = $0 }
        text(patch.openingHours, "openingHours", max: 500) { place.openingHours = $0 }
        for (value, field) in [(patch.imageURL, "imageURL"), (patch.website, "website")] {
            guard let value else { continue }
            if !value.isEmpty && !WebLink.isValid(value) {
                issues.append(.init(field: field, code: "invalid_url", message: "Use an absolute http or https URL."))
            } else if field == "imageURL" {
                place.imageURL = value.isEmpty ? nil : value
            } else {
                place.website = value.isEmpty ? nil : value
            }
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
    }
}

/// Opening-hours questions about a stored place, in the place's own time zone.
enum PlaceHours {
    static func zone(_ place: PlaceRecord) -> TimeZone { TimeZone(identifier: place.timeZone) ?? .gmt }

    static func state(_ place: PlaceRecord, at instant: Date) -> OpenState {
        guard let text = place.openingHours else { return .unknown }
        return parsed(text).state(at: instant, timeZone: zone(place))
    }

    /// Parsed `opening_hours` texts: most places share a few dozen, and parsing one was a twentieth
    /// of a nearby-places page. Emptied when it reaches 4,096 texts, so it stays small.
    private static let cache = NIOLockedValueBox([String: OpeningHours]())

    static func parsed(_ text: String) -> OpeningHours {
        if let hours = cache.withLockedValue({ $0[text] }) { return hours }
        let hours = OpeningHours(text)
        cache.withLockedValue { cache in
            if cache.count >= 4096 { cache.removeAll(keepingCapacity: true) }
            cache[text] = hours
        }
        return hours
    }

    /// Open at any moment of tonight (now until 06:00 next morning, local).
    static func openTonight(_ place: PlaceRecord, now: Date) -> OpenState {
        guard let text = place.openingHours else { return .unknown }
        let window = LocalClock.window(.tonight, now: now, timeZone: zone(place))
        return parsed(text).isOpen(anytimeIn: window, timeZone: zone(place))
    }
}

/// Absolute http(s) links as stored for places, events and artists.
enum WebLink {
    static func isValid(_ text: String) -> Bool {
        guard text.count <= 2000, TextRules.isClean(text), let url = URL(string: text),
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host?.isEmpty == false
        else { return false }
        return true
    }
}

extension Components.Schemas.Place {
    init(_ place: PlaceRecord, distance: Double?, now: Date) {
        self.init(place, distance: distance, state: .init(PlaceHours.state(place, at: now)))
    }

    /// A distance as answers show it: metres to the decimetre.
    static func shown(_ metres: Double) -> Double { (metres * 10).rounded() / 10 }

    init(_ place: PlaceRecord, distance: Double?, state: Components.Schemas.OpenState) {
        var external: [String: String] = [:]
        if let source = place.source, let id = place.sourceID { external[source] = id }
        self.init(
            id: place.id, name: place.name,
            category: Components.Schemas.PlaceCategory(rawValue: place.category) ?? .other,
            location: .init(lat: place.latitude, lon: place.longitude),
            address: .init(
                street: place.street, postalCode: place.postalCode, city: place.city, region: place.region,
                country: place.country),
            cityKey: place.cityKey, regionKey: place.regionKey, timeZone: place.timeZone,
            openingHours: place.openingHours, openState: state,
            imageURL: RemoteImages.link(place.imageURL, kind: .places, id: place.id), website: place.website,
            externalIds: .init(additionalProperties: external),
            distanceMeters: distance.map(Self.shown),
            appleMapsURL: MapLinks.apple(place.location, name: place.name),
            googleMapsURL: MapLinks.google(place.location, name: place.name),
            createdAt: Clock.date(place.createdAt), updatedAt: Clock.date(place.updatedAt))
    }
}

extension Components.Schemas.OpenState {
    init(_ state: OpenState) {
        switch state {
        case .open: self = .open
        case .closed: self = .closed
        case .unknown: self = .unknown
        }
    }
}
