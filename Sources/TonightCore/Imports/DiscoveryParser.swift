// One file on purpose (~650 lines): a parser of one format, whose two shapes share every mapping
// rule; the rules read best next to each other.
import Foundation

/// Reads a Ticketmaster Discovery JSON file in either of its two shapes, found from the content:
/// - a Discovery API v2 page, `{"_embedded": {"events": [...]}, "page": {...}}`;
/// - a Discovery Feed 2.0 file, `{"events": [{"eventId": ..., "venue": {...}, "attractions": [...]}]}`.
///
/// Both map onto the same ``ImportedEvent``: the venue is embedded (and `venueId` set), attractions become
/// `performers` (and `performerIds`), the primary classification's segment → genre → sub-genre become
/// category records with parent links, the event taking the most specific one. Categories and artists are
/// emitted once per file, before the first event that uses them. Levels named `Undefined` are dropped.
///
/// Times: `localDate` (+ `localTime`, absent when `timeTBA`/`noSpecificTime`) in the event's time zone
/// (`dates.timezone`, else the venue's), or the UTC `dateTime` when there is no local date. Numbers may
/// be given as JSON numbers or strings. An event with a missing id, name or start, bad coordinates, prices,
/// dates or time zone, or an unknown status is rejected at `_embedded.events[3]` / `events[3]`.
///
/// The whole file is decoded in memory, so its size is capped (``defaultMaxBytes``).
public struct DiscoveryParser: Sendable {
    /// The largest file read: 256 MiB.
    public static let defaultMaxBytes = 256 << 20

    private enum Source: Sendable {
        case file(String, maxBytes: Int)
        case bytes([UInt8])
    }

    private let source: Source

    /// Reads the file at `path`, refusing files larger than `maxBytes`.
    public init(path: String, maxBytes: Int = DiscoveryParser.defaultMaxBytes) {
        source = .file(path, maxBytes: maxBytes)
    }

    /// Reads an in-memory file.
    public init(bytes: [UInt8]) {
        source = .bytes(bytes)
    }

    /// Reads an in-memory file.
    public init(text: String) {
        self.init(bytes: Array(text.utf8))
    }

    /// Calls `handle` with the categories, artists and events of the file, and `reject` with each bad
    /// event. Throws ``ImportError/malformed(position:reason:)`` when the file is not JSON or neither shape,
    /// ``ImportError/unreadable(_:)`` when it cannot be read or is too large.
    public func parse(_ handle: (ImportRecord) throws -> Void, reject: (ImportReject) throws -> Void) throws {
        let top: DiscoveryTop
        do {
            top = try JSONDecoder().decode(DiscoveryTop.self, from: try data())
        } catch let error as DecodingError {
            throw ImportError.malformed(position: "file", reason: DiscoveryTop.describe(error))
        }
        var emitter = DiscoveryEmitter()
        let (events, prefix): ([Result<DiscoveryEvent, DiscoveryFailure>], String)
        if let api = top.apiEvents {
            (events, prefix) = (api, "_embedded.events")
        } else if let feed = top.feedEvents {
            (events, prefix) = (feed, "events")
        } else {
            throw ImportError.malformed(
                position: "file",
                reason: "neither a Discovery API page (_embedded.events) nor a Discovery Feed file (events)")
        }
        for (index, element) in events.enumerated() {
            let position = "\(prefix)[\(index)]"
            switch element.flatMap(DiscoveryMapping.map) {
            case .success(let mapped): try emitter.emit(mapped, to: handle)
            case .failure(let failure): try reject(ImportReject(position: position, reason: failure.reason))
            }
        }
    }

    private func data() throws -> Data {
        switch source {
        case .bytes(let bytes):
            return Data(bytes)
        case .file(let path, let maxBytes):
            let size: Int
            do {
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            } catch {
                throw ImportError.unreadable("cannot open \(path)")
            }
            guard size <= maxBytes else {
                throw ImportError.unreadable("\(path) is \(size) bytes, more than the \(maxBytes) allowed")
            }
            do {
                return try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ImportError.unreadable("cannot read \(path): \(error.localizedDescription)")
            }
        }
    }
}

// MARK: - Emitting

/// Emits each mapped event after the categories and artists it uses, each of those once per file.
private struct DiscoveryEmitter {
    var categories: Set<ImportedCategory> = []
    var artists: Set<ImportedArtist> = []

