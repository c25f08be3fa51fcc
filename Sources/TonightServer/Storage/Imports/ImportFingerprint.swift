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
        func time(_ time: ImportedTime?) -> SQLValue {
            switch time {
            case .local(let date, let clock, let zone)?: .text("\(date) \(clock?.description ?? "-") \(zone ?? "-")")
            case .instant(let instant)?: .real(instant.timeIntervalSince1970)
            case nil: .null
            }
        }
        return of(
            [
                .init("event 2"), .init(event.id), .init(event.name), .init(event.description), .init(placeID),
                .init(zone), .init(category), time(event.start), time(event.end), .init(event.status.rawValue),
                .init(event.onSaleDate?.timeIntervalSince1970), .init(event.url), .init(price(event.minPrice)),
                .init(price(event.maxPrice)), .init(event.currency),
            ], performers)
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
            var text = text
            text.withUTF8 { for byte in $0 { add(byte: byte) } }
            add(UInt64(text.utf8.count))
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
    static func sift(_ id: String, print: Int64?, batch: Int, in rows: inout [String: StoredRow]) -> Sifted {
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

    /// The stored fingerprints of the rows of `prints` that exist, and the ids whose rows must be
    /// read whole: those there without the fingerprint in `prints`. The rows about to be written
    /// take their new fingerprints (an id later in the file compares with what this import wrote).
    static func compare(_ prints: [String: Int64], batch: Int, with known: inout [String: StoredRow]) -> (
        stored: [String: Int64], unsure: [String]
    ) {
        var stored: [String: Int64] = [:]
        var unsure: [String] = []
        for (id, print) in prints {
            if let entry = known.updateValue(StoredRow(print: print, listed: true, counted: batch), forKey: id) {
                if let old = entry.print { stored[id] = old }
                if entry.print != print { unsure.append(id) }
            }
        }
        return (stored, unsure)
    }
}
