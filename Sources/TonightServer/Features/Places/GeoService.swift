import Foundation
import Logging
import TonightCore

/// Where a point is: the nearest gazetteer city, its keys and time zone.
struct Locality: Sendable, Equatable {
    var city: String
    var region: String
    var country: String
    var cityKey: String
    var regionKey: String
    var timeZone: String
}

/// The geo layer: the bundled GeoNames gazetteer plus cities imported into the database.
struct GeoService: Sendable {
    private let ready: Awaited<Gazetteer>

    /// The gazetteer; the first callers wait while it is still being built.
    var gazetteer: Gazetteer { ready.value }

    /// The gazetteer shipped with Tonight, read once per process.
    static let bundled: Gazetteer = {
        guard let cities = Bundle.module.url(forResource: "cities", withExtension: "tsv", subdirectory: "gazetteer"),
            let admin1 = Bundle.module.url(forResource: "admin1", withExtension: "tsv", subdirectory: "gazetteer"),
            let citiesData = try? Data(contentsOf: cities), let admin1Data = try? Data(contentsOf: admin1),
            let gazetteer = try? Gazetteer(cities: [UInt8](citiesData), admin1: [UInt8](admin1Data))
        else { fatalError("The bundled gazetteer resource is missing or damaged.") }
        return gazetteer
    }()

    /// The bundled gazetteer merged with the cities of `tonight import geonames`. It is built on
    /// a thread of its own (a third of a second of one core) when first needed, or from
    /// ``warm()``: the server warms it as it starts; an import warms it only when it will resolve
    /// venues (a first import), so a refresh that changes no venue does not build it at all.
    static func load(cities: CityRepository, logger: Logger) async throws -> GeoService {
        let extra = try await cities.all()
        if !extra.isEmpty { logger.info("gazetteer extended", metadata: ["cities": "\(extra.count)"]) }
        return GeoService(ready: Awaited { extra.isEmpty ? bundled : bundled.merging(extra) })
    }

    /// Starts building the gazetteer on its own thread, if it has not started yet.
    func warm() { ready.start() }

    /// The city a point belongs to: the nearest gazetteer city, unless a city at least ten times as
    /// populous is within 8 km more than that. GeoNames lists city sections ("Downtown Halifax",
    /// "Halifax South End") as cities of their own; a venue in one belongs to the city's hub.
    func city(of point: GeoPoint) -> City? {
        guard let (nearest, distance) = gazetteer.nearest(to: point) else { return nil }
        let hub = gazetteer.cities(within: distance + 8000, of: point)
            .first { $0.city.population >= 10 * max(1, nearest.population) }
        return hub?.city ?? nearest
    }

    /// The locality of `point` (nil only if the gazetteer were empty).
    func locality(of point: GeoPoint) -> Locality? {
        guard let city = city(of: point) else { return nil }
        return Locality(
            city: city.name, region: city.regionName, country: city.countryCode, cityKey: city.key,
            regionKey: city.regionKey, timeZone: city.timeZone)
    }

    /// The city a user's free-text home city names: a city key (`city$region$country`) or a
    /// name, the most populous match winning.
    func homeCity(_ text: String?) -> City? {
        guard let text, !text.isEmpty else { return nil }
        let parts = text.split(separator: "$").map(String.init)
        let candidates = gazetteer.search(parts[0], country: parts.count == 3 ? parts[2] : nil, limit: 10)
        if parts.count == 3, let exact = candidates.first(where: { $0.key == text }) { return exact }
        return candidates.first
    }
}

/// A value made on a thread of its own, started by ``start()`` or by the first read; reading it
/// waits until it is there.
final class Awaited<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var made: Value?
    /// The thread that makes the value, until it is started.
    private var maker: Thread?

    init(_ make: @escaping @Sendable () -> Value) {
        let thread = Thread { [self] in
            let value = make()
            condition.lock()
            made = value
            condition.broadcast()
            condition.unlock()
        }
        thread.stackSize = 4 << 20
        maker = thread
    }

    /// Starts making the value (again is harmless).
    func start() {
        condition.lock()
        defer { condition.unlock() }
        startLocked()
    }

    private func startLocked() {
        maker?.start()
        maker = nil
    }

    var value: Value {
        condition.lock()
        defer { condition.unlock() }
        startLocked()
        while made == nil { condition.wait() }
        return made!
    }
}