    mutating func emit(_ mapped: DiscoveryMapping.Mapped, to handle: (ImportRecord) throws -> Void) throws {
        for category in mapped.categories where categories.insert(category).inserted {
            try handle(.category(category))
        }
        for artist in mapped.event.performers where artists.insert(artist).inserted {
            try handle(.artist(artist))
        }
        try handle(.event(mapped.event))
    }
}

// MARK: - Mapping

/// Why an event was rejected.
private struct DiscoveryFailure: Error {
    let reason: String
}

/// The shape-independent fields of one event, as the file gives them.
private struct DiscoveryEvent {
    struct Level {
        var id: String?
        var name: String?
    }

    struct Venue {
        var id, name, street, city, state, postalCode, country, latitude, longitude, timeZone, url, image: String?
    }

    struct Artist {
        var id, name, url, image: String?
        var classification: [Level] = []
    }

    struct Price {
        var min, max, currency: String?
    }

    var id, name, url, description: String?
    var localDate, localTime, dateTime: String?
    var noTime = false
    var endDate, endTime: String?
    var timeZone: String?
    var status: String?
    var onSale: String?
    var onSaleTBD = false
    var prices: [Price] = []
    /// Segment, genre, sub-genre.
    var classification: [Level] = []
    var venue: Venue?
    var artists: [Artist] = []
}

private enum DiscoveryMapping {
    typealias Failure = DiscoveryFailure

    struct Mapped {
        var categories: [ImportedCategory]
        var event: ImportedEvent
    }

    static func map(_ raw: DiscoveryEvent) -> Result<Mapped, Failure> {
        Result { () throws(Failure) in try mapped(raw) }
    }

    private static func mapped(_ raw: DiscoveryEvent) throws(Failure) -> Mapped {
        guard let id = ImportText.clean(raw.id) else { throw Failure(reason: "missing id") }
        guard let name = ImportText.clean(raw.name) else { throw Failure(reason: "missing name") }
        let venue = try venue(raw.venue)
        var zone: String?
        if let given = ImportText.clean(raw.timeZone) ?? ImportText.clean(raw.venue?.timeZone) {
            guard TimeZone(identifier: given) != nil else { throw Failure(reason: "unknown time zone \"\(given)\"") }
            zone = given
        }
        let start = try time(
            date: raw.localDate, time: raw.noTime ? nil : raw.localTime, zone: zone, what: "start",
            instant: raw.dateTime)
        guard let start else { throw Failure(reason: "missing start date") }
        let end = try time(date: raw.endDate, time: raw.endTime, zone: zone, what: "end")

        var categories: [ImportedCategory] = []
        let eventCategories = levels(raw.classification)
        categories += eventCategories
        var performers: [ImportedArtist] = []
        for (index, artist) in raw.artists.enumerated() {
            guard let artistId = ImportText.clean(artist.id) else {
                throw Failure(reason: "attraction \(index + 1) has no id")
            }
            guard let artistName = ImportText.clean(artist.name) else {
                throw Failure(reason: "attraction \(index + 1) has no name")
            }
            let artistCategories = levels(artist.classification)
            categories += artistCategories
            performers.append(
                ImportedArtist(
                    id: artistId, name: artistName, categoryId: artistCategories.last?.id,
                    imageURL: ImportText.clean(artist.image), url: ImportText.clean(artist.url)))
        }

        var event = ImportedEvent(
            id: id, name: name, venueId: venue?.id, venue: venue, categoryId: eventCategories.last?.id,
            categoryNames: eventCategories.map(\.name), performerIds: performers.map(\.id), performers: performers,
            start: start, end: end, status: try status(raw.status), url: ImportText.clean(raw.url),
            description: ImportText.clean(raw.description))
        if !raw.onSaleTBD, let text = ImportText.clean(raw.onSale) {
            guard let date = DiscoveryDates.instant(text) else { throw Failure(reason: "bad on-sale date \"\(text)\"") }
            // Ticketmaster writes 1900-01-01 when the on-sale date is not known.
            event.onSaleDate = date.timeIntervalSince1970 > 0 ? date : nil
        }
        try prices(raw.prices, into: &event)
        return Mapped(categories: categories, event: event)
    }

