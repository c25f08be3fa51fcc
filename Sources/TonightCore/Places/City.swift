import Foundation

/// A populated place from GeoNames (https://www.geonames.org/, CC BY 4.0).
///
/// Cities are told apart by ``key``, `name$regionName$countryCode` (`Halifax$Nova Scotia$CA`), and regions by
/// ``regionKey``, `regionName$countryCode` (`Nova Scotia$CA`). These keep the shape of the seed data's
/// `city$province$country` and `province$country` keys, with GeoNames' own spellings: the city's `name`, the
/// region's name from GeoNames' admin1 table (the admin1 code when that table does not know the region, empty
/// when GeoNames gives no region) and the ISO country code.
public struct City: Sendable, Hashable {
    /// The GeoNames id, stable across GeoNames releases.
    public var geonameId: Int
    /// The name in local usage, as GeoNames spells it (`Tórshavn`).
    public var name: String
    /// The name in plain ASCII (`Torshavn`).
    public var asciiName: String
    /// Other names and spellings (`Londres`, `Лондон`, `ロンドン`).
    public var alternateNames: [String]
    /// ISO 3166-1 alpha-2, upper case.
    public var countryCode: String
    /// GeoNames' code of the first-level division within the country (`07` for Nova Scotia, `CA` for
    /// California); empty when GeoNames gives none.
    public var admin1Code: String
    /// The first-level division's name; the admin1 code while it is not known.
    public var regionName: String
    /// Where the city is.
    public var location: GeoPoint
    /// Inhabitants; 0 when unknown.
    public var population: Int
    /// IANA time zone id (`America/Halifax`).
    public var timeZone: String

    /// A city; `asciiName` defaults to `name` and `regionName` to `admin1Code`.
    public init(
        geonameId: Int, name: String, asciiName: String? = nil, alternateNames: [String] = [],
        countryCode: String, admin1Code: String = "", regionName: String? = nil, location: GeoPoint,
        population: Int = 0, timeZone: String
    ) {
        self.geonameId = geonameId
        self.name = name
        self.asciiName = asciiName ?? name
        self.alternateNames = alternateNames
        self.countryCode = countryCode
        self.admin1Code = admin1Code
        self.regionName = regionName ?? admin1Code
        self.location = location
        self.population = population
        self.timeZone = timeZone
    }

    /// `name$regionName$countryCode`, e.g. `Halifax$Nova Scotia$CA`.
    public var key: String { "\(name)$\(regionName)$\(countryCode)" }

    /// `regionName$countryCode`, e.g. `Nova Scotia$CA`.
    public var regionKey: String { "\(regionName)$\(countryCode)" }
}

extension City {
    /// A city from the text of its fields, or why they do not make one. Shared by ``GeoNamesParser`` and the
    /// gazetteer's resource reader so both check the same things.
    static func parsing(
        id: String, name: String, asciiName: String, alternateNames: String, latitude: String, longitude: String,
        countryCode: String, admin1Code: String, population: String, timeZone: String
    ) -> Result<City, ParseFailure> {
        guard let geonameId = Int(id), geonameId > 0 else { return .failure("bad geonameid '\(id)'") }
        let name = trimmed(name)
        guard !name.isEmpty else { return .failure("empty name") }
        guard let lat = Double(latitude), let lon = Double(longitude),
            GeoPoint.issues(latitude: lat, longitude: lon).isEmpty
        else { return .failure("bad coordinates '\(latitude)', '\(longitude)'") }
        guard countryCode.utf8.count == 2, countryCode.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return .failure("bad country code '\(countryCode)'")
        }
        let people: Int
        if population.isEmpty {
            people = 0
        } else if let count = Int(population), count >= 0 {
            people = count
        } else {
            return .failure("bad population '\(population)'")
        }
        let zone = trimmed(timeZone)
        guard !zone.isEmpty else { return .failure("empty timezone") }
        let ascii = trimmed(asciiName)
        let alternates = alternateNames.split(separator: ",").map { trimmed($0) }.filter { !$0.isEmpty }
        return .success(
            City(
                geonameId: geonameId, name: name, asciiName: ascii.isEmpty ? name : ascii,
                alternateNames: alternates, countryCode: countryCode.uppercased(), admin1Code: admin1Code,
                location: GeoPoint(latitude: lat, longitude: lon), population: people, timeZone: zone))
    }

    private static func trimmed(_ text: some StringProtocol) -> String {
        guard let first = text.first, let last = text.last, first.isWhitespace || last.isWhitespace else {
            return String(text)
        }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// Why a line did not make a city.
    struct ParseFailure: Error, ExpressibleByStringInterpolation {
        let reason: String
        init(stringLiteral value: String) { reason = value }
        init(stringInterpolation: DefaultStringInterpolation) {
            reason = String(stringInterpolation: stringInterpolation)
        }
    }
}
