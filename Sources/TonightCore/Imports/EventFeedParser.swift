// One file on purpose (~450 lines): the feed reader is one state machine over the pull parser's
// events (section, record, field). The byte-level value checks it shares with the OpenStreetMap
// parser are in FeedValues.swift.
import Foundation

/// Reads the event feed XML described in `FORMATS.md` (`<feed>` with `categories`, `artists`, `venues` and
/// `events` sections) and maps each record onto the shared import model, in document order.
///
/// Mapping and decisions beyond `FORMATS.md`:
/// - Text is trimmed of ASCII whitespace; an empty optional field counts as absent.
/// - Required: `id` and `name`; events also `venue_id` and `date`. A record missing one, with a malformed value,
///   a field given twice, or an unknown entity reference (never expanded) anywhere inside it is rejected with its
///   position (`line 120, event 45 (id 0B00…)`) and a reason; parsing goes on with the next record.
/// - URLs (`url`, `image_url`) must be absolute `http`/`https`.
/// - Venues: `zip` → `postalCode`; `country` is two letters (upper-cased), default `US`; `latitude` and
///   `longitude` come both or neither and must be in range; `category` stays nil.
/// - Events: `time` is optional (absent, empty, `TBA` or `TBD` → nil, i.e. to be announced) and the start is
///   ``ImportedTime/local(date:time:timeZone:)`` without a zone (the venue's applies). `status` is one of
///   ``EventStatus``'s values (case-insensitive); an absent status means ``EventStatus/scheduled`` (the event is
///   on; the feed said nothing about ticket sales). Performers may be empty. Prices are decimals ≥ 0 with
///   `min_price` ≤ `max_price`; `currency` is three letters (upper-cased), default `USD`.
/// - Elements and attributes the feed does not define are ignored; records may reference ids defined later.
///   Duplicate ids are emitted as they come (the importer keeps the later one).
///
/// Whole-document problems (not well-formed, a DTD, a root other than `<feed>`, unreadable file) throw
/// ``ImportError``.
public struct EventFeedParser: Sendable {
    private let source: XMLSource

    /// A parser for the feed file at `path`, read `chunkSize` bytes at a time.
    public init(path: String, chunkSize: Int = XMLPullParser.defaultChunkSize) {
        source = XMLSource(path: path, chunkSize: chunkSize)
    }

    /// A parser for a feed held in memory (tests, small uploads).
    public init(bytes: [UInt8], chunkSize: Int = XMLPullParser.defaultChunkSize) {
        source = XMLSource(bytes: bytes, chunkSize: chunkSize)
    }

    /// Reads the whole feed, calling `record` for each valid record and `reject` for each rejected one,
    /// in document order.
    ///
    /// With `known`, each artist, venue and event also carries the ``ByteHash`` of its bytes
    /// (``ImportedEvent/sourceHash``, when they were in the buffer whole), and once hashes are
    /// published there, such a record written `<event>…</event>` (`<artist>`, `<venue>`) whose bytes
    /// hash to one of them is passed unread as ``ImportRecord/known(_:)`` (a refresh of a large feed
    /// is mostly such records).
    /// - Throws: ``ImportError`` for the document as a whole, or whatever a callback throws.
    public func parse(
        _ record: (ImportRecord) throws -> Void, reject: (ImportReject) throws -> Void, known: KnownRecordHashes? = nil
    ) throws {
        var reader = FeedReader(xml: try source.open(), known: known)
        try reader.run(record, reject)
    }
}

/// The fields a feed record may have, in the order their names are interned (so a name's id is its field).
private enum FeedField: Int, CaseIterable {
    case id, name, parentId, categoryId, imageURL, url, street, city, state, zip, country, latitude, longitude
    case venueId, performers, artistId, date, time, status, onsaleDate, minPrice, maxPrice, currency

    var tag: String {
        switch self {
        case .id: "id"
        case .name: "name"
        case .parentId: "parent_id"
        case .categoryId: "category_id"
        case .imageURL: "image_url"
        case .url: "url"
        case .street: "street"
        case .city: "city"
        case .state: "state"
        case .zip: "zip"
        case .country: "country"
        case .latitude: "latitude"
        case .longitude: "longitude"
        case .venueId: "venue_id"
        case .performers: "performers"
        case .artistId: "artist_id"
        case .date: "date"
        case .time: "time"
        case .status: "status"
        case .onsaleDate: "onsale_date"
        case .minPrice: "min_price"
        case .maxPrice: "max_price"
        case .currency: "currency"
        }
    }
}

private enum FeedRecordKind: Int, CaseIterable {
    case category, artist, venue, event

    var tag: String { ["category", "artist", "venue", "event"][rawValue] }
    var section: String { ["categories", "artists", "venues", "events"][rawValue] }
}

