import Foundation

/// Reads OpenStreetMap XML (`.osm`) and emits the nightlife, culture and sport places in it as
/// ``ImportRecord/venue(_:)`` records, in document order.
///
/// - Nodes and ways (children of the root `<osm>`) are read; relations and everything else are ignored.
/// - A place is an element whose tags map to a category (``category(amenity:leisure:building:)``); other
///   elements are skipped silently. A place without a `name` is rejected.
/// - Ids are `node/123` and `way/456`. A node's location is its own; a way's is the centroid of its nodes
///   (the mean of their unit vectors on the sphere, so ways across the antimeridian work), from the node
///   coordinates seen earlier in the file, which are kept (coordinates only, 8 bytes a node). A way none of
///   whose nodes is known is rejected; one with some of its nodes known uses those.
/// - `street` is `addr:housenumber addr:street` (or just the street), `city`, `state`, `postalCode` and
///   `country` come from `addr:*` (a country that is not two letters is dropped), `openingHours` is
///   `opening_hours` verbatim, `url` the first absolute http(s) URL among `website`, `contact:website` and
///   `url`, and `imageURL` the `image` tag when it is one.
/// - An unknown entity reference inside a place rejects that place.
public struct OSMParser: Sendable {
    private let source: XMLSource

    /// A parser for the `.osm` file at `path`, read `chunkSize` bytes at a time.
    public init(path: String, chunkSize: Int = XMLPullParser.defaultChunkSize) {
        source = XMLSource(path: path, chunkSize: chunkSize)
    }

    /// A parser for OSM XML held in memory.
    public init(bytes: [UInt8], chunkSize: Int = XMLPullParser.defaultChunkSize) {
        source = XMLSource(bytes: bytes, chunkSize: chunkSize)
    }

    /// Reads the whole file, calling `record` for each place and `reject` for each place that cannot be imported.
    /// - Throws: ``ImportError`` for the document as a whole, or whatever a callback throws.
    public func parse(_ record: (ImportRecord) throws -> Void, reject: (ImportReject) throws -> Void) throws {
        var reader = OSMReader(xml: try source.open())
        try reader.run(record, reject)
    }

    /// The place category slug (`PlaceCategory`) for an element's `amenity`, `leisure` and `building` tags,
    /// nil when it is not a place Tonight imports. `amenity` is looked at first, then `leisure`, then `building`.
    public static func category(amenity: String?, leisure: String?, building: String?) -> String? {
        if let amenity, let slug = amenityCategories[amenity] { return slug }
        if let leisure, let slug = leisureCategories[leisure] { return slug }
        if building == "stadium" { return "stadium" }
        return nil
    }

    private static let amenityCategories: [String: String] = [
        "bar": "bar", "pub": "pub", "biergarten": "biergarten", "nightclub": "nightclub", "stripclub": "nightclub",
        "music_venue": "concert_hall", "concert_hall": "concert_hall", "theatre": "theatre", "cinema": "cinema",
        "arts_centre": "arts_centre", "events_venue": "events_venue", "casino": "casino",
    ]

    private static let leisureCategories: [String: String] = [
        "sports_centre": "sports_centre", "sports_hall": "sports_centre", "pitch": "pitch", "stadium": "stadium",
        "park": "park", "fitness_centre": "fitness_centre", "swimming_pool": "swimming_pool", "ice_rink": "ice_rink",
        "track": "track", "dance": "club",
    ]
}

/// Node coordinates by id. Ids that come in increasing order (as OSM files are written) go into two sorted
/// arrays, 16 bytes a node; any other id (out of order, or repeated) goes into a dictionary, which wins on lookup.
struct NodeCoordinates {
    private var ids: [Int64] = []
    private var values: [UInt64] = []
    private var others: [Int64: UInt64] = [:]

    subscript(id: Int64) -> UInt64? {
        get {
            if !others.isEmpty, let value = others[id] { return value }
            var low = 0, high = ids.count
            while low < high {
                let mid = (low + high) / 2
                if ids[mid] < id { low = mid + 1 } else { high = mid }
            }
            return low < ids.count && ids[low] == id ? values[low] : nil
        }
        set {
            guard let newValue else { return }
            if let last = ids.last, id <= last {
                others[id] = newValue
            } else {
                ids.append(id)
                values.append(newValue)
            }
        }
    }
}

/// The tag keys a place is built from, matched on bytes so other tags cost no strings.
private enum OSMKey: Int, CaseIterable {
    case amenity, leisure, building, name, houseNumber, street, city, postcode, country, state, openingHours
    case website, contactWebsite, url, image

    var key: String {
        switch self {
        case .amenity: "amenity"
        case .leisure: "leisure"
        case .building: "building"
        case .name: "name"
        case .houseNumber: "addr:housenumber"
        case .street: "addr:street"
        case .city: "addr:city"
        case .postcode: "addr:postcode"
        case .country: "addr:country"
        case .state: "addr:state"
        case .openingHours: "opening_hours"
        case .website: "website"
        case .contactWebsite: "contact:website"
        case .url: "url"
        case .image: "image"
        }
    }