    /// A local date (and time) in `zone`, else the UTC `instant`, else nil.
    private static func time(
        date: String?, time: String?, zone: String?, what: String, instant: String? = nil
    ) throws(Failure) -> ImportedTime? {
        if let dateText = ImportText.clean(date) {
            guard let day = CalendarDate(dateText) else { throw Failure(reason: "bad \(what) date \"\(dateText)\"") }
            var clock: LocalTime?
            if let timeText = ImportText.clean(time) {
                guard let parsed = LocalTime(timeText) else {
                    throw Failure(reason: "bad \(what) time \"\(timeText)\"")
                }
                clock = parsed
            }
            return .local(date: day, time: clock, timeZone: zone)
        }
        if let text = ImportText.clean(instant) {
            guard let moment = DiscoveryDates.instant(text) else {
                throw Failure(reason: "bad \(what) date-time \"\(text)\"")
            }
            return .instant(moment)
        }
        return nil
    }

    private static func status(_ text: String?) throws(Failure) -> EventStatus {
        guard let code = ImportText.clean(text)?.lowercased() else { return .scheduled }
        switch code {
        case "canceled", "cancelled": return .cancelled
        case "onsale", "offsale", "postponed", "rescheduled", "scheduled": return EventStatus(rawValue: code)!
        default: throw Failure(reason: "unknown status \"\(code)\"")
        }
    }

    private static func venue(_ raw: DiscoveryEvent.Venue?) throws(Failure) -> ImportedVenue? {
        guard let raw else { return nil }
        guard let id = ImportText.clean(raw.id) else { throw Failure(reason: "venue has no id") }
        guard let name = ImportText.clean(raw.name) else { throw Failure(reason: "venue has no name") }
        var venue = ImportedVenue(
            id: id, name: name, street: ImportText.clean(raw.street), city: ImportText.clean(raw.city),
            state: ImportText.clean(raw.state), postalCode: ImportText.clean(raw.postalCode),
            country: ImportText.clean(raw.country)?.uppercased(), imageURL: ImportText.clean(raw.image),
            url: ImportText.clean(raw.url))
        let latitude = ImportText.clean(raw.latitude), longitude = ImportText.clean(raw.longitude)
        if latitude != nil || longitude != nil {
            guard let lat = latitude.flatMap(Double.init), let lon = longitude.flatMap(Double.init),
                GeoPoint.issues(latitude: lat, longitude: lon).isEmpty
            else {
                throw Failure(reason: "bad coordinates \"\(latitude ?? "")\", \"\(longitude ?? "")\"")
            }
            venue.location = GeoPoint(latitude: lat, longitude: lon)
        }
        return venue
    }

    /// Category records for segment → genre → sub-genre, stopping at the first missing or `Undefined` level.
    private static func levels(_ levels: [DiscoveryEvent.Level]) -> [ImportedCategory] {
        var categories: [ImportedCategory] = []
        for level in levels {
            guard let id = ImportText.clean(level.id), let name = ImportText.clean(level.name),
                name.lowercased() != "undefined"
            else { break }
            categories.append(ImportedCategory(id: id, name: name, parentId: categories.last?.id))
        }
        return categories
    }

    /// The lowest minimum and highest maximum over the price ranges in the first range's currency.
    private static func prices(_ ranges: [DiscoveryEvent.Price], into event: inout ImportedEvent) throws(Failure) {
        var currency: String?
        for (index, range) in ranges.enumerated() {
            let rangeCurrency = ImportText.clean(range.currency)?.uppercased()
            if let code = rangeCurrency {
                guard code.count == 3, code.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                    throw Failure(reason: "bad currency \"\(code)\"")
                }
            }
            if index > 0, rangeCurrency != nil, rangeCurrency != currency { continue }
            currency = currency ?? rangeCurrency
            if let min = try amount(range.min) { event.minPrice = Swift.min(event.minPrice ?? min, min) }
            if let max = try amount(range.max) { event.maxPrice = Swift.max(event.maxPrice ?? max, max) }
        }
        if let min = event.minPrice, let max = event.maxPrice, min > max {
            throw Failure(reason: "bad price: minimum \(min) above maximum \(max)")
        }
        event.currency = event.minPrice != nil || event.maxPrice != nil ? currency : nil
    }

    /// A plain non-negative decimal (`12.50`, `45`), or nil when absent.
    private static func amount(_ text: String?) throws(Failure) -> Decimal? {
        guard let text = ImportText.clean(text) else { return nil }
        let dots = text.filter { $0 == "." }.count
        guard dots <= 1, text.contains(where: \.isNumber),
            text.allSatisfy({ $0 == "." || ($0.isASCII && $0.isNumber) }),
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else { throw Failure(reason: "bad price \"\(text)\"") }
        return value
    }
}

