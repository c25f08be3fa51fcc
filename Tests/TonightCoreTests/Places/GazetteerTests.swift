import Foundation
import Testing

@testable import TonightCore

/// A point spread evenly over the sphere.
private func randomPoint(_ rng: inout SplitMix64) -> GeoPoint {
    GeoPoint(
        latitude: asin(Double.random(in: -1...1, using: &rng)) * 180 / .pi,
        longitude: Double.random(in: -180...180, using: &rng))
}

private func city(
    _ id: Int, _ name: String, _ lat: Double, _ lon: Double, country: String = "XX", admin1: String = "01",
    population: Int = 1000, alternates: [String] = []
) -> City {
    City(
        geonameId: id, name: name, alternateNames: alternates, countryCode: country, admin1Code: admin1,
        location: GeoPoint(latitude: lat, longitude: lon), population: population, timeZone: "Etc/UTC")
}

/// The nearest city by trying them all, ties to the most populous, as ``Gazetteer/nearest(to:)`` promises.
private func bruteForce(_ gazetteer: Gazetteer, _ point: GeoPoint) -> (city: City, distance: Double)? {
    var best: (city: City, distance: Double)?
    for city in gazetteer.cities {
        let distance = point.distance(to: city.location)
        if best == nil || distance < best!.distance { best = (city, distance) }
    }
    return best
}

private func expectNearestMatchesBruteForce(_ gazetteer: Gazetteer, _ points: [GeoPoint]) {
    for point in points {
        let found = gazetteer.nearest(to: point)
        let expected = bruteForce(gazetteer, point)
        #expect(found?.distance == expected?.distance, "\(point)")
        #expect(found?.city.geonameId == expected?.city.geonameId, "\(point)")
    }
}

private let sampleAdmin1 = """
    # country\tadmin1\tname\ttimezone
    CA\t07\tNova Scotia\tAmerica/Halifax
    GB\tENG\tEngland\tEurope/London
    DE\t02\tBavaria\tEurope/Berlin
    US\tMO\tMissouri\tAmerica/Chicago
    US\tMA\tMassachusetts\tAmerica/New_York
    """

private let sampleCities = """
    # geonameid\tname\tasciiname\talternatenames\tlatitude\tlongitude\tcountry\tadmin1\tpopulation\ttimezone
    6324729\tHalifax\t\tHalifaks,Галифакс\t44.64269\t-63.57688\tCA\t07\t471559\t
    2647632\tHalifax\t\t\t53.71667\t-1.85\tGB\tENG\t82624\t
    5970000\tHalifax West End\t\t\t44.65\t-63.6\tCA\t07\t22664\tAmerica/Halifax
    2867714\tMunich\t\tMünchen,Monaco di Baviera,Мюнхен\t48.13743\t11.57549\tDE\t02\t1260391\t
    4409896\tSpringfield\t\t\t37.21533\t-93.29824\tUS\tMO\t169176\t
    4951788\tSpringfield\t\t\t42.10148\t-72.58981\tUS\tMA\t155929\t
    2618425\tKøbenhavn\tKobenhavn\tCopenhagen,Kopenhagen\t55.67594\t12.56553\tDK\t17\t1153615\tEurope/Copenhagen
    """

@Suite("Gazetteer")
struct GazetteerTests {
    private let sample: Gazetteer

    init() throws {
        sample = try Gazetteer(cities: sampleCities, admin1: sampleAdmin1)
    }

    @Test("reads the resource layout: region names, region time zones, ascii names, keys")
    func resourceLayout() throws {
        #expect(sample.count == 7)
        let halifax = try #require(sample.city(geonameId: 6_324_729))
        #expect(halifax.key == "Halifax$Nova Scotia$CA")
        #expect(halifax.regionKey == "Nova Scotia$CA")
        #expect(halifax.asciiName == "Halifax")
        #expect(halifax.alternateNames == ["Halifaks", "Галифакс"])
        #expect(halifax.timeZone == "America/Halifax")
        #expect(halifax.location == GeoPoint(latitude: 44.64269, longitude: -63.57688))
        #expect(sample.city(geonameId: 2_647_632)?.key == "Halifax$England$GB")
        let copenhagen = try #require(sample.city(geonameId: 2_618_425))
        #expect(copenhagen.asciiName == "Kobenhavn")
        #expect(copenhagen.regionName == "17", "unknown region: the admin1 code")
        #expect(copenhagen.key == "København$17$DK")
        #expect(sample.regionName(countryCode: "ca", admin1Code: "07") == "Nova Scotia")
        #expect(sample.regionName(countryCode: "DK", admin1Code: "17") == nil)
        #expect(sample.cities.map(\.population) == sample.cities.map(\.population).sorted(by: >))
    }

