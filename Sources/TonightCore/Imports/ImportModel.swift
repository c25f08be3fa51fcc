import Foundation

/// The common shape every importer (event feed, Discovery JSON, iCalendar, OpenStreetMap) maps its
/// records onto. Ids are the source's own ids; the server keys imported rows by `(source, id)`.

/// A category of the source's classification tree.
public struct ImportedCategory: Sendable, Hashable {
    public var id: String
    public var name: String
    public var parentId: String?
    public init(id: String, name: String, parentId: String? = nil) {
        self.id = id
        self.name = name
        self.parentId = parentId
    }
}

/// A performer.
public struct ImportedArtist: Sendable, Hashable {
    public var id: String
    public var name: String
    public var categoryId: String?
    public var imageURL: String?
    public var url: String?
    /// The ``ByteHash`` of the record's bytes in the file (see ``ImportedEvent/sourceHash``).
    public var sourceHash: Int64?
    public init(id: String, name: String, categoryId: String? = nil, imageURL: String? = nil, url: String? = nil) {
        self.id = id
        self.name = name
        self.categoryId = categoryId
        self.imageURL = imageURL
        self.url = url
    }
}

/// A venue or other place.
public struct ImportedVenue: Sendable, Hashable {
    public var id: String
    public var name: String
    /// Place category slug (see `PlaceCategory`), nil when the source does not say.
    public var category: String?
    public var street: String?
    public var city: String?
    /// State, province or region as the source writes it.
    public var state: String?
    public var postalCode: String?
    /// ISO 3166-1 alpha-2, upper case.
    public var country: String?
    public var location: GeoPoint?
    /// OpenStreetMap `opening_hours` text, kept verbatim.
    public var openingHours: String?
    public var imageURL: String?
    public var url: String?
    /// The ``ByteHash`` of the record's bytes in the file (see ``ImportedEvent/sourceHash``).
    public var sourceHash: Int64?
    public init(
        id: String, name: String, category: String? = nil, street: String? = nil, city: String? = nil,
        state: String? = nil, postalCode: String? = nil, country: String? = nil, location: GeoPoint? = nil,
        openingHours: String? = nil, imageURL: String? = nil, url: String? = nil
    ) {
        self.id = id
        self.name = name
        self.category = category
        self.street = street
        self.city = city
        self.state = state
        self.postalCode = postalCode
        self.country = country
        self.location = location
        self.openingHours = openingHours
        self.imageURL = imageURL
        self.url = url
    }
}

/// An event's lifecycle status.
public enum EventStatus: String, Sendable, Hashable, CaseIterable, Codable {
    case onsale, offsale, cancelled, postponed, rescheduled, scheduled
    /// No longer listed by the full feed that brought it (`tonight import feed --full`): kept with
    /// its attendance and history, but off sale and called off like a cancelled event.
    case removed

    /// Cancelled or removed: nobody can go, be interested or be invited any more (following is fine).
    public var isCalledOff: Bool { self == .cancelled || self == .removed }
}

/// A wall-clock time of day.
public struct LocalTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var hour: Int
    public var minute: Int
    public var second: Int
    public init?(hour: Int, minute: Int, second: Int = 0) {
        guard (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second) else { return nil }
        self.hour = hour
        self.minute = minute
        self.second = second
    }
    /// Parses `HH:MM` or `HH:MM:SS`.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count),
            parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let h = Int(parts[0]), let m = Int(parts[1])
        else { return nil }
        self.init(hour: h, minute: m, second: parts.count == 3 ? Int(parts[2]) ?? 99 : 0)
    }
    public var secondsSinceMidnight: Int { hour * 3600 + minute * 60 + second }
    public var description: String {
        Digits.padded(hour, 2) + ":" + Digits.padded(minute, 2) + ":" + Digits.padded(second, 2)
    }
    public static func < (l: LocalTime, r: LocalTime) -> Bool { l.secondsSinceMidnight < r.secondsSinceMidnight }
}

/// When an imported event starts or ends.
public enum ImportedTime: Sendable, Hashable {
    /// A date and optional time (nil = to be announced, or an all-day event) on the venue's wall clock.
    /// `timeZone` is an IANA id when the source names one; otherwise the venue's zone applies.
    case local(date: CalendarDate, time: LocalTime?, timeZone: String?)
    /// An absolute instant (e.g. iCalendar `...Z` times).
    case instant(Date)
}

