import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct GeoHandlers: Sendable {
    let geo: GeoService

    func geocode(_ input: Operations.Geocode.Input) async throws -> Operations.Geocode.Output {
        let limit = try Paging.limit(input.query.limit)
        let query = input.query.q.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !query.isEmpty, TextRules.isClean(query) else {
            throw APIError.validation([.init(field: "q", code: "invalid", message: "Name a place to look for.")])
        }
        var country: String?
        if let code = input.query.country {
            guard code.count == 2, code.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                throw APIError.validation([
                    .init(field: "country", code: "invalid", message: "Use an ISO 3166-1 alpha-2 country code.")
                ])
            }
            country = code.uppercased()
        }
        let cities = geo.gazetteer.search(query, country: country, limit: limit)
        return .ok(.init(body: .json(.init(items: cities.map { .init($0) }))))
    }

    func reverseGeocode(_ input: Operations.ReverseGeocode.Input) async throws -> Operations.ReverseGeocode.Output {
        let issues = GeoPoint.issues(latitude: input.query.lat, longitude: input.query.lon)
        guard issues.isEmpty else { throw APIError.validation(issues) }
        let point = GeoPoint(latitude: input.query.lat, longitude: input.query.lon)
        // The same city every venue and post at this point is filed under (see GeoService.city(of:)).
        guard let city = geo.city(of: point) else {
            throw APIError(status: 503, code: .gazetteerEmpty, detail: "No cities are known.")
        }
        var answer = Components.Schemas.City(city)
        answer.distanceMeters = (point.distance(to: city.location) * 10).rounded() / 10
        return .ok(.init(body: .json(answer)))
    }
}

extension Components.Schemas.City {
    init(_ city: City) {
        self.init(
            geonameId: city.geonameId, name: city.name, countryCode: city.countryCode, region: city.regionName,
            key: city.key, regionKey: city.regionKey, timeZone: city.timeZone,
            location: .init(lat: city.location.latitude, lon: city.location.longitude), population: city.population)
    }
}