/// ISO 8601 instants as Ticketmaster writes them: `2025-01-20T15:00:00Z`, with optional fraction or offset.
private enum DiscoveryDates {
    static func instant(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard bytes.count >= 16, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54 || bytes[10] == 0x20,
            bytes[13] == 0x3A, let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
            let hour = digits(11, 2), let minute = digits(14, 2),
            let date = CalendarDate(String(format: "%04d-%02d-%02d", year, month, day))
        else { return nil }
        var index = 16
        var second = 0
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 0x3A {
            guard let value = digits(index + 1, 2) else { return nil }
            second = value
            index += 3
            if index < bytes.count, bytes[index] == 0x2E {
                let start = index
                index += 1
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
                fraction = Double(String(decoding: bytes[start..<index], as: UTF8.self)) ?? 0
            }
        }
        guard let time = LocalTime(hour: hour, minute: minute, second: second) else { return nil }
        var offset = 0
        if index < bytes.count {
            if bytes[index] == 0x5A, index + 1 == bytes.count {
                offset = 0
            } else if bytes[index] == 0x2B || bytes[index] == 0x2D, let hours = digits(index + 1, 2) {
                let minutesAt = bytes.count == index + 6 && bytes[index + 3] == 0x3A ? index + 4 : index + 3
                guard minutesAt + 2 == bytes.count, let minutes = digits(minutesAt, 2) else { return nil }
                offset = (hours * 3600 + minutes * 60) * (bytes[index] == 0x2D ? -1 : 1)
            } else {
                return nil
            }
        }
        let local = ICalendarTime.instant(date, time, in: .gmt)
        return local.addingTimeInterval(fraction - TimeInterval(offset))
    }
}

// MARK: - Decoding

/// An element decoded on its own, so one bad event does not fail the file.
private struct Lenient<Value: Decodable>: Decodable {
    let result: Result<Value, DiscoveryFailure>

    init(from decoder: any Decoder) throws {
        do {
            result = .success(try Value(from: decoder))
        } catch let error as DecodingError {
            result = .failure(DiscoveryFailure(reason: DiscoveryTop.describe(error, below: decoder.codingPath.count)))
        } catch {
            result = .failure(DiscoveryFailure(reason: "\(error)"))
        }
    }
}

/// A scalar given as a string, number or boolean, kept as text (numbers in their shortest exact form).
private struct FlexText: Decodable {
    let text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            text = string
        } else if let integer = try? container.decode(Int64.self) {
            text = String(integer)
        } else if let double = try? container.decode(Double.self) {
            text = "\(double)"
        } else {
            throw DecodingError.typeMismatch(
                String.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a string or number"))
        }
    }
}

/// The top level: which shape, and its events.
private struct DiscoveryTop: Decodable {
    var apiEvents: [Result<DiscoveryEvent, DiscoveryFailure>]?
    var feedEvents: [Result<DiscoveryEvent, DiscoveryFailure>]?

    private enum Key: String, CodingKey {
        case embedded = "_embedded", page, events
    }

    private enum EmbeddedKey: String, CodingKey {
        case events
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        if container.contains(.embedded) {
            let embedded = try container.nestedContainer(keyedBy: EmbeddedKey.self, forKey: .embedded)
            let events = try embedded.decodeIfPresent([Lenient<APIEvent>].self, forKey: .events) ?? []
            apiEvents = events.map { $0.result.map(\.normalized) }
        } else if container.contains(.page) {
            apiEvents = []
        } else if let events = try container.decodeIfPresent([Lenient<FeedEvent>].self, forKey: .events) {
            feedEvents = events.map { $0.result.map(\.normalized) }
        }
    }