/// An event.
public struct ImportedEvent: Sendable, Hashable {
    public var id: String
    public var name: String
    /// The venue's id in the same source, when venues come as separate records.
    public var venueId: String?
    /// The venue embedded in the event (Discovery JSON, iCalendar LOCATION/GEO).
    public var venue: ImportedVenue?
    public var categoryId: String?
    /// Categories given by name rather than id (Discovery classifications, iCalendar CATEGORIES).
    public var categoryNames: [String]
    /// Performer ids in billing order (feed), or embedded artists (Discovery attractions).
    public var performerIds: [String]
    public var performers: [ImportedArtist]
    public var start: ImportedTime
    public var end: ImportedTime?
    public var status: EventStatus
    public var onSaleDate: Date?
    public var url: String?
    public var description: String?
    public var minPrice: Decimal?
    public var maxPrice: Decimal?
    /// ISO 4217, upper case.
    public var currency: String?
    /// The ``ByteHash`` of the record's bytes in the file, when the parser was asked to take it and
    /// they were in its buffer whole (see ``KnownRecord``).
    public var sourceHash: Int64?
    public init(
        id: String, name: String, venueId: String? = nil, venue: ImportedVenue? = nil, categoryId: String? = nil,
        categoryNames: [String] = [], performerIds: [String] = [], performers: [ImportedArtist] = [],
        start: ImportedTime, end: ImportedTime? = nil, status: EventStatus = .scheduled, onSaleDate: Date? = nil,
        url: String? = nil, description: String? = nil, minPrice: Decimal? = nil, maxPrice: Decimal? = nil,
        currency: String? = nil
    ) {
        self.id = id
        self.name = name
        self.venueId = venueId
        self.venue = venue
        self.categoryId = categoryId
        self.categoryNames = categoryNames
        self.performerIds = performerIds
        self.performers = performers
        self.start = start
        self.end = end
        self.status = status
        self.onSaleDate = onSaleDate
        self.url = url
        self.description = description
        self.minPrice = minPrice
        self.maxPrice = maxPrice
        self.currency = currency
    }
}

/// One record read from an import file.
public enum ImportRecord: Sendable, Hashable {
    case category(ImportedCategory)
    case artist(ImportedArtist)
    case venue(ImportedVenue)
    case event(ImportedEvent)
    /// A record whose bytes the parser passed unread: their hash is one an earlier import stored
    /// (see ``KnownRecordHashes``).
    case known(KnownRecord)
}

/// The bytes of a record passed unread, with their ``ByteHash``: the writer looks the hash up, and
/// parses the bytes after all if the record might have changed (an event's place did, or its id
/// came earlier in the same file).
public struct KnownRecord: Sendable, Hashable {
    /// What the record is.
    public enum Kind: Sendable, Hashable {
        case artist, venue, event
    }
    public var kind: Kind
    public var hash: Int64
    public var bytes: [UInt8]
    public init(kind: Kind, hash: Int64, bytes: [UInt8]) {
        self.kind = kind
        self.hash = hash
        self.bytes = bytes
    }
}

/// The byte hashes of the records an earlier import stored, handed from the import's writer to its
/// parser's thread in numbered parts (0: the artists' and venues', 1: the events', read at the
/// same time), each seen once the ones before it are in. The parser waits for the first
/// (``wait(upTo:events:)``) when it reaches the first record it could pass, and for all at the
/// first event, then passes the records whose bytes hash to one of them as ``ImportRecord/known(_:)``.
public final class KnownRecordHashes: @unchecked Sendable {
    private let condition = NSCondition()
    private var hashes: Set<Int64>?
    private var early: [Int: Set<Int64>] = [:]
    private var next = 0
    private let parts: Int
    private var complete: Bool { next >= parts }

    /// Hashes that come in `parts` parts.
    public init(parts: Int = 1) { self.parts = parts }

    /// Hashes known to be none: the parser takes each record's hash and passes nothing.
    public static func none() -> KnownRecordHashes {
        let known = KnownRecordHashes()
        known.publish([], part: 0)
        return known
    }

    /// Adds part `part`'s `hashes` to the known ones (seen once the parts before it are in).
    public func publish(_ hashes: Set<Int64>, part: Int) {
        condition.lock()
        if !complete {
            early[part] = hashes
            while let more = early.removeValue(forKey: next) {
                self.hashes = self.hashes.map { $0.union(more) } ?? more
                next += 1
            }
        }
        condition.broadcast()
        condition.unlock()
    }

    /// No more parts will come (a writer that failed): the parser goes on with what there is.
    public func giveUp() {
        condition.lock()
        next = parts
        if hashes == nil { hashes = [] }
        condition.broadcast()
        condition.unlock()
    }

    /// The known hashes (nil until some are published) and whether they are all in.
    public var current: (hashes: Set<Int64>?, complete: Bool) {
        condition.lock()
        defer { condition.unlock() }
        return (hashes, complete)
    }

    /// The known hashes once published (with the events' if `events`), waiting at most `seconds`:
    /// then what there is.
    public func wait(upTo seconds: Double, events: Bool) -> (hashes: Set<Int64>?, complete: Bool) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while (hashes == nil || events && !complete) && condition.wait(until: deadline) {}
        return (hashes, complete)
    }
}

/// A record that was skipped, with where it was (`line 12`, `/feed/events/event[3]`) and why.
public struct ImportReject: Sendable, Hashable, CustomStringConvertible {
    public var position: String
    public var reason: String
    public init(position: String, reason: String) {
        self.position = position
        self.reason = reason
    }
    public var description: String { "\(position): \(reason)" }
}

/// Why a whole file was refused.
public enum ImportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// DTD, entity declaration, external reference: refused before anything is written.
    case hostile(String)
    /// The file is not well-formed at the given position; nothing after it can be trusted.
    case malformed(position: String, reason: String)
    /// The file could not be read.
    case unreadable(String)

    public var description: String {
        switch self {
        case .hostile(let why): "refused: \(why)"
        case .malformed(let position, let reason): "malformed at \(position): \(reason)"
        case .unreadable(let why): "unreadable: \(why)"
        }
    }
}

/// What an event is: an imported show, a party a member organises, or a sports session.
public enum EventKind: String, Sendable, Hashable, CaseIterable, Codable {
    case show, party, session
}
