import Foundation
import TonightCore

/// A 64-bit fingerprint (FNV-1a) of the values an import writes into a row: the same values give
/// the same fingerprint in every process and version, so a refresh compares one stored number
/// instead of reading and decoding the row. Not a security measure: a collision (one in 2⁶⁴ per
/// row) would leave one changed record unapplied until its next change.
enum ImportFingerprint {
    /// The fingerprint of `values`, then `extra` (an event's performers), each typed and separated.
    static func of(_ values: [SQLValue], _ extra: [String] = []) -> Int64 {
        var hash = FNV()
        for value in values {
            switch value {
            case .null: hash.add(tag: 0)
            case .integer(let number):
                hash.add(tag: 1)
                hash.add(UInt64(bitPattern: number))
            case .real(let number):
                hash.add(tag: 2)
                hash.add(number.bitPattern)
            case .text(let text):
                hash.add(tag: 3)
                hash.add(text)
            }
        }
        for text in extra {
            hash.add(tag: 4)
            hash.add(text)
        }
        return Int64(bitPattern: hash.value)
    }

    /// The fingerprint of an event as the file has it, with what its row also depends on: its
    /// place and that place's time zone, its category and its performers. Prices as the row stores
    /// them (a decimal's text costs twenty times more to make; version 1 hashed it).
    static func event(
        _ event: ImportedEvent, placeID: String, zone: String, category: String?, performers: [String]
    ) -> Int64 {
        // Hashed as they come, the same bytes as ``of(_:_:)`` of these values (made into an array
        // and texts, they cost a refresh of the benchmark feed a tenth of a second more).
        var hash = FNV()
        hash.add(text: "event 2")
        hash.add(text: event.id)
        hash.add(text: event.name)
        hash.add(text: event.description)
        hash.add(text: placeID)
        hash.add(text: zone)
        hash.add(text: category)
        hash.add(time: event.start)
        hash.add(time: event.end)
        hash.add(text: event.status.rawValue)
        hash.add(real: event.onSaleDate?.timeIntervalSince1970)
        hash.add(text: event.url)
        hash.add(real: price(event.minPrice))
        hash.add(real: price(event.maxPrice))
        hash.add(text: event.currency)
        for performer in performers {
            hash.add(tag: 4)
            hash.add(performer)
        }
        return Int64(bitPattern: hash.value)
    }

    /// A price as the row stores it.
    private static func price(_ price: Decimal?) -> Double? {
        price.map { NSDecimalNumber(decimal: $0).doubleValue }
    }

    /// The fingerprint of a venue as the file has it.
    static func venue(_ venue: ImportedVenue) -> Int64 {
        of([
            .init("venue 1"), .init(venue.id), .init(venue.name), .init(venue.category), .init(venue.street),
            .init(venue.city), .init(venue.state), .init(venue.postalCode), .init(venue.country),
            .init(venue.location?.latitude), .init(venue.location?.longitude), .init(venue.openingHours),
            .init(venue.imageURL), .init(venue.url),
        ])
    }

    private struct FNV {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func add(tag: UInt8) { add(byte: tag) }

        mutating func add(byte: UInt8) {
            value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
        }

        mutating func add(_ number: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) {
                add(byte: UInt8(truncatingIfNeeded: number >> UInt64(shift)))
            }
        }

        mutating func add(_ text: String) {
            add(bytesOf: text)
            add(UInt64(text.utf8.count))
        }

        /// The bytes of `text`, without its length.
        mutating func add(bytesOf text: String) {
            var text = text
            text.withUTF8 { for byte in $0 { add(byte: byte) } }
        }

        /// Three numbers zero-padded to their widths and joined by `separator`, as a date's or a
        /// clock's description writes them: how many bytes, or nil (nothing hashed) if one does
        /// not fit its width.
        mutating func add(_ a: Int, _ b: Int, _ c: Int, widths: (Int, Int, Int), separator: Unicode.Scalar) -> Int? {
            func power(_ width: Int) -> Int { (0..<width).reduce(1) { value, _ in value * 10 } }
            func fits(_ value: Int, _ width: Int) -> Bool { value >= 0 && value < power(width) }
            guard fits(a, widths.0), fits(b, widths.1), fits(c, widths.2) else { return nil }
            add(digits: a, power(widths.0 - 1))
            add(byte: UInt8(ascii: separator))
            add(digits: b, power(widths.1 - 1))
            add(byte: UInt8(ascii: separator))
            add(digits: c, power(widths.2 - 1))
            return widths.0 + widths.1 + widths.2 + 2
        }