    static let keyBytes: [[UInt8]] = allCases.map { Array($0.key.utf8) }
}

private struct OSMReader {
    enum Kind { case node, way }

    /// The most `<nd>` references kept for one way (the OSM API allows 2,000).
    static let maxWayNodes = 100_000

    let xml: XMLPullParser
    let osm, node, way, nd, tag, id, lat, lon, ref, k, v: XMLName

    /// Node coordinates in 1e-7 degrees, latitude in the high half.
    var coordinates = NodeCoordinates()

    // The element being read.
    var kind: Kind?
    var elementId: Int64 = 0
    var elementLine = 0
    var nodeLocation: (lat: Int64, lon: Int64)?
    var tags: [String?] = Array(repeating: nil, count: OSMKey.allCases.count)
    var hasTags = false
    var refs: [Int64] = []
    var problem: String?

    init(xml: XMLPullParser) {
        self.xml = xml
        osm = xml.name("osm")
        node = xml.name("node")
        way = xml.name("way")
        nd = xml.name("nd")
        tag = xml.name("tag")
        id = xml.name("id")
        lat = xml.name("lat")
        lon = xml.name("lon")
        ref = xml.name("ref")
        k = xml.name("k")
        v = xml.name("v")
    }

    mutating func run(_ record: (ImportRecord) throws -> Void, _ reject: (ImportReject) throws -> Void) throws {
        while true {
            switch try xml.next() {
            case .startElement(let name):
                try start(name)
            case .endElement:
                if let kind, xml.depth == 1 {
                    self.kind = nil
                    try finish(kind, record, reject)
                }
            case .text:
                if kind != nil, let error = xml.referenceError { note(error) }
            case .endOfDocument:
                return
            }
        }
    }

    private mutating func note(_ reason: String) {
        if problem == nil { problem = reason }
    }

    private mutating func start(_ name: XMLName) throws {
        switch xml.depth {
        case 1:
            guard name == osm else {
                throw ImportError.malformed(
                    position: xml.position, reason: "the root element is <\(xml.string(for: name))>, not <osm>")
            }
        case 2 where name == node || name == way:
            kind = name == node ? .node : .way
            elementLine = xml.eventLine
            problem = xml.referenceError
            if hasTags {
                for i in tags.indices { tags[i] = nil }
                hasTags = false
            }
            refs.removeAll(keepingCapacity: true)
            nodeLocation = nil
            guard let parsedId = xml.withAttributeBytes(id, Self.integer) else {
                elementId = 0
                note("missing or bad id")
                return
            }
            elementId = parsedId
            if kind == .node, let la = xml.withAttributeBytes(lat, Self.degreesE7),
                let lo = xml.withAttributeBytes(lon, Self.degreesE7), abs(la) <= 900_000_000, abs(lo) <= 1_800_000_000
            {
                nodeLocation = (la, lo)
                coordinates[parsedId] =
                    UInt64(UInt32(truncatingIfNeeded: la)) << 32 | UInt64(UInt32(truncatingIfNeeded: lo))
            }
        case 3 where kind != nil:
            if let error = xml.referenceError { note(error) }
            if name == tag {
                readTag()
            } else if name == nd && kind == .way {
                guard refs.count < Self.maxWayNodes else { return note("more than \(Self.maxWayNodes) nodes") }
                guard let r = xml.withAttributeBytes(ref, Self.integer) else { return note("<nd> without a valid ref") }
                refs.append(r)
            }
        default:
            if kind != nil, let error = xml.referenceError { note(error) }
        }
    }

