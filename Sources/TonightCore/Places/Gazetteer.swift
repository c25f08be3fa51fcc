import Foundation

/// The cities Tonight knows offline, searchable by name (as the user types) and by position (nearest city).
///
/// Built once from the bundled GeoNames extract (`cities.tsv`, `admin1.tsv`, made by `scripts/build-gazetteer`)
/// and immutable afterwards, so one value can be shared by every request. Name lookups fold text with
/// ``SearchText/fold(_:)`` and binary-search a sorted table of every folded name; position lookups search a
/// 1°×1° grid outwards from the point.
public struct Gazetteer: Sendable {
    /// Every city, most populous first (equal populations by geonameId).
    public let cities: [City]
    /// Region name and usual time zone by `CC.admin1` code.
    private let regions: [String: Region]
    private let positions: [Int: Int]
    private let names: NameIndex
    private let grid: CityGrid

    private struct Region: Sendable, Hashable {
        var name: String
        var timeZone: String
    }

    /// The gazetteer of the bundled resource files, given their bytes.
    ///
    /// `admin1` has lines `country⇥admin1 code⇥name⇥time zone`; `cities` has lines `geonameid⇥name⇥ascii name⇥
    /// alternate names (comma-separated)⇥latitude⇥longitude⇥country⇥admin1 code⇥population⇥time zone`, where an
    /// empty ascii name means the name and an empty time zone the region's. Lines starting with `#` are comments.
    /// Throws ``ImportError/malformed(position:reason:)`` for the first line that does not fit.
    public init(cities: [UInt8], admin1: [UInt8]) throws {
        var regions: [String: Region] = [:]
        try GeoNamesParser.LineReader(bytes: admin1, maximumLength: .max).forEachLine { number, line in
            let fields = GeoNamesParser.Fields(line ?? [])
            guard fields.count == 4 else {
                let reason = "expected 4 columns, found \(fields.count)"
                throw ImportError.malformed(position: "admin1.tsv line \(number)", reason: reason)
            }
            regions[Self.regionCode(fields[0], fields[1])] = Region(name: fields[2], timeZone: fields[3])
        }
        var list: [City] = []
        try GeoNamesParser.LineReader(bytes: cities, maximumLength: .max).forEachLine { number, line in
            let fields = GeoNamesParser.Fields(line ?? [])
            let position = "cities.tsv line \(number)"
            guard fields.count == 10 else {
                throw ImportError.malformed(position: position, reason: "expected 10 columns, found \(fields.count)")
            }
            let zone = fields[9].isEmpty ? regions[Self.regionCode(fields[6], fields[7])]?.timeZone ?? "" : fields[9]
            let parsed = City.parsing(
                id: fields[0], name: fields[1], asciiName: fields[2], alternateNames: fields[3], latitude: fields[4],
                longitude: fields[5], countryCode: fields[6], admin1Code: fields[7], population: fields[8],
                timeZone: zone)
            switch parsed {
            case .success(let city): list.append(city)
            case .failure(let failure): throw ImportError.malformed(position: position, reason: failure.reason)
            }
        }
        self.init(resolving: list, regions: regions)
    }

    /// The gazetteer of the bundled resource files, given their text.
    public init(cities: String, admin1: String) throws {
        try self.init(cities: Array(cities.utf8), admin1: Array(admin1.utf8))
    }

    /// A gazetteer of `cities` alone, without region names; of two cities with one geonameId the last counts.
    public init(_ cities: [City]) {
        self.init(resolving: cities, regions: [:])
    }

    /// This gazetteer with `extra` cities added; one with the geonameId of a city already here replaces it.
    /// A city whose `regionName` is empty or its admin1 code gets the region's name when this gazetteer knows it.
    public func merging(_ extra: [City]) -> Gazetteer {
        Gazetteer(resolving: cities + extra, regions: regions)
    }

    private init(resolving input: [City], regions: [String: Region]) {
        var byId: [Int: City] = [:]
        byId.reserveCapacity(input.count)
        for var city in input {
            if city.regionName.isEmpty || city.regionName == city.admin1Code,
                let name = regions[Self.regionCode(city.countryCode, city.admin1Code)]?.name, !name.isEmpty
            {
                city.regionName = name
            }
            byId[city.geonameId] = city
        }
        let cities = byId.values.sorted {
            $0.population != $1.population ? $0.population > $1.population : $0.geonameId < $1.geonameId
        }
        self.cities = cities
        self.regions = regions
        positions = Dictionary(uniqueKeysWithValues: cities.enumerated().map { ($1.geonameId, $0) })
        names = NameIndex(cities)
        grid = CityGrid(cities.map(\.location))
    }

