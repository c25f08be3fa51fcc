import SQLKit
import TonightCore

/// Cities imported with `tonight import geonames`, merged into the bundled gazetteer at start-up.
///
/// Over SQLKit.
struct CityRepository: Sendable {
    let db: any SQLDatabase

    func all() async throws -> [City] {
        try await db.raw(
            """
            SELECT geoname_id, name, ascii_name, alternate_names, country_code, admin1_code, latitude, longitude,
                population, time_zone FROM cities
            """
        ).all().map(Self.decode)
    }

    /// Inserts or replaces; returns whether each city was new, changed or the same.
    func upsert(_ cities: [City], now: Int64) async throws -> ImportTally {
        var tally = ImportTally()
        guard !cities.isEmpty else { return tally }
        let existing = try await db.raw(
            """
            SELECT geoname_id, name, ascii_name, alternate_names, country_code, admin1_code, latitude, longitude,
                population, time_zone FROM cities WHERE geoname_id IN (\(binds: cities.map(\.geonameId)))
            """
        ).all().map(Self.decode)
        let byID = Dictionary(existing.map { ($0.geonameId, $0) }, uniquingKeysWith: { a, _ in a })
        for city in cities {
            if let old = byID[city.geonameId] {
                if Self.same(old, city) { tally.unchanged += 1; continue }
                tally.updated += 1
            } else {
                tally.inserted += 1
            }
            try await db.raw(
                """
                INSERT INTO cities (geoname_id, name, ascii_name, alternate_names, country_code, admin1_code, latitude,
                    longitude, population, time_zone, updated_at)
                VALUES (\(bind: city.geonameId), \(bind: city.name), \(bind: city.asciiName),
                    \(bind: city.alternateNames.joined(separator: "\u{1F}")), \(bind: city.countryCode),
                    \(bind: city.admin1Code), \(bind: city.location.latitude), \(bind: city.location.longitude),
                    \(bind: city.population), \(bind: city.timeZone), \(bind: now))
                ON CONFLICT (geoname_id) DO UPDATE SET name = excluded.name, ascii_name = excluded.ascii_name,
                    alternate_names = excluded.alternate_names, country_code = excluded.country_code,
                    admin1_code = excluded.admin1_code, latitude = excluded.latitude, longitude = excluded.longitude,
                    population = excluded.population, time_zone = excluded.time_zone, updated_at = excluded.updated_at
                """
            ).run()
        }
        return tally
    }

    static func same(_ a: City, _ b: City) -> Bool {
        a.name == b.name && a.asciiName == b.asciiName && a.alternateNames == b.alternateNames
            && a.countryCode == b.countryCode && a.admin1Code == b.admin1Code && a.population == b.population
            && a.timeZone == b.timeZone && abs(a.location.latitude - b.location.latitude) < 1e-7
            && abs(a.location.longitude - b.location.longitude) < 1e-7
    }

    static func decode(_ row: any SQLRow) throws -> City {
        let alternates = try row.decode(column: "alternate_names", as: String.self)
        return City(
            geonameId: try row.decode(column: "geoname_id", as: Int.self),
            name: try row.decode(column: "name", as: String.self),
            asciiName: try row.decode(column: "ascii_name", as: String.self),
            alternateNames: alternates.isEmpty ? [] : alternates.split(separator: "\u{1F}").map(String.init),
            countryCode: try row.decode(column: "country_code", as: String.self),
            admin1Code: try row.decode(column: "admin1_code", as: String.self),
            regionName: "",
            location: GeoPoint(
                latitude: try row.decode(column: "latitude", as: Double.self),
                longitude: try row.decode(column: "longitude", as: Double.self)),
            population: try row.decode(column: "population", as: Int.self),
            timeZone: try row.decode(column: "time_zone", as: String.self))
    }
}

/// Counts of an import: what was new, changed, the same, or refused.
public struct ImportTally: Sendable, Equatable {
    public var inserted = 0
    public var updated = 0
    public var unchanged = 0
    public var rejected = 0

    /// An empty tally.
    public init() {}

    static func + (a: ImportTally, b: ImportTally) -> ImportTally {
        var sum = a
        sum.inserted += b.inserted
        sum.updated += b.updated
        sum.unchanged += b.unchanged
        sum.rejected += b.rejected
        return sum
    }
}