/// A record being read, with its problem (the first one found) if any.
private struct FeedRecordProblem: Error {
    var reason: String
}

private struct FeedReader {
    let xml: XMLPullParser
    let feedName: XMLName
    let sectionNames: [XMLName]
    let recordNames: [XMLName]
    let fieldCount = FeedField.allCases.count

    // Where we are.
    var section: FeedRecordKind?
    var kind: FeedRecordKind?
    var field: FeedField?
    var fieldDepth = 0
    var ordinals = [0, 0, 0, 0]

    // The record being read.
    var recordLine = 0
    var values: [String?]
    var performers: [String] = []
    var problem: String?

    // Records passed unread by their bytes' hash (see ``EventFeedParser/parse(_:reject:known:)``).
    let known: KnownRecordHashes?
    var knownHashes: Set<Int64> = []
    var knownComplete = false
    var waitedForSome = false
    var waitedForAll = false
    /// How long the parser waits for the known hashes (the writer reads the benchmark feed's
    /// 340,000 in a few tenths of a second); after that it reads every record until they come.
    static let knownHashesWait = 10.0
    /// The kind of record that may be passed unread next: right after its section's start tag or
    /// the end of one of its records.
    var passable: FeedRecordKind?
    /// Whether a `<venues>` section began.
    var venuesSeen = false
    /// Where the record being read began in the input.
    var recordOffset = 0

    // Feeds repeat the same few hundred dates and times: parse each spelling once.
    var dates: [String: CalendarDate] = [:]
    var times: [String: LocalTime] = [:]

    init(xml: XMLPullParser, known: KnownRecordHashes?) {
        self.xml = xml
        self.known = known
        // Field names first, so that a field's name id is its raw value.
        for field in FeedField.allCases {
            let name = xml.name(field.tag)
            precondition(Int(name.id) == field.rawValue, "field names must be interned first")
        }
        feedName = xml.name("feed")
        sectionNames = FeedRecordKind.allCases.map { xml.name($0.section) }
        recordNames = FeedRecordKind.allCases.map { xml.name($0.tag) }
        values = Array(repeating: nil, count: fieldCount)
    }

    mutating func run(_ record: (ImportRecord) throws -> Void, _ reject: (ImportReject) throws -> Void) throws {
        while true {
            if let kind = passable {
                passable = nil
                updateKnown(for: kind)
                if !knownHashes.isEmpty, let passed = try pass(kind) {
                    ordinals[kind.rawValue] += 1
                    passable = kind
                    try record(.known(passed))
                    continue
                }
            }
            switch try xml.next() {
            case .startElement(let name):
                try start(name)
                if xml.depth == 2, let section {
                    if section == .venue { venuesSeen = true }
                    if mayPass(section) { passable = section }
                }
            case .text:
                if kind != nil { text() }
            case .endElement:
                if let kind, xml.depth == 2 {
                    self.kind = nil
                    try finish(kind, record, reject)
                    if mayPass(kind) { passable = kind }
                } else if let field, xml.depth == fieldDepth - 1 {
                    // A field ends; an <artist_id> ends back inside <performers>.
                    self.field = field == .artistId ? .performers : nil
                    fieldDepth -= 1
                } else if xml.depth == 1 {
                    section = nil
                }
            case .endOfDocument:
                return
            }
        }
    }

    /// Whether records of `kind` may be passed unread: artists and venues, and events once venues
    /// came (an event is taken as unchanged only at a venue listed before it: the writer would
    /// parse one passed before its venue after all, on its own thread).
    private func mayPass(_ kind: FeedRecordKind) -> Bool {
        known != nil && kind != .category && (kind != .event || venuesSeen)
    }

    /// Takes what the writer has published of the known hashes. They are read while the parse
    /// starts: the parser waits for the first ones at the first record it could pass, and for the
    /// events' at the first event.
    private mutating func updateKnown(for kind: FeedRecordKind) {
        guard let known, !knownComplete else { return }
        let update: (hashes: Set<Int64>?, complete: Bool)
        if kind == .event && !waitedForAll {
            (waitedForAll, waitedForSome) = (true, true)
            update = known.wait(upTo: Self.knownHashesWait, events: true)
        } else if !waitedForSome {
            waitedForSome = true
            update = known.wait(upTo: Self.knownHashesWait, events: false)
        } else {
            update = known.current
        }
        if let hashes = update.hashes { knownHashes = hashes }
        knownComplete = update.complete
    }

