import Foundation
import Testing
import TonightCore

@testable import TonightServer

@Suite("ImportKey")
struct ImportKeyTests {
    @Test("the same id makes the same key however it is made, and reads back; different ids differ")
    func sameAndDifferent() {
        // Short, exactly 32 bytes, one past, long, empty, non-ASCII.
        let ids = [
            "1", "4A95FD161E6CD6FC", String(repeating: "x", count: 27), String(repeating: "y", count: 28), "ü-😀-venue",
        ]
        var seen = Set<ImportKey>()
        for id in ids {
            let whole = "feed:" + id
            let keys = [
                ImportKey(whole), ImportKey("feed", id),
                whole.utf8CString.withUnsafeBufferPointer {
                    $0.withMemoryRebound(to: UInt8.self) {
                        ImportKey(bytes: UnsafeBufferPointer(rebasing: $0.dropLast()))
                    }
                },
            ]
            for key in keys {
                #expect(key == keys[0], "\(whole)")
                #expect(key.hashValue == keys[0].hashValue, "\(whole)")
                #expect(key.text == whole)
            }
            seen.insert(keys[0])
        }
        #expect(seen.count == ids.count)
        // Same bytes, different split: still one id.
        #expect(ImportKey("feed", "a:b") == ImportKey("feed:a", "b"))
        // A prefix of another id is another id (the length is part of the key).
        #expect(ImportKey("feed:1") != ImportKey("feed:1\u{0}"))
        #expect(ImportKey("") == ImportKey(""))
        #expect(ImportKey("").text == "")
    }
}

@Suite("ImportFingerprint")
struct ImportFingerprintTests {
    /// Version 2 of an event's fingerprint as it was first written: its values in an array, hashed
    /// by `of`. Stored fingerprints were made this way; the event's own hashing must agree.
    private func asValues(
        _ event: ImportedEvent, placeID: String, zone: String, category: String?, performers: [String]
    ) -> Int64 {
        func time(_ time: ImportedTime?) -> SQLValue {
            switch time {
            case .local(let date, let clock, let zone)?: .text("\(date) \(clock?.description ?? "-") \(zone ?? "-")")
            case .instant(let instant)?: .real(instant.timeIntervalSince1970)
            case nil: .null
            }
        }
        func price(_ price: Decimal?) -> Double? { price.map { NSDecimalNumber(decimal: $0).doubleValue } }
        return ImportFingerprint.of(
            [
                .init("event 2"), .init(event.id), .init(event.name), .init(event.description), .init(placeID),
                .init(zone), .init(category), time(event.start), time(event.end), .init(event.status.rawValue),
                .init(event.onSaleDate?.timeIntervalSince1970), .init(event.url), .init(price(event.minPrice)),
                .init(price(event.maxPrice)), .init(event.currency),
            ], performers)
    }

    @Test("an event's fingerprint is the one stored fingerprints were made with")
    func sameAsStored() throws {
        let date = try #require(CalendarDate("2015-10-18"))
        let events = [
            ImportedEvent(
                id: "4A95FD161E6CD6FC", name: "Electric Riders", start: .local(date: date, time: nil, timeZone: nil)),
            ImportedEvent(
                id: "e2", name: "Nacht — Live 😀", venueId: "v1", categoryId: "10099", performerIds: ["1", "2"],
                start: .local(date: date, time: LocalTime(hour: 20, minute: 30, second: 15), timeZone: "Europe/Zurich"),
                end: .instant(Date(timeIntervalSince1970: 1_445_200_000)), status: .cancelled,
                onSaleDate: Date(timeIntervalSince1970: 1_420_000_000), url: "https://tickets.example/e2",
                description: "", minPrice: Decimal(string: "180.50"), maxPrice: Decimal(string: "310.99"),
                currency: "USD"),
            ImportedEvent(id: "e3", name: "", start: .instant(Date(timeIntervalSince1970: 0))),
            // Single digits padded; a year of five digits (made from a date, not from a feed's text).
            ImportedEvent(
                id: "e4", name: "Early",
                start: .local(
                    date: try #require(CalendarDate("0005-01-09")), time: LocalTime(hour: 9, minute: 5),
                    timeZone: "UTC"),
                end: .local(
                    date: CalendarDate(date: Date(timeIntervalSince1970: 1e12)), time: nil, timeZone: nil)),
        ]
        for event in events {
            for (category, performers) in [(nil, [String]()), ("feed:10099", ["feed:1", "feed:2"])] {
                let made = ImportFingerprint.event(
                    event, placeID: "feed:v1", zone: "America/New_York", category: category, performers: performers)
                #expect(
                    made
                        == asValues(
                            event, placeID: "feed:v1", zone: "America/New_York", category: category,
                            performers: performers), "\(event.id)")
            }
        }
    }
}