    /// A short account of a decoding error, with the path below the first `depth` components.
    static func describe(_ error: DecodingError, below depth: Int = 0) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.dropFirst(depth).map { key in
                key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)"
            }
            let joined = keys.joined().drop { $0 == "." }
            return joined.isEmpty ? "" : "\(joined): "
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return "not valid JSON"
        case .dataCorrupted(let context):
            return "\(path(context))\(context.debugDescription)"
        case .typeMismatch(_, let context) where context.codingPath.isEmpty:
            return "the top level is not a JSON object"
        case .typeMismatch(let type, let context):
            return "\(path(context))expected \(name(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context))expected \(name(type)), found null"
        case .keyNotFound(let key, let context):
            return "\(path(context))missing \(key.stringValue)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func name(_ type: Any.Type) -> String {
        let text = "\(type)"
        if text.hasPrefix("Dictionary") || text.hasPrefix("KeyedDecodingContainer") { return "an object" }
        if text.hasPrefix("Array") || text.hasPrefix("UnkeyedDecodingContainer") { return "an array" }
        if text == "String" { return "a string or number" }
        if text == "Bool" { return "true or false" }
        return text
    }
}

private struct Named: Decodable {
    var id: FlexText?
    var name: FlexText?
    var level: DiscoveryEvent.Level { .init(id: id?.text, name: name?.text) }
}

private struct Classification: Decodable {
    var primary: Bool?
    var segment: Named?
    var genre: Named?
    var subGenre: Named?

    /// The primary classification's levels (or the first's).
    static func levels(_ all: [Classification]?) -> [DiscoveryEvent.Level] {
        guard let chosen = all?.first(where: { $0.primary == true }) ?? all?.first else { return [] }
        return [chosen.segment, chosen.genre, chosen.subGenre].map { $0?.level ?? .init() }
    }
}

private struct Image: Decodable {
    var url: FlexText?
}

/// An event of a Discovery API v2 page.
private struct APIEvent: Decodable {
    struct Moment: Decodable {
        var localDate: FlexText?
        var localTime: FlexText?
        var dateTime: FlexText?
        var timeTBA: Bool?
        var noSpecificTime: Bool?
    }

    struct Dates: Decodable {
        struct Status: Decodable { var code: FlexText? }
        var start: Moment?
        var end: Moment?
        var timezone: FlexText?
        var status: Status?
    }

    struct Sales: Decodable {
        struct Public: Decodable {
            var startDateTime: FlexText?
            var startTBD: Bool?
        }
        var `public`: Public?
    }

    struct PriceRange: Decodable {
        var min: FlexText?
        var max: FlexText?
        var currency: FlexText?
    }

    struct Venue: Decodable {
        struct Line: Decodable { var line1: FlexText? }
        struct City: Decodable { var name: FlexText? }
        struct State: Decodable {
            var stateCode: FlexText?
            var name: FlexText?
        }
        struct Country: Decodable { var countryCode: FlexText? }
        struct Location: Decodable {
            var latitude: FlexText?
            var longitude: FlexText?
        }
        var id, name, url, postalCode, timezone: FlexText?
        var address: Line?
        var city: City?
        var state: State?
        var country: Country?
        var location: Location?
        var images: [Image]?
    }

    struct Attraction: Decodable {
        var id, name, url: FlexText?
        var images: [Image]?
        var classifications: [Classification]?
    }

    struct Embedded: Decodable {
        var venues: [Venue]?
        var attractions: [Attraction]?
    }

    var id, name, url, info: FlexText?
    var dates: Dates?
    var sales: Sales?
    var classifications: [Classification]?
    var priceRanges: [PriceRange]?
    var _embedded: Embedded?

    var normalized: DiscoveryEvent {
        var event = DiscoveryEvent(id: id?.text, name: name?.text, url: url?.text, description: info?.text)
        let start = dates?.start
        event.localDate = start?.localDate?.text
        event.localTime = start?.localTime?.text
        event.dateTime = start?.dateTime?.text
        event.noTime = start?.timeTBA == true || start?.noSpecificTime == true
        event.endDate = dates?.end?.localDate?.text
        event.endTime = dates?.end?.noSpecificTime == true ? nil : dates?.end?.localTime?.text
        event.timeZone = dates?.timezone?.text
        event.status = dates?.status?.code?.text
        event.onSale = sales?.public?.startDateTime?.text
        event.onSaleTBD = sales?.public?.startTBD == true
        event.prices = (priceRanges ?? []).map {
            .init(min: $0.min?.text, max: $0.max?.text, currency: $0.currency?.text)
        }
        event.classification = Classification.levels(classifications)
        if let venue = _embedded?.venues?.first {
            event.venue = DiscoveryEvent.Venue(
                id: venue.id?.text, name: venue.name?.text, street: venue.address?.line1?.text,
                city: venue.city?.name?.text, state: venue.state?.stateCode?.text ?? venue.state?.name?.text,
                postalCode: venue.postalCode?.text, country: venue.country?.countryCode?.text,
                latitude: venue.location?.latitude?.text, longitude: venue.location?.longitude?.text,
                timeZone: venue.timezone?.text, url: venue.url?.text, image: venue.images?.first?.url?.text)
        }
        event.artists = (_embedded?.attractions ?? []).map {
            DiscoveryEvent.Artist(
                id: $0.id?.text, name: $0.name?.text, url: $0.url?.text, image: $0.images?.first?.url?.text,
                classification: Classification.levels($0.classifications))
        }
        return event
    }
}