        /// The decimal digits of `value` from the one `divisor` (a power of ten) stands for.
        private mutating func add(digits value: Int, _ divisor: Int) {
            var divisor = divisor
            while divisor > 0 {
                add(byte: UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }

        /// The bytes of `text`: how many.
        mutating func add(counting text: String) -> Int {
            add(bytesOf: text)
            return text.utf8.count
        }

        /// A text value as ``ImportFingerprint/of(_:_:)`` hashes it (nil as null).
        mutating func add(text: String?) {
            guard let text else { return add(tag: 0) }
            add(tag: 3)
            add(text)
        }

        /// A real value as ``ImportFingerprint/of(_:_:)`` hashes it (nil as null).
        mutating func add(real: Double?) {
            guard let real else { return add(tag: 0) }
            add(tag: 2)
            add(real.bitPattern)
        }

        /// An event's time: a local one as the text `date time zone` (`-` for none), an instant as
        /// its seconds. The date and time are hashed digit by digit, without making their text (a
        /// tenth of a refresh's sifting), as their descriptions write them.
        mutating func add(time: ImportedTime?) {
            switch time {
            case .local(let date, let clock, let zone)?:
                add(tag: 3)
                var count =
                    add(date.year, date.month, date.day, widths: (4, 2, 2), separator: "-")
                    ?? add(counting: date.description)
                add(byte: UInt8(ascii: " "))
                count +=
                    clock.flatMap { add($0.hour, $0.minute, $0.second, widths: (2, 2, 2), separator: ":") }
                    ?? add(counting: clock?.description ?? "-")
                add(byte: UInt8(ascii: " "))
                count += add(counting: zone ?? "-")
                add(UInt64(count + 2))
            case .instant(let instant)?: add(real: instant.timeIntervalSince1970)
            case nil: add(tag: 0)
            }
        }
    }
}

/// What an import knows of a stored row: its fingerprint (nil: none yet), whether this file
/// listed it (events of a full import; a removed event counts as listed), whether a record with
/// its id waits in a batch, and the batch in which a record with its id was last counted.
struct StoredRow {
    var print: Int64?
    var listed = false
    var waiting = false
    var counted = -1
    /// The ``ByteHash`` of the bytes the row was made from (nil: none, or not to be passed by it).
    var raw: Int64?
    /// An event's row in ``KnownEventRows`` (-1: none).
    var ordinal: Int32 = -1

    /// What ``sift(_:print:batch:in:)`` found.
    enum Sifted {
        /// Stored as it is: counted as unchanged, no further.
        case stored
        /// Stored as it is, and counted already in this batch (a file may repeat a venue with each
        /// of its events): no further, not counted again.
        case storedAgain
        /// New, changed, or not known yet (`print` nil): the record waits for its batch.
        case waits
    }

    /// Whether row `id` is stored with `print`, marking it listed. A record that waits for its
    /// batch makes every later record with its id wait too, until the batch is written (then they
    /// compare with what it wrote): the last record of an id in a file wins.
    static func sift<Key: Hashable>(_ id: Key, print: Int64?, batch: Int, in rows: inout [Key: StoredRow]) -> Sifted {
        guard !rows.isEmpty, let index = rows.index(forKey: id) else { return .waits }
        rows.values[index].listed = true
        guard let print, !rows.values[index].waiting, rows.values[index].print == print else {
            rows.values[index].waiting = true
            return .waits
        }
        if rows.values[index].counted == batch { return .storedAgain }
        rows.values[index].counted = batch
        return .stored
    }

    /// ``sift(_:print:batch:in:)`` for a record passed unread whose bytes hash to `raw`: nil (to be
    /// read after all, nothing marked) unless row `id` is still stored as made from those bytes and
    /// no record of its id waits.
    static func sift<Key: Hashable>(
        _ id: Key, raw: Int64, batch: Int, in rows: inout [Key: StoredRow]
    ) -> Sifted? {
        guard let index = rows.index(forKey: id), rows.values[index].raw == raw, rows.values[index].print != nil,
            !rows.values[index].waiting
        else { return nil }
        rows.values[index].listed = true
        if rows.values[index].counted == batch { return .storedAgain }
        rows.values[index].counted = batch
        return .stored
    }

    /// The stored fingerprints of the rows of `prints` that exist, and the ids whose rows must be
    /// read whole: those there without the fingerprint in `prints`. The rows about to be written
    /// take their new fingerprints (an id later in the file compares with what this import wrote).
    static func compare(_ prints: [String: Int64], batch: Int, with known: inout [String: StoredRow]) -> (
        stored: [String: Int64], unsure: [String]
    ) {
        compare(prints, batch: batch, with: &known) { $0 }
    }

