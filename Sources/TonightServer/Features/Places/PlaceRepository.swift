import SQLKit
import TonightCore

/// Where a place is, for ranking by distance before its row is read.
struct PlaceHit: Sendable, Equatable {
    var id: String
    var location: GeoPoint
}

/// A row of `places`.
struct PlaceRecord: Sendable, Equatable {
    var id: String
    var name: String
    var category: String
    var latitude: Double
    var longitude: Double
    var street: String?
    var postalCode: String?
    var city: String?
    var region: String?
    var country: String?
    var cityKey: String?
    var regionKey: String?
    var timeZone: String
    var openingHours: String?
    var imageURL: String?
    var website: String?
    var source: String?
    var sourceID: String?
    var createdBy: String?
    var createdAt: Int64
    var updatedAt: Int64

    var location: GeoPoint { GeoPoint(latitude: latitude, longitude: longitude) }
}

/// Which places a list query wants. Geo filters narrow in SQL; distance and opening hours are
/// checked exactly by the caller.
struct PlaceQuery: Sendable {
    var near: GeoPoint?
    var radius: Double = 2000
    var bbox: BoundingBox?
    var text: String?
    var category: String?
    /// Only the categories of this group (nightlife venues or sports spots).
    var group: PlaceGroup?
    var cityKey: String?
    /// At most this many rows come back (the caller pages over them).
    var cap: Int = 5000
    /// Session spots too (they stay out of venue lists).
    var includeSpots = false
}