    /// How many cities there are.
    public var count: Int { cities.count }

    /// The city with this GeoNames id.
    public func city(geonameId: Int) -> City? {
        positions[geonameId].map { cities[$0] }
    }

    /// GeoNames' name of a country's first-level division (`CA`, `07` → `Nova Scotia`), nil when unknown.
    public func regionName(countryCode: String, admin1Code: String) -> String? {
        guard let name = regions[Self.regionCode(countryCode, admin1Code)]?.name, !name.isEmpty else { return nil }
        return name
    }

    /// Cities whose name, ascii name or an alternate name matches `query` after ``SearchText/fold(_:)``: first
    /// those with a name equal to it, then those with a name that starts with it (as the user types), each
    /// group most populous first. `country` (ISO 3166-1 alpha-2) keeps only that country's cities.
    public func search(_ query: String, country: String? = nil, limit: Int = 10) -> [City] {
        let key = Self.fold(query)
        let limit = min(limit, cities.count)
        guard limit > 0, !key.isEmpty else { return [] }
        let country = country?.uppercased()
        let found = names.matches(Array(key.utf8), limit: limit) { country == nil || cities[$0].countryCode == country }
        return found.map { cities[$0] }
    }

    /// The city nearest to `point` by great-circle distance (``GeoPoint/distance(to:)``, metres), however far;
    /// nil only for an empty gazetteer or a point with a non-finite coordinate. Of equally near cities the most
    /// populous wins.
    /// Every city within `radius` metres of `point`, nearest first.
    public func cities(within radius: Double, of point: GeoPoint) -> [(city: City, distance: Double)] {
        grid.within(radius, of: point).map { (cities[$0.index], $0.distance) }
    }

    public func nearest(to point: GeoPoint) -> (city: City, distance: Double)? {
        grid.nearest(to: point).map { (cities[$0.index], $0.distance) }
    }

    private static func regionCode(_ country: some StringProtocol, _ admin1: some StringProtocol) -> String {
        "\(country.uppercased()).\(admin1)"
    }

    /// ``SearchText/fold(_:)``, with a quick path for ASCII text (most names), which it folds the same way:
    /// letters lower-cased, digits kept, anything else a word break.
    static func fold(_ text: String) -> String {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return SearchText.fold(text) }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"):
                if pendingSpace, !out.isEmpty { out.append(UInt8(ascii: " ")) }
                pendingSpace = false
                out.append(byte | (byte >= UInt8(ascii: "A") ? 0x20 : 0))
            default:
                pendingSpace = true
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Every folded name of every city, sorted bytewise, so that the names equal to or starting with a key form one
/// run found by two binary searches.
private struct NameIndex: Sendable {
    /// The folded names, one after another.
    private let text: [UInt8]
    /// Sorted by name, then by city (so by rank, as cities are most populous first).
    private let entries: [Entry]

    private struct Entry: Sendable {
        var offset: UInt32
        var length: UInt32
        var city: UInt32
    }

    init(_ cities: [City]) {
        var text: [UInt8] = []
        var entries: [Entry] = []
        var seen = Set<String>()
        for (index, city) in cities.enumerated() {
            seen.removeAll(keepingCapacity: true)
            for name in [city.name, city.asciiName] + city.alternateNames {
                let key = Gazetteer.fold(name)
                guard !key.isEmpty, seen.insert(key).inserted else { continue }
                entries.append(Entry(offset: UInt32(text.count), length: UInt32(key.utf8.count), city: UInt32(index)))
                text.append(contentsOf: key.utf8)
            }
        }
        text.withUnsafeBufferPointer { text in
            entries.sort { a, b in
                let order = Self.compare(text, a, UnsafeBufferPointer(rebasing: text[Self.range(b)]))
                return order != 0 ? order < 0 : a.city < b.city
            }
        }
        self.text = text
        self.entries = entries
    }