    private mutating func readTag() {
        let index: Int? = xml.withAttributeBytes(k) { key in
            guard let key else { return nil }
            for (i, bytes) in OSMKey.keyBytes.enumerated() where bytes.count == key.count {
                if bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, key.baseAddress!, key.count) }) == 0 {
                    return i
                }
            }
            return nil
        }
        guard let index, let value = xml.attribute(v) else { return }
        tags[index] = value
        hasTags = true
    }

    private func tag(_ key: OSMKey) -> String? {
        guard let value = tags[key.rawValue] else { return nil }
        let trimmed = FeedValues.trimmed(value)
        return trimmed.isEmpty ? nil : trimmed
    }

    private mutating func finish(
        _ kind: Kind, _ record: (ImportRecord) throws -> Void, _ reject: (ImportReject) throws -> Void
    ) throws {
        guard hasTags,
            let category = OSMParser.category(amenity: tag(.amenity), leisure: tag(.leisure), building: tag(.building))
        else { return }
        let venueId = "\(kind == .node ? "node" : "way")/\(elementId)"
        func rejected(_ reason: String) throws {
            try reject(ImportReject(position: "line \(elementLine), \(venueId)", reason: reason))
        }
        if let problem { return try rejected(problem) }
        guard let name = tag(.name) else {
            let what =
                tag(.amenity).map { "amenity=\($0)" } ?? tag(.leisure).map { "leisure=\($0)" } ?? "building=stadium"
            return try rejected("unnamed \(what) (a place needs a name)")
        }
        let location: GeoPoint
        switch kind {
        case .node:
            guard let nodeLocation else { return try rejected("node without a valid lat/lon") }
            location = GeoPoint(latitude: Double(nodeLocation.lat) / 1e7, longitude: Double(nodeLocation.lon) / 1e7)
        case .way:
            if refs.isEmpty { return try rejected("way without nodes") }
            guard let centroid = centroid() else {
                return try rejected("none of the way's \(refs.count) nodes is in the file")
            }
            location = centroid
        }
        var street = tag(.street)
        if let s = street, let number = tag(.houseNumber) { street = "\(number) \(s)" }
        var country = tag(.country)
        if let c = country {
            country = c.utf8.count == 2 && c.utf8.allSatisfy(FeedValues.isASCIILetter) ? c.uppercased() : nil
        }
        let url = [tag(.website), tag(.contactWebsite), tag(.url)].lazy.compactMap { $0 }.first(
            where: FeedValues.isWebURL)
        let image = tag(.image).flatMap { FeedValues.isWebURL($0) ? $0 : nil }
        try record(
            .venue(
                ImportedVenue(
                    id: venueId, name: name, category: category, street: street, city: tag(.city), state: tag(.state),
                    postalCode: tag(.postcode), country: country, location: location,
                    openingHours: tags[OSMKey.openingHours.rawValue], imageURL: image, url: url)))
    }

    /// The spherical centroid of the way's known nodes (a closed way's repeated first node counted once).
    private func centroid() -> GeoPoint? {
        var nodes = refs[...]
        if nodes.count > 1 && nodes.first == nodes.last { nodes = nodes.dropLast() }
        var x = 0.0, y = 0.0, z = 0.0, known = 0
        var only: GeoPoint?
        for r in nodes {
            guard let packed = coordinates[r] else { continue }
            let point = GeoPoint(
                latitude: Double(Int32(truncatingIfNeeded: packed >> 32)) / 1e7,
                longitude: Double(Int32(truncatingIfNeeded: packed)) / 1e7)
            let latitude = point.latitude * .pi / 180, longitude = point.longitude * .pi / 180
            x += cos(latitude) * cos(longitude)
            y += cos(latitude) * sin(longitude)
            z += sin(latitude)
            known += 1
            only = point
        }
        guard known > 0 else { return nil }
        if known == 1 { return only }  // exact, without a round trip through the unit vector
        let horizontal = (x * x + y * y).squareRoot()
        guard horizontal + abs(z) > 1e-12 * Double(known) else { return nil }
        let latitude = atan2(z, horizontal) * 180 / .pi
        var longitude = horizontal < 1e-15 ? 0 : atan2(y, x) * 180 / .pi
        if longitude <= -180 { longitude += 360 }
        return GeoPoint(latitude: latitude, longitude: longitude)
    }

    /// A decimal integer (`-12`, `4567`) from attribute bytes.
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>?) -> Int64? {
        guard let bytes, !bytes.isEmpty, bytes.count <= 19 else { return nil }  // sign and 18 digits: no overflow
        var value: Int64 = 0
        let negative = bytes[0] == 0x2D
        let digits = negative ? UnsafeBufferPointer(rebasing: bytes.dropFirst()) : bytes
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        for b in digits {
            guard FeedValues.isDigit(b) else { return nil }
            value = value * 10 + Int64(b - 0x30)
        }
        return negative ? -value : value
    }

    /// Degrees as an integer number of 1e-7 degrees (OSM's precision; further digits are rounded).
    static func degreesE7(_ bytes: UnsafeBufferPointer<UInt8>?) -> Int64? {
        guard let bytes, !bytes.isEmpty, bytes.count <= 32 else { return nil }
        var k = 0
        let negative = bytes[0] == 0x2D
        if negative || bytes[0] == 0x2B { k = 1 }
        var whole: Int64 = 0, fraction: Int64 = 0, fractionDigits = 0, digits = 0, roundUp = false
        while k < bytes.count && FeedValues.isDigit(bytes[k]) {
            guard digits < 10 else { return nil }  // no overflow below
            whole = whole * 10 + Int64(bytes[k] - 0x30)
            digits += 1
            k += 1
        }
        if k < bytes.count && bytes[k] == 0x2E {
            k += 1
            while k < bytes.count && FeedValues.isDigit(bytes[k]) {
                if fractionDigits < 7 {
                    fraction = fraction * 10 + Int64(bytes[k] - 0x30)
                    fractionDigits += 1
                } else if fractionDigits == 7 {
                    roundUp = bytes[k] >= 0x35
                    fractionDigits += 1
                }
                digits += 1
                k += 1
            }
        }
        guard k == bytes.count, digits > 0 else { return nil }
        for _ in min(fractionDigits, 7)..<7 { fraction *= 10 }
        let value = whole * 10_000_000 + fraction + (roundUp ? 1 : 0)
        return negative ? -value : value
    }
}