    @Test("malformed resource lines throw with their file and line")
    func malformedResource() {
        #expect(throws: ImportError.malformed(position: "cities.tsv line 2", reason: "expected 10 columns, found 3")) {
            try Gazetteer(cities: "# header\n1\tA\tB\n", admin1: "")
        }
        #expect(throws: ImportError.malformed(position: "cities.tsv line 1", reason: "empty timezone")) {
            try Gazetteer(cities: "1\tA\t\t\t1\t2\tXX\t01\t5\t\n", admin1: "")
        }
        #expect(throws: ImportError.malformed(position: "admin1.tsv line 1", reason: "expected 4 columns, found 2")) {
            try Gazetteer(cities: "", admin1: "CA\t07\n")
        }
    }

    @Test("search: exact matches first, then prefixes, each most populous first")
    func searchOrder() {
        #expect(sample.search("halifax").map(\.geonameId) == [6_324_729, 2_647_632, 5_970_000])
        #expect(sample.search("Hali", limit: 2).map(\.geonameId) == [6_324_729, 2_647_632])
        // "Halifax West End" only starts with "halifax w".
        #expect(sample.search("halifax w").map(\.geonameId) == [5_970_000])
        #expect(sample.search("springfield").map(\.key) == ["Springfield$Missouri$US", "Springfield$Massachusetts$US"])
        #expect(sample.search("springfield", country: "us", limit: 1).map(\.key) == ["Springfield$Missouri$US"])
        #expect(sample.search("halifax", country: "GB").map(\.geonameId) == [2_647_632])
        #expect(sample.search("halifax", country: "FR").isEmpty)
        #expect(sample.search("").isEmpty)
        #expect(sample.search("  ,. ").isEmpty)
        #expect(sample.search("halifax", limit: 0).isEmpty)
        #expect(sample.search("halifax", limit: .max).count == 3)
        #expect(sample.search("zzz").isEmpty)
    }

    @Test("search is case-, diacritic- and punctuation-insensitive and finds alternate names")
    func searchFolding() {
        #expect(sample.search("MÜNCHEN").map(\.name) == ["Munich"])
        #expect(sample.search("munchen").map(\.name) == ["Munich"])
        #expect(sample.search("мюнх").map(\.name) == ["Munich"])
        #expect(sample.search("monaco-di").map(\.name) == ["Munich"])
        #expect(sample.search("kobenhavn").map(\.name) == ["København"])
        #expect(sample.search("københ").map(\.name) == ["København"])
        #expect(sample.search("Copenhagen").map(\.name) == ["København"])
        // A city whose names share a prefix appears once.
        #expect(sample.search("k").map(\.name) == ["København"])
        #expect(sample.search("m").map(\.name) == ["Munich"])
    }

    @Test("an exact alternate name beats a more populous prefix match")
    func exactBeforePrefix() {
        let gazetteer = Gazetteer([
            city(1, "Parisville", 0, 0, population: 9_000_000),
            city(2, "Smalltown", 1, 1, population: 10, alternates: ["Paris"]),
            city(3, "Paris", 2, 2, population: 100),
        ])
        #expect(gazetteer.search("paris").map(\.geonameId) == [3, 2, 1])
        #expect(gazetteer.search("pari").map(\.geonameId) == [1, 3, 2])
    }

    @Test("merging: same geonameId replaces, new ids are added, regions resolved")
    func merging() throws {
        let moved = City(
            geonameId: 6_324_729, name: "Halifax", countryCode: "CA", admin1Code: "07",
            location: GeoPoint(latitude: 44.6, longitude: -63.5), population: 500_000, timeZone: "America/Halifax")
        let added = City(
            geonameId: 42, name: "Ingolstadt", countryCode: "DE", admin1Code: "02",
            location: GeoPoint(latitude: 48.76, longitude: 11.42), population: 138_016, timeZone: "Europe/Berlin")
        let named = City(
            geonameId: 43, name: "Own", countryCode: "DE", admin1Code: "02", regionName: "Own Region",
            location: GeoPoint(latitude: 1, longitude: 1), timeZone: "Europe/Berlin")
        let merged = sample.merging([moved, added, named])
        #expect(merged.count == sample.count + 2)
        #expect(merged.city(geonameId: 6_324_729)?.location.latitude == 44.6)
        #expect(merged.city(geonameId: 6_324_729)?.alternateNames == [])
        #expect(merged.city(geonameId: 42)?.key == "Ingolstadt$Bavaria$DE")
        #expect(merged.city(geonameId: 43)?.regionName == "Own Region")
        #expect(merged.search("ingol").map(\.geonameId) == [42])
        #expect(merged.search("galifaks").isEmpty, "the replaced city's names are gone")
        #expect(merged.nearest(to: GeoPoint(latitude: 48.7, longitude: 11.4))?.city.geonameId == 42)
        #expect(sample.city(geonameId: 42) == nil, "the original is unchanged")
    }

    @Test("the ASCII quick path folds like SearchText.fold")
    func asciiFold() {
        for text in ["Saint-Jean-sur-Richelieu", "  St. John's ", "A--B", "O'Fallon", "x", "", "!!", "ABC 123_def"] {
            #expect(Gazetteer.fold(text) == SearchText.fold(text), "\(text)")
        }
        var rng = SplitMix64(seed: 7)
        for _ in 0..<2000 {
            let text = String(
                decoding: (0..<Int.random(in: 0...12, using: &rng)).map { _ in UInt8.random(in: 0...127, using: &rng) },
                as: UTF8.self)
            #expect(Gazetteer.fold(text) == SearchText.fold(text), "\(Array(text.utf8))")
        }
    }

    @Test("nearest: exact, across the antimeridian, at the poles, far out at sea")
    func nearestEdges() throws {
        let sparse = Gazetteer([
            city(1, "East", 0, 179.9),
            city(2, "West", 10, -179.95),
            city(3, "North", 89.5, 100),
            city(4, "South", -88, -45),
        ])
        #expect(sparse.nearest(to: GeoPoint(latitude: 0, longitude: -179.9))?.city.name == "East")
        #expect(sparse.nearest(to: GeoPoint(latitude: 9, longitude: 180))?.city.name == "West")
        #expect(sparse.nearest(to: GeoPoint(latitude: 9, longitude: -180))?.city.name == "West")
        #expect(sparse.nearest(to: GeoPoint(latitude: 90, longitude: 0))?.city.name == "North")
        #expect(sparse.nearest(to: GeoPoint(latitude: 89.9, longitude: -80))?.city.name == "North")
        #expect(sparse.nearest(to: GeoPoint(latitude: -90, longitude: 180))?.city.name == "South")
        #expect(sparse.nearest(to: GeoPoint(latitude: -60, longitude: 135))?.city.name == "South")
        let atSea = try #require(sparse.nearest(to: GeoPoint(latitude: 30, longitude: 10)))
        let expected = try #require(bruteForce(sparse, GeoPoint(latitude: 30, longitude: 10)))
        #expect(atSea.city == expected.city && atSea.distance == expected.distance)
        let here = try #require(sparse.nearest(to: GeoPoint(latitude: 0, longitude: 179.9)))
        #expect(here.city.name == "East" && here.distance == 0)

        let lonely = Gazetteer([city(9, "Antipode", -10, -170)])
        #expect(lonely.nearest(to: GeoPoint(latitude: 10, longitude: 10))?.city.name == "Antipode")
        #expect(Gazetteer([]).nearest(to: GeoPoint(latitude: 0, longitude: 0)) == nil)
        #expect(sparse.nearest(to: GeoPoint(latitude: .nan, longitude: 0)) == nil)
    }

    @Test("nearest equals brute force: random cities, clustered cities, edge points")
    func nearestRandom() {
        var rng = SplitMix64(seed: 2026)
        let scattered = Gazetteer(
            (1...800).map { id in
                let point = randomPoint(&rng)
                return city(id, "C\(id)", point.latitude, point.longitude)
            })
        expectNearestMatchesBruteForce(scattered, (0..<1000).map { _ in randomPoint(&rng) })

        // Dense clusters with empty oceans between them, and points on cell edges and the poles.
        let clustered = Gazetteer(
            (1...800).map { id in
                let centre = [(48.0, 2.0), (-33.9, 151.2), (64.1, -21.9), (-54.8, -68.3), (71.0, 179.5)][id % 5]
                return city(
                    id, "K\(id)", max(-90, min(90, centre.0 + Double.random(in: -1...1, using: &rng))),
                    centre.1 + Double.random(in: -0.49...0.49, using: &rng), population: id % 7)
            })
        var edges = (0..<500).map { _ in randomPoint(&rng) }
        for lat in stride(from: -90.0, through: 90, by: 15) {
            for lon in [-180.0, -179.5, -90, 0, 0.5, 90, 179.999, 180] {
                edges.append(GeoPoint(latitude: lat, longitude: lon))
            }
        }
        expectNearestMatchesBruteForce(clustered, edges)
        expectNearestMatchesBruteForce(scattered, edges)
    }
}