    /// Up to `limit` city indices: exact matches, then prefix matches, each in rank order, each city once.
    func matches(_ key: [UInt8], limit: Int, where include: (Int) -> Bool) -> [Int] {
        text.withUnsafeBufferPointer { text in
            key.withUnsafeBufferPointer { key in
                let start = lowerBound(key, in: text)
                let end = lowerBound(key, in: text, beyondPrefix: true)
                var exact: [Int] = []
                var index = start
                // Equal names sort before longer ones, and by city within.
                while index < end, entries[index].length == key.count {
                    let city = Int(entries[index].city)
                    if exact.count < limit, include(city) { exact.append(city) }
                    index += 1
                }
                let wanted = limit - exact.count
                guard wanted > 0 else { return exact }
                // The `wanted` best-ranked cities of the run, kept sorted; most entries fail the first test.
                var best: [Int] = []
                best.reserveCapacity(wanted + 1)
                while index < end {
                    let city = Int(entries[index].city)
                    index += 1
                    if best.count == wanted, city >= best[wanted - 1] { continue }
                    let slot = best.firstIndex { $0 >= city } ?? best.count
                    if slot < best.count, best[slot] == city { continue }
                    guard !exact.contains(city), include(city) else { continue }
                    best.insert(city, at: slot)
                    if best.count > wanted { best.removeLast() }
                }
                return exact + best
            }
        }
    }