/// Storage of places.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct PlaceRepository: Sendable {
    let db: any SQLDatabase
    /// For writes: inserts move the places version in their transaction (migration 0037).
    var database: Database?

    /// The `source` of places made for sessions (coordinates and a label), which stay out of venue lists.
    static let spotSource = "spot"

    static let columns =
        "id, name, category, latitude, longitude, street, postal_code, city, region, country, city_key, region_key, time_zone, opening_hours, image_url, website, source, source_id, created_by, created_at, updated_at"

    /// Adds `place` and moves the places version with it (not for a session spot: nearby searches
    /// never show one, see ``NearbyIndex``).
    func insert(_ place: PlaceRecord) async throws {
        guard let database, place.source != Self.spotSource else { return try await Self.insert(place, on: db) }
        try await database.transaction { db in
            try await Self.insert(place, on: db)
            try await database.movePlacesVersion(on: db)
        }
    }

    static func insert(_ place: PlaceRecord, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            INSERT INTO places (\(unsafeRaw: Self.columns), name_folded, cell) VALUES (
                \(bind: place.id), \(bind: place.name), \(bind: place.category), \(bind: place.latitude),
                \(bind: place.longitude), \(bind: place.street), \(bind: place.postalCode), \(bind: place.city),
                \(bind: place.region), \(bind: place.country), \(bind: place.cityKey), \(bind: place.regionKey),
                \(bind: place.timeZone), \(bind: place.openingHours), \(bind: place.imageURL), \(bind: place.website),
                \(bind: place.source), \(bind: place.sourceID), \(bind: place.createdBy), \(bind: place.createdAt),
                \(bind: place.updatedAt), \(bind: SearchText.fold(place.name)), \(bind: PlaceGrid.cell(of: place.location)))
            """
        ).run()
    }

    func update(_ place: PlaceRecord) async throws {
        try await db.raw(
            """
            UPDATE places SET name = \(bind: place.name), name_folded = \(bind: SearchText.fold(place.name)),
                category = \(bind: place.category), latitude = \(bind: place.latitude),
                longitude = \(bind: place.longitude), cell = \(bind: PlaceGrid.cell(of: place.location)),
                street = \(bind: place.street), postal_code = \(bind: place.postalCode), city = \(bind: place.city),
                region = \(bind: place.region), country = \(bind: place.country), city_key = \(bind: place.cityKey),
                region_key = \(bind: place.regionKey), time_zone = \(bind: place.timeZone),
                opening_hours = \(bind: place.openingHours), image_url = \(bind: place.imageURL),
                website = \(bind: place.website), updated_at = \(bind: place.updatedAt)
            WHERE id = \(bind: place.id)
            """
        ).run()
    }

    func find(id: String) async throws -> PlaceRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM places WHERE id = \(bind: id)").first()
            .map(Self.decode)
    }

    func find(ids: [String]) async throws -> [String: PlaceRecord] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await db.raw(
            "SELECT \(unsafeRaw: Self.columns) FROM places WHERE id IN (\(binds: Array(Set(ids))))"
        ).all()
        return Dictionary(uniqueKeysWithValues: try rows.map(Self.decode).map { ($0.id, $0) })
    }

    /// Candidates for `query` without `near` (by name, at most `cap`).
    func candidates(_ query: PlaceQuery) async throws -> [PlaceRecord] {
        let conditions = Self.filters(query)
        let whereClause = conditions.isEmpty ? SQLQueryString("") : " WHERE " + conditions.joined(separator: " AND ")
        let sql: SQLQueryString =
            "SELECT \(unsafeRaw: Self.columns) FROM places" + whereClause
            + " ORDER BY name_folded, id LIMIT \(literal: query.cap)"
        return try await db.raw(sql).all().map(Self.decode)
    }

    /// Every place within the grid cells covering `query.near`'s circle, as id and position only.
    func nearby(_ query: PlaceQuery) async throws -> [PlaceHit] {
        guard let sql = Self.nearbySQL(query) else { return [] }
        return try await db.raw(sql).all().compactMap { row in
            Self.hit(try row.decode(column: "hit", as: String.self))
        }
    }

    /// Every place in the grid cells of `range` but session spots, with what nearby searches filter
    /// on (for ``NearbyIndex``). As in ``nearby(_:)``, most of a row comes as one text column
    /// (`cell|lat|lon|category|id`; categories are names without `|`): a cell holds up to a few
    /// thousand places, and decoding six columns each through SQLKit cost more than reading them.
    func spots(inCells range: ClosedRange<Int64>) async throws -> [(cell: Int64, spot: NearbyIndex.Spot)] {
        var cities: [String: String] = [:]
        return try await db.raw(
            """
            SELECT cell || '|' || latitude || '|' || longitude || '|' || category || '|' || id AS spot, city_key
            FROM places WHERE cell BETWEEN \(bind: range.lowerBound) AND \(bind: range.upperBound)
            AND (source IS NULL OR source <> 'spot')
            """
        ).all().compactMap { row in
            let text = try row.decode(column: "spot", as: String.self)
            let parts = text.split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false)
            guard parts.count == 5, let cell = Int64(parts[0]), let latitude = Double(parts[1]),
                let longitude = Double(parts[2])
            else { return nil }
            // One string per city, shared by its places.
            let city = try row.decode(column: "city_key", as: String?.self).map { key in
                if let kept = cities[key] { return kept }
                cities[key] = key
                return key
            }
            let spot = NearbyIndex.Spot(
                hit: PlaceHit(id: String(parts[4]), location: GeoPoint(latitude: latitude, longitude: longitude)),
                category: String(parts[3]), cityKey: city)
            return (cell, spot)
        }
    }

    /// The query of ``nearby(_:)``: it reads only the `places_cell_geo` index, never the table.
    static func nearbySQL(_ query: PlaceQuery) -> SQLQueryString? {
        guard let center = query.near else { return nil }
        let extra = Self.filters(query)
        let band = PlaceGrid.latitudeBand(around: center, radius: query.radius)
        let branches: [SQLQueryString]
        if let ranges = PlaceGrid.cellRanges(around: center, radius: query.radius) {
            // One branch per range keeps each a plain index range scan; the box around the circle
            // is checked inside the index, so only places in it become rows.
            let spans = PlaceGrid.longitudeSpans(around: center, radius: query.radius, band: band)
            let longitude =
                "("
                + spans.map { "longitude BETWEEN \(bind: $0.lowerBound) AND \(bind: $0.upperBound)" as SQLQueryString }
                .joined(separator: " OR ") + ")"
            branches = ranges.map { range in
                ([
                    "cell BETWEEN \(bind: range.lowerBound) AND \(bind: range.upperBound)",
                    "latitude BETWEEN \(bind: band.lowerBound) AND \(bind: band.upperBound)", longitude,
                ] + extra).joined(separator: " AND ")
            }
        } else {
            branches = [([Self.nearCondition(center, radius: query.radius)] + extra).joined(separator: " AND ")]
        }
        // One text column per row (`lat|lon|id`): a dense area yields a thousand rows, and decoding a
        // column through SQLKit costs more than SQLite's work to find it.
        return branches.map { "SELECT latitude || '|' || longitude || '|' || id AS hit FROM places WHERE " + $0 }
            .joined(separator: " UNION ALL ")
    }

    /// Reads `lat|lon|id` (ids may contain `|`; coordinates never do).
    static func hit(_ text: String) -> PlaceHit? {
        let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let latitude = Double(parts[0]), let longitude = Double(parts[1]) else { return nil }
        return PlaceHit(id: String(parts[2]), location: GeoPoint(latitude: latitude, longitude: longitude))
    }

    /// The non-geo filters and the bounding box of a query, as SQL conditions.
    static func filters(_ query: PlaceQuery) -> [SQLQueryString] {
        var conditions: [SQLQueryString] = []
        if let box = query.bbox { conditions.append(boxCondition(box)) }
        if let text = query.text, !text.isEmpty {
            conditions.append("name_folded LIKE \(bind: "%" + SQLText.likeEscaped(text) + "%") ESCAPE '\\'")
        }
        if let category = query.category { conditions.append("category = \(bind: category)") }
        if let group = query.group {
            conditions.append("category IN (\(binds: group.categories.map(\.rawValue)))")
        }
        if let city = query.cityKey { conditions.append("city_key = \(bind: city)") }
        // Spots made for sessions (coordinates and a label) are not venues: they stay out of lists.
        if !query.includeSpots { conditions.append("(source IS NULL OR source <> 'spot')") }
        return conditions
    }

    /// Cell ranges for small circles; a latitude band and longitude spans for large ones.
    static func nearCondition(_ center: GeoPoint, radius: Double, table: String = "") -> SQLQueryString {
        let t = table.isEmpty ? "" : table + "."
        if let ranges = PlaceGrid.cellRanges(around: center, radius: radius) {
            return "("
                + ranges.map {
                    "\(unsafeRaw: t)cell BETWEEN \(bind: $0.lowerBound) AND \(bind: $0.upperBound)" as SQLQueryString
                }.joined(separator: " OR ") + ")"
        }
        let band = PlaceGrid.latitudeBand(around: center, radius: radius)
        let spans = PlaceGrid.longitudeSpans(around: center, radius: radius, band: band)
        let lon = spans.map {
            "\(unsafeRaw: t)longitude BETWEEN \(bind: $0.lowerBound) AND \(bind: $0.upperBound)" as SQLQueryString
        }.joined(separator: " OR ")
        return "(\(unsafeRaw: t)latitude BETWEEN \(bind: band.lowerBound) AND \(bind: band.upperBound) AND (" + lon
            + "))"
    }

    static func boxCondition(_ box: BoundingBox, table: String = "") -> SQLQueryString {
        let t = table.isEmpty ? "" : table + "."
        let lat: SQLQueryString =
            "\(unsafeRaw: t)latitude BETWEEN \(bind: box.minLatitude) AND \(bind: box.maxLatitude)"
        if box.minLongitude <= box.maxLongitude {
            return "(" + lat
                + " AND \(unsafeRaw: t)longitude BETWEEN \(bind: box.minLongitude) AND \(bind: box.maxLongitude))"
        }
        return "(" + lat
            + " AND (\(unsafeRaw: t)longitude >= \(bind: box.minLongitude) OR \(unsafeRaw: t)longitude <= \(bind: box.maxLongitude)))"
    }

    static func decode(_ row: any SQLRow) throws -> PlaceRecord {
        PlaceRecord(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            category: try row.decode(column: "category", as: String.self),
            latitude: try row.decode(column: "latitude", as: Double.self),
            longitude: try row.decode(column: "longitude", as: Double.self),
            street: try row.decode(column: "street", as: String?.self),
            postalCode: try row.decode(column: "postal_code", as: String?.self),
            city: try row.decode(column: "city", as: String?.self),
            region: try row.decode(column: "region", as: String?.self),
            country: try row.decode(column: "country", as: String?.self),
            cityKey: try row.decode(column: "city_key", as: String?.self),
            regionKey: try row.decode(column: "region_key", as: String?.self),
            timeZone: try row.decode(column: "time_zone", as: String.self),
            openingHours: try row.decode(column: "opening_hours", as: String?.self),
            imageURL: try row.decode(column: "image_url", as: String?.self),
            website: try row.decode(column: "website", as: String?.self),
            source: try row.decode(column: "source", as: String?.self),
            sourceID: try row.decode(column: "source_id", as: String?.self),
            createdBy: try row.decode(column: "created_by", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self))
    }
}