    /// The next record, of `kind`, passed unread if its bytes' hash is known.
    private func pass(_ kind: FeedRecordKind) throws -> KnownRecord? {
        let hashes = knownHashes
        let known = { (hash: Int64) in hashes.contains(hash) }
        let passed: (hash: Int64, bytes: [UInt8])?
        let passedKind: KnownRecord.Kind
        switch kind {
        case .artist:
            passed = try xml.skipElement(open: "<artist>", close: "</artist>", known: known)
            passedKind = .artist
        case .venue:
            passed = try xml.skipElement(open: "<venue>", close: "</venue>", known: known)
            passedKind = .venue
        case .event:
            passed = try xml.skipElement(open: "<event>", close: "</event>", known: known)
            passedKind = .event
        case .category:
            return nil
        }
        return passed.map { KnownRecord(kind: passedKind, hash: $0.hash, bytes: $0.bytes) }
    }

    private mutating func start(_ name: XMLName) throws {
        let depth = xml.depth
        if kind != nil, let error = xml.referenceError { note(error) }
        switch depth {
        case 1:
            guard name == feedName else {
                throw ImportError.malformed(
                    position: xml.position, reason: "the root element is <\(xml.string(for: name))>, not <feed>")
            }
        case 2:
            section = sectionNames.firstIndex(of: name).map { FeedRecordKind(rawValue: $0)! }
        case 3:
            guard let section, name == recordNames[section.rawValue] else { return }
            kind = section
            ordinals[section.rawValue] += 1
            recordLine = xml.eventLine
            recordOffset = xml.tagOffset
            for k in 0..<fieldCount { values[k] = nil }
            performers.removeAll(keepingCapacity: true)
            problem = xml.referenceError
        case 4 where kind != nil:
            guard Int(name.id) < fieldCount, let f = FeedField(rawValue: Int(name.id)) else { return }
            if f == .performers {
                field = .performers
            } else if f == .artistId {
                return
            } else {
                if values[f.rawValue] != nil { note("<\(f.tag)> given twice") }
                values[f.rawValue] = ""
                field = f
            }
            fieldDepth = depth
        case 5 where kind == .event && field == .performers:
            guard Int(name.id) == FeedField.artistId.rawValue else { return }
            performers.append("")
            field = .artistId
            fieldDepth = depth
        default:
            break
        }
    }

    private mutating func text() {
        if let error = xml.referenceError { note(error) }
        guard let field, xml.depth == fieldDepth else { return }
        let piece = xml.text
        if field == .artistId {
            performers[performers.count - 1] += piece
        } else if field != .performers {
            values[field.rawValue]! += piece
        }
    }

    /// Notes a problem with the record being read (the first one is reported).
    private mutating func note(_ reason: String) {
        if problem == nil { problem = reason }
    }

    private mutating func finish(
        _ kind: FeedRecordKind, _ record: (ImportRecord) throws -> Void, _ reject: (ImportReject) throws -> Void
    ) throws {
        field = nil
        let id = value(.id)
        do {
            if let problem { throw FeedRecordProblem(reason: problem) }
            guard let id else { throw FeedRecordProblem(reason: "missing <id>") }
            if id.utf8.count > 255 { throw FeedRecordProblem(reason: "<id> longer than 255 bytes") }
            guard let name = value(.name) else { throw FeedRecordProblem(reason: "missing <name>") }
            switch kind {
            case .category:
                try record(.category(ImportedCategory(id: id, name: name, parentId: value(.parentId))))
            case .artist:
                var artist = ImportedArtist(
                    id: id, name: name, categoryId: value(.categoryId), imageURL: try url(.imageURL), url: try url(.url)
                )
                artist.sourceHash = sourceHash()
                try record(.artist(artist))
            case .venue:
                var venue = try venue(id: id, name: name)
                venue.sourceHash = sourceHash()
                try record(.venue(venue))
            case .event:
                var event = try event(id: id, name: name)
                event.sourceHash = sourceHash()
                try record(.event(event))
            }
        } catch let problem as FeedRecordProblem {
            var position = "line \(recordLine), \(kind.tag) \(ordinals[kind.rawValue])"
            if let id { position += " (id \(id.count > 24 ? String(id.prefix(24)) + "…" : id))" }
            try reject(ImportReject(position: position, reason: problem.reason))
        }
    }

    /// The ``ByteHash`` of the record just read, when asked for (and its bytes are still in the buffer).
    private func sourceHash() -> Int64? {
        known == nil ? nil : xml.hashOfBytes(from: recordOffset)
    }

    /// The trimmed value of a field, nil when absent or empty.
    private func value(_ field: FeedField) -> String? {
        guard let raw = values[field.rawValue] else { return nil }
        let trimmed = FeedValues.trimmed(raw)
        return trimmed.isEmpty ? nil : trimmed
    }

    private func url(_ field: FeedField) throws -> String? {
        guard let text = value(field) else { return nil }
        guard FeedValues.isWebURL(text) else {
            throw FeedRecordProblem(reason: "<\(field.tag)> is not an absolute http(s) URL: \(FeedValues.quoted(text))")
        }
        return text
    }