    /// The first entry not below `key`, or with `beyondPrefix` the first entry that neither starts with `key`
    /// nor sorts before it (the bound of `key` followed by 0xFF, a byte UTF-8 never uses).
    private func lowerBound(
        _ key: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, beyondPrefix: Bool = false
    ) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let entry = entries[middle]
            let order = Self.compare(text, entry, key)
            let below = order < 0 || (beyondPrefix && entry.length >= key.count && startsWith(entry, key, text))
            if below { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func startsWith(
        _ entry: Entry, _ key: UnsafeBufferPointer<UInt8>, _ text: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        key.isEmpty || memcmp(text.baseAddress! + Int(entry.offset), key.baseAddress!, key.count) == 0
    }

    private static func range(_ entry: Entry) -> Range<Int> {
        Int(entry.offset)..<Int(entry.offset + entry.length)
    }

    /// Bytewise order of an entry's name against `key`: negative, zero or positive.
    private static func compare(_ text: UnsafeBufferPointer<UInt8>, _ entry: Entry, _ key: UnsafeBufferPointer<UInt8>)
        -> Int
    {
        let length = Int(entry.length)
        let common = min(length, key.count)
        if common > 0 {
            let order = memcmp(text.baseAddress! + Int(entry.offset), key.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return length - key.count
    }
}

/// City positions bucketed in 1°×1° cells of latitude and longitude, for exact nearest-city search.
///
/// The search looks at every city within a radius `r` of the point: the cells whose latitude lies within `r` of
/// the point's and whose longitude lies within `asin(sin r / cos φ)` of it, wrapping across ±180°, or every
/// longitude when `r` reaches a pole. Starting at 50 km, `r` doubles until a city turns up, then grows once more
/// to that city's distance, so that every city nearer than it has been seen. Each cell is looked at once.
private struct CityGrid: Sendable {
    private static let cellDegrees = 1.0
    private static let rows = 180
    private static let columns = 360

    private let points: [GeoPoint]
    /// `members[starts[cell]..<starts[cell + 1]]` are the cities in `cell`, in rank order.
    private let starts: [Int32]
    private let members: [Int32]

    private struct Box {
        var rows: ClosedRange<Int>
        /// Unwrapped: may run below 0 or past `columns`, never wider than `columns`.
        var columns: ClosedRange<Int>
    }

    init(_ points: [GeoPoint]) {
        self.points = points
        let cells = points.map { point in
            point.latitude.isFinite && point.longitude.isFinite
                ? Self.row(point.latitude) * Self.columns + Self.wrap(Self.column(point.longitude)) : -1
        }
        var starts = [Int32](repeating: 0, count: Self.rows * Self.columns + 1)
        for cell in cells where cell >= 0 { starts[cell + 1] += 1 }
        for cell in 0..<Self.rows * Self.columns { starts[cell + 1] += starts[cell] }
        var members = [Int32](repeating: 0, count: Int(starts.last!))
        var next = starts
        for (city, cell) in cells.enumerated() where cell >= 0 {
            members[Int(next[cell])] = Int32(city)
            next[cell] += 1
        }
        self.starts = starts
        self.members = members
    }

    func nearest(to point: GeoPoint) -> (index: Int, distance: Double)? {
        guard !members.isEmpty, point.latitude.isFinite, point.longitude.isFinite else { return nil }
        var best = -1
        var bestDistance = Double.infinity
        var seen: Box?
        var radius = 50_000.0
        while true {
            // A metre and a hair more, so that rounding never leaves out a city at the edge.
            let box = covering(point, radius: radius * (1 + 1e-9) + 1, around: seen)
            for row in box.rows {
                if let seen, seen.rows.contains(row) {
                    visit(row, box.columns.lowerBound, seen.columns.lowerBound - 1)
                    visit(row, seen.columns.upperBound + 1, box.columns.upperBound)
                } else {
                    visit(row, box.columns.lowerBound, box.columns.upperBound)
                }
            }
            seen = box
            if bestDistance <= radius || (box.rows.count == Self.rows && box.columns.count == Self.columns) {
                break
            }
            radius = best >= 0 ? bestDistance : radius * 2
        }
        return best >= 0 ? (best, bestDistance) : nil

        func visit(_ row: Int, _ first: Int, _ last: Int) {
            guard first <= last else { return }
            for column in first...last {
                let cell = row * Self.columns + Self.wrap(column)
                for slot in Int(starts[cell])..<Int(starts[cell + 1]) {
                    let city = Int(members[slot])
                    let distance = point.distance(to: points[city])
                    if distance < bestDistance || (distance == bestDistance && city < best) {
                        best = city
                        bestDistance = distance
                    }
                }
            }
        }
    }

    /// Every city within `radius` metres of `point`, with its distance, nearest first.
    func within(_ radius: Double, of point: GeoPoint) -> [(index: Int, distance: Double)] {
        guard !members.isEmpty, point.latitude.isFinite, point.longitude.isFinite else { return [] }
        let box = covering(point, radius: radius * (1 + 1e-9) + 1, around: nil)
        var found: [(index: Int, distance: Double)] = []
        for row in box.rows {
            for column in box.columns {
                let cell = row * Self.columns + Self.wrap(column)
                for slot in Int(starts[cell])..<Int(starts[cell + 1]) {
                    let city = Int(members[slot])
                    let distance = point.distance(to: points[city])
                    if distance <= radius { found.append((city, distance)) }
                }
            }
        }
        return found.sorted { ($0.distance, $0.index) < ($1.distance, $1.index) }
    }

    /// The cells holding every point within `radius` metres of `point`, grown to contain `seen`.
    private func covering(_ point: GeoPoint, radius: Double, around seen: Box?) -> Box {
        let angle = radius / GeoPoint.earthRadius
        let degrees = angle * 180 / .pi
        var rows = Self.row(point.latitude - degrees)...Self.row(point.latitude + degrees)
        var first: Int
        var last: Int
        let ratio = sin(angle) / cos(point.latitude * .pi / 180)
        if point.latitude + degrees < 90, point.latitude - degrees > -90, ratio < 1 {
            let spread = asin(ratio) * 180 / .pi
            first = Self.column(point.longitude - spread)
            last = Self.column(point.longitude + spread)
        } else {  // The circle holds a pole: every longitude.
            first = Self.column(point.longitude) - Self.columns / 2
            last = first + Self.columns
        }
        if let seen {
            rows = min(rows.lowerBound, seen.rows.lowerBound)...max(rows.upperBound, seen.rows.upperBound)
            first = min(first, seen.columns.lowerBound)
            last = max(last, seen.columns.upperBound)
            if last - first + 1 > Self.columns {  // Every column, keeping those already seen.
                first = max(first, seen.columns.upperBound - Self.columns + 1)
            }
        }
        last = min(last, first + Self.columns - 1)
        return Box(rows: rows, columns: first...last)
    }

    private static func row(_ latitude: Double) -> Int {
        min(max(Int((max(-90, min(90, latitude)) + 90) / cellDegrees), 0), rows - 1)
    }

    /// Unwrapped column: longitudes past ±180° give columns past the grid's edges.
    private static func column(_ longitude: Double) -> Int {
        Int(((longitude + 180) / cellDegrees).rounded(.down))
    }

    private static func wrap(_ column: Int) -> Int {
        (column % columns + columns) % columns
    }
}