    /// ``compare(_:batch:with:)`` for rows known by another kind of key, made by `key`.
    static func compare<Key: Hashable>(
        _ prints: [String: Int64], batch: Int, with known: inout [Key: StoredRow], key: (String) -> Key
    ) -> (stored: [String: Int64], unsure: [String]) {
        var stored: [String: Int64] = [:]
        var unsure: [String] = []
        for (id, print) in prints {
            if let entry = known.updateValue(StoredRow(print: print, listed: true, counted: batch), forKey: key(id)) {
                if let old = entry.print { stored[id] = old }
                if entry.print != print { unsure.append(id) }
            }
        }
        return (stored, unsure)
    }
}

/// The events' rows a refresh may pass by their bytes, gathered as the rows are read (on the
/// connection's thread), in that order. A row may be passed only if it is not removed, has both
/// hashes, and has its place's zone as read at the start (a row left in an old zone is compared by
/// fingerprint, which covers the zone). Each stored row keeps its place as an index into
/// ``placeNames``, and its ``StoredRow/ordinal`` here.
final class KnownEventRows: @unchecked Sendable {
    /// A row that may be passed by its bytes.
    struct Row {
        /// Where the row stands in this import.
        enum State: UInt8 {
            /// As stored: an event with its bytes may pass.
            case stored
            /// Passed unread in this import.
            case passed
            /// A record of its id was read whole in this import: its row may change.
            case read
        }
        var hash: Int64
        var place: Int32
        var state = State.stored
        /// The batch in which it was last passed.
        var batch = -1
    }

    private let zones: [String: String]
    private var placeIndexes: [ImportKey: Int32] = [:]
    private var placeZones: [ImportKey?] = []
    private(set) var placeNames: [String] = []
    /// The rows, in the order read.
    var rows: [Row] = []
    /// Each row's ordinal by its bytes' hash.
    private(set) var ordinals: [Int64: Int32] = [:]

    init(zones: [String: String]) { self.zones = zones }

    /// The stored row of an event, noting it if it may be passed by its bytes.
    func row(
        print: Int64?, removed: Bool, raw: Int64?, place: UnsafeBufferPointer<UInt8>?, zone: UnsafeBufferPointer<UInt8>?
    ) -> StoredRow {
        var row = StoredRow(print: print, listed: removed, raw: raw)
        guard !removed, print != nil, let raw, let place, let zone else { return row }
        let placeKey = ImportKey(bytes: place)
        let index: Int32
        if let known = placeIndexes[placeKey] {
            index = known
        } else {
            index = Int32(placeNames.count)
            let name = String(decoding: place, as: UTF8.self)
            placeIndexes[placeKey] = index
            placeNames.append(name)
            placeZones.append(zones[name].map(ImportKey.init))
        }
        guard placeZones[Int(index)] == ImportKey(bytes: zone) else { return row }
        row.ordinal = Int32(rows.count)
        ordinals[raw] = row.ordinal
        rows.append(Row(hash: raw, place: index))
        return row
    }
}

/// A row's id (`source:id`) as a dictionary key: up to 32 bytes of UTF-8 kept inline, so a lookup
/// among a refresh's 220,000 events hashes and compares four words instead of following a heap
/// string (a feed's event ids make keys of 21 bytes, past what a `String` keeps inline). Longer
/// ids are kept as text. Equal ids make equal keys, whichever way they were made.
struct ImportKey: Hashable, Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var count: Int = 0
    private var long: String?

    /// The key of `id`, a whole `source:id`.
    init(_ id: String) { self.init("", id) }

    /// The key of `source:id`, made without making that string.
    init(_ source: String, _ id: String) {
        var source = source
        var id = id
        let total = source.isEmpty ? id.utf8.count : source.utf8.count + 1 + id.utf8.count
        guard total <= 32 else {
            long = source.isEmpty ? id : source + ":" + id
            return
        }
        source.withUTF8 { append($0) }
        if !source.isEmpty { append(UInt8(ascii: ":")) }
        id.withUTF8 { append($0) }
    }

    /// The key of the UTF-8 bytes of a whole `source:id`.
    init(bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count <= 32 else {
            long = String(decoding: bytes, as: UTF8.self)
            return
        }
        append(bytes)
    }

    /// Copies `bytes` after those kept so far (the four words are 32 contiguous bytes).
    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        let offset = count
        withUnsafeMutableBytes(of: &words) {
            $0.baseAddress!.advanced(by: offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        count += bytes.count
    }

    private mutating func append(_ byte: UInt8) {
        withUnsafeBytes(of: byte) { append($0.bindMemory(to: UInt8.self)) }
    }

    /// The id as text.
    var text: String {
        if let long { return long }
        var words = words
        return withUnsafeBytes(of: &words) { String(decoding: $0.prefix(count), as: UTF8.self) }
    }

    static func == (a: ImportKey, b: ImportKey) -> Bool {
        a.count == b.count && a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2
            && a.words.3 == b.words.3 && a.long == b.long
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
        hasher.combine(long)
    }
}