    private func venue(id: String, name: String) throws -> ImportedVenue {
        var country = "US"
        if let text = value(.country) {
            guard text.utf8.count == 2, text.utf8.allSatisfy(FeedValues.isASCIILetter) else {
                throw FeedRecordProblem(
                    reason: "<country> is not a two-letter ISO 3166 code: \(FeedValues.quoted(text))")
            }
            country = text.uppercased()
        }
        var location: GeoPoint?
        switch (value(.latitude), value(.longitude)) {
        case (nil, nil):
            break
        case (let lat?, let lon?):
            guard let latitude = FeedValues.decimalDouble(lat) else {
                throw FeedRecordProblem(reason: "<latitude> is not a number: \(FeedValues.quoted(lat))")
            }
            guard let longitude = FeedValues.decimalDouble(lon) else {
                throw FeedRecordProblem(reason: "<longitude> is not a number: \(FeedValues.quoted(lon))")
            }
            let issues = GeoPoint.issues(
                latitude: latitude, longitude: longitude, latitudeField: "latitude", longitudeField: "longitude")
            if let issue = issues.first { throw FeedRecordProblem(reason: "<\(issue.field)>: \(issue.message)") }
            location = GeoPoint(latitude: latitude, longitude: longitude)
        default:
            throw FeedRecordProblem(reason: "<latitude> and <longitude> must be given together")
        }
        return ImportedVenue(
            id: id, name: name, street: value(.street), city: value(.city), state: value(.state),
            postalCode: value(.zip), country: country, location: location, imageURL: try url(.imageURL),
            url: try url(.url))
    }

    private mutating func event(id: String, name: String) throws -> ImportedEvent {
        guard let venueId = value(.venueId) else { throw FeedRecordProblem(reason: "missing <venue_id>") }
        guard let dateText = value(.date) else { throw FeedRecordProblem(reason: "missing <date>") }
        guard let date = dates[dateText] ?? CalendarDate(dateText) else {
            throw FeedRecordProblem(reason: "<date> is not a date (YYYY-MM-DD): \(FeedValues.quoted(dateText))")
        }
        if dates.count < 100_000 { dates[dateText] = date }
        var time: LocalTime?
        if let text = value(.time), !["TBA", "TBD"].contains(text.uppercased()) {
            guard let parsed = times[text] ?? LocalTime(text) else {
                throw FeedRecordProblem(reason: "<time> is not a time (HH:MM or HH:MM:SS): \(FeedValues.quoted(text))")
            }
            time = parsed
            if times.count < 100_000 { times[text] = parsed }
        }
        var status = EventStatus.scheduled
        if let text = value(.status) {
            guard let parsed = EventStatus(rawValue: text.lowercased()) else {
                throw FeedRecordProblem(reason: "unknown <status>: \(FeedValues.quoted(text))")
            }
            status = parsed
        }
        var onSaleDate: Date?
        if let text = value(.onsaleDate) {
            guard let parsed = FeedValues.rfc3339(text) else {
                throw FeedRecordProblem(reason: "<onsale_date> is not an RFC 3339 time: \(FeedValues.quoted(text))")
            }
            onSaleDate = parsed
        }
        let performerIds = try performers.enumerated().map { index, performer in
            let trimmed = FeedValues.trimmed(performer)
            if trimmed.isEmpty { throw FeedRecordProblem(reason: "empty <artist_id> (performer \(index + 1))") }
            return trimmed
        }
        let minPrice = try price(.minPrice), maxPrice = try price(.maxPrice)
        if let minPrice, let maxPrice, minPrice > maxPrice {
            throw FeedRecordProblem(reason: "<min_price> \(minPrice) is above <max_price> \(maxPrice)")
        }
        var currency = "USD"
        if let text = value(.currency) {
            guard text.utf8.count == 3, text.utf8.allSatisfy(FeedValues.isASCIILetter) else {
                throw FeedRecordProblem(
                    reason: "<currency> is not a three-letter ISO 4217 code: \(FeedValues.quoted(text))")
            }
            currency = text.uppercased()
        }
        return ImportedEvent(
            id: id, name: name, venueId: venueId, categoryId: value(.categoryId), performerIds: performerIds,
            start: .local(date: date, time: time, timeZone: nil), status: status, onSaleDate: onSaleDate,
            url: try url(.url), minPrice: minPrice, maxPrice: maxPrice, currency: currency)
    }

    private func price(_ field: FeedField) throws -> Decimal? {
        guard let text = value(field) else { return nil }
        if text.hasPrefix("-") { throw FeedRecordProblem(reason: "<\(field.tag)> is negative: \(text)") }
        guard let price = FeedValues.decimal(text) else {
            throw FeedRecordProblem(reason: "<\(field.tag)> is not a decimal amount: \(FeedValues.quoted(text))")
        }
        return price
    }
}