/// The bundled resource, read from the source tree (the server target ships it with `Bundle.module`).
@Suite("Bundled gazetteer")
struct BundledGazetteerTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/TonightServer/Resources/gazetteer")
    static let present = FileManager.default.fileExists(atPath: directory.appendingPathComponent("cities.tsv").path)

    /// Loaded once for both tests (about 2 s in a debug build).
    static let loaded = Result {
        let cities = try Data(contentsOf: directory.appendingPathComponent("cities.tsv"))
        let admin1 = try Data(contentsOf: directory.appendingPathComponent("admin1.tsv"))
        return try Gazetteer(cities: [UInt8](cities), admin1: [UInt8](admin1))
    }

    @Test("loads every city; names, regions and searches look right", .enabled(if: present))
    func bundled() throws {
        let gazetteer = try Self.loaded.get()
        #expect(gazetteer.count == 34_006)
        #expect(gazetteer.search("halifax").first?.key == "Halifax$Nova Scotia$CA")
        #expect(gazetteer.search("Москва").first?.key == "Moscow$Moscow$RU")
        #expect(gazetteer.search("東京").first?.name == "Tokyo")
        #expect(gazetteer.search("münchen").first?.key == "Munich$Bavaria$DE")
        #expect(gazetteer.search("sao paulo").first?.key == "São Paulo$São Paulo$BR")
        let springfields = gazetteer.search("springfield", country: "US")
        #expect(springfields.count >= 3 && springfields.allSatisfy { $0.countryCode == "US" })
        #expect(gazetteer.search("lond").first?.name == "London")
        let named = gazetteer.cities.filter { $0.regionName != $0.admin1Code }.count
        #expect(named > 33_800, "almost every city has a region name")
        #expect(gazetteer.cities.allSatisfy { !$0.timeZone.isEmpty && $0.countryCode.count == 2 })
        for city in gazetteer.cities where city.name.utf8.allSatisfy({ $0 < 0x80 }) {
            #expect(Gazetteer.fold(city.name) == SearchText.fold(city.name))
        }
    }

    @Test("nearest equals brute force on the bundled cities", .enabled(if: present))
    func bundledNearest() throws {
        let gazetteer = try Self.loaded.get()
        var rng = SplitMix64(seed: 15_000)
        var points = (0..<300).map { _ in randomPoint(&rng) }
        points += [
            GeoPoint(latitude: 90, longitude: 0), GeoPoint(latitude: -90, longitude: 0),
            GeoPoint(latitude: -48.876, longitude: -123.393),  // Point Nemo
            GeoPoint(latitude: 0, longitude: 180), GeoPoint(latitude: -20, longitude: -180),
        ]
        expectNearestMatchesBruteForce(gazetteer, points)
        let halifax = try #require(gazetteer.nearest(to: GeoPoint(latitude: 44.64269, longitude: -63.57688)))
        #expect(halifax.city.key == "Halifax$Nova Scotia$CA" && halifax.distance == 0)
    }
}