/// An event of a Discovery Feed 2.0 file.
private struct FeedEvent: Decodable {
    struct Venue: Decodable {
        var venueId, venueName, venueStreet, venueCity, venueStateCode, venueCountryCode, venueZipCode: FlexText?
        var venueLatitude, venueLongitude, venueTimezone, venueUrl, venueImageUrl: FlexText?
    }

    struct Attraction: Decodable {
        var attractionId, attractionName, attractionUrl, attractionImageUrl: FlexText?

        private enum Key: String, CodingKey {
            case attraction, attractionId, attractionName, attractionUrl, attractionImageUrl
        }

        /// Accepts `{"attraction": {...}}` as well as the fields directly.
        init(from decoder: any Decoder) throws {
            var container = try decoder.container(keyedBy: Key.self)
            if container.contains(.attraction) {
                container = try container.nestedContainer(keyedBy: Key.self, forKey: .attraction)
            }
            attractionId = try container.decodeIfPresent(FlexText.self, forKey: .attractionId)
            attractionName = try container.decodeIfPresent(FlexText.self, forKey: .attractionName)
            attractionUrl = try container.decodeIfPresent(FlexText.self, forKey: .attractionUrl)
            attractionImageUrl = try container.decodeIfPresent(FlexText.self, forKey: .attractionImageUrl)
        }
    }

    var eventId, eventName, primaryEventUrl, eventInfo: FlexText?
    var eventStartLocalDate, eventStartLocalTime, eventStartDateTime, eventEndLocalDate, eventEndLocalTime: FlexText?
    var eventStatus, onsaleStartDateTime, minPrice, maxPrice, currency: FlexText?
    var classificationSegment, classificationSegmentId, classificationGenre, classificationGenreId: FlexText?
    var classificationSubGenre, classificationSubGenreId: FlexText?
    var venue: Venue?
    var attractions: [Attraction]?

    var normalized: DiscoveryEvent {
        var event = DiscoveryEvent(
            id: eventId?.text, name: eventName?.text, url: primaryEventUrl?.text, description: eventInfo?.text)
        event.localDate = eventStartLocalDate?.text
        event.localTime = eventStartLocalTime?.text
        event.dateTime = eventStartDateTime?.text
        event.endDate = eventEndLocalDate?.text
        event.endTime = eventEndLocalTime?.text
        event.status = eventStatus?.text
        event.onSale = onsaleStartDateTime?.text
        if minPrice != nil || maxPrice != nil {
            event.prices = [.init(min: minPrice?.text, max: maxPrice?.text, currency: currency?.text)]
        }
        event.classification = [
            .init(id: classificationSegmentId?.text, name: classificationSegment?.text),
            .init(id: classificationGenreId?.text, name: classificationGenre?.text),
            .init(id: classificationSubGenreId?.text, name: classificationSubGenre?.text),
        ]
        if let venue {
            event.venue = DiscoveryEvent.Venue(
                id: venue.venueId?.text, name: venue.venueName?.text, street: venue.venueStreet?.text,
                city: venue.venueCity?.text, state: venue.venueStateCode?.text, postalCode: venue.venueZipCode?.text,
                country: venue.venueCountryCode?.text, latitude: venue.venueLatitude?.text,
                longitude: venue.venueLongitude?.text, timeZone: venue.venueTimezone?.text, url: venue.venueUrl?.text,
                image: venue.venueImageUrl?.text)
        }
        event.artists = (attractions ?? []).map {
            DiscoveryEvent.Artist(
                id: $0.attractionId?.text, name: $0.attractionName?.text, url: $0.attractionUrl?.text,
                image: $0.attractionImageUrl?.text)
        }
        return event
    }
}
