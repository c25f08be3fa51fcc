import Foundation
import Testing
import TonightCore

private func parseFeed(_ body: String, chunkSize: Int = XMLPullParser.defaultChunkSize) throws -> (
    records: [ImportRecord], rejects: [ImportReject]
) {
    var records: [ImportRecord] = []
    var rejects: [ImportReject] = []
    let xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<feed generated=\"2015-03-01T06:00:00Z\">\n\(body)\n</feed>\n"
    try EventFeedParser(bytes: Array(xml.utf8), chunkSize: chunkSize).parse(
        { records.append($0) }, reject: { rejects.append($0) })
    return (records, rejects)
}

/// An event with every required field, plus `extra` child elements.
private func event(_ id: String = "E1", _ extra: String = "", date: String = "2015-03-14") -> String {
    "<events><event><id>\(id)</id><name>Show</name><venue_id>V1</venue_id><date>\(date)</date>\(extra)</event></events>"
}

private func onlyEvent(_ xml: String) throws -> ImportedEvent {
    let (records, rejects) = try parseFeed(xml)
    #expect(rejects.isEmpty, "\(rejects)")
    guard records.count == 1, case .event(let event) = records[0] else { throw ImportError.unreadable("no event") }
    return event
}

private func onlyVenue(_ xml: String) throws -> ImportedVenue {
    let (records, rejects) = try parseFeed("<venues><venue><id>V1</id><name>Hall</name>\(xml)</venue></venues>")
    #expect(rejects.isEmpty, "\(rejects)")
    guard records.count == 1, case .venue(let venue) = records[0] else { throw ImportError.unreadable("no venue") }
    return venue
}

/// The single reject's reason for a feed body.
private func rejectReason(_ body: String) throws -> String? {
    let (records, rejects) = try parseFeed(body)
    #expect(records.isEmpty, "\(records)")
    return rejects.count == 1 ? rejects[0].reason : nil
}

@Suite("Event feed parser")
struct EventFeedParserTests {
    static let sample = """
        <categories>
          <category><id>10000</id><name>Music</name></category>
          <category>
            <id>10001</id>
            <name>Rock &amp; Pop</name>
            <parent_id>10000</parent_id>            <!-- optional -->
          </category>
        </categories>
        <artists>
          <artist>
            <id>735647</id>
            <name>Sigur Rós</name>
            <category_id>10001</category_id>
            <image_url>https://img.example/a/735647.jpg</image_url>
            <url>https://tickets.example/artist/735647</url>
          </artist>
        </artists>
        <venues>
          <venue>
            <id>KovZpZAFnIEA</id>
            <name>The Wiltern</name>
            <street>3790 Wilshire Blvd</street>
            <city>Los Angeles</city>
            <state>CA</state>
            <zip>90010</zip>
            <country>US</country>
            <latitude>34.0617</latitude>
            <longitude>-118.3085</longitude>
            <url>https://tickets.example/venue/KovZpZAFnIEA</url>
          </venue>
        </venues>
        <events>
          <event>
            <id>0B004E1E8E5A3F2C</id>
            <name>Sigur Rós — Live</name>
            <venue_id>KovZpZAFnIEA</venue_id>
            <category_id>10001</category_id>
            <performers>
              <artist_id>735647</artist_id>
              <artist_id>1011</artist_id>
            </performers>
            <date>2015-03-14</date>
            <time>20:00</time>
            <status>onsale</status>
            <onsale_date>2015-01-20T10:00:00Z</onsale_date>
            <url>https://tickets.example/event/0B004E1E8E5A3F2C</url>
            <min_price>45.00</min_price>
            <max_price>125.50</max_price>
            <currency>USD</currency>
          </event>
        </events>
        """

    @Test("the FORMATS.md example maps onto the import model, in document order")
    func sampleFeed() throws {
        let (records, rejects) = try parseFeed(Self.sample)
        #expect(rejects.isEmpty)
        #expect(
            records == [
                .category(ImportedCategory(id: "10000", name: "Music")),
                .category(ImportedCategory(id: "10001", name: "Rock & Pop", parentId: "10000")),
                .artist(
                    ImportedArtist(
                        id: "735647", name: "Sigur Rós", categoryId: "10001",
                        imageURL: "https://img.example/a/735647.jpg", url: "https://tickets.example/artist/735647")),
                .venue(
                    ImportedVenue(
                        id: "KovZpZAFnIEA", name: "The Wiltern", street: "3790 Wilshire Blvd", city: "Los Angeles",
                        state: "CA", postalCode: "90010", country: "US",
                        location: GeoPoint(latitude: 34.0617, longitude: -118.3085),
                        url: "https://tickets.example/venue/KovZpZAFnIEA")),
                .event(
                    ImportedEvent(
                        id: "0B004E1E8E5A3F2C", name: "Sigur Rós — Live", venueId: "KovZpZAFnIEA", categoryId: "10001",
                        performerIds: ["735647", "1011"],
                        start: .local(
                            date: CalendarDate("2015-03-14")!, time: LocalTime(hour: 20, minute: 0), timeZone: nil),
                        status: .onsale, onSaleDate: Date(timeIntervalSince1970: 1_421_748_000),
                        url: "https://tickets.example/event/0B004E1E8E5A3F2C", minPrice: Decimal(string: "45.00"),
                        maxPrice: Decimal(string: "125.50"), currency: "USD")),
            ])
    }

    @Test("the same feed read one byte at a time gives the same records")
    func tinyChunks() throws {
        let whole = try parseFeed(Self.sample)
        let bytewise = try parseFeed(Self.sample, chunkSize: 1)
        #expect(whole.records == bytewise.records && bytewise.records.count == 5)
    }

    @Test("reading the feed from a file")
    func fromFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString).xml")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data("<feed>\(Self.sample)</feed>".utf8).write(to: url)
        var count = 0
        try EventFeedParser(path: url.path, chunkSize: 7).parse({ _ in count += 1 }, reject: { Issue.record("\($0)") })
        #expect(count == 5)
        #expect(throws: ImportError.self) {
            try EventFeedParser(path: url.path + ".missing").parse({ _ in }, reject: { _ in })
        }
    }

    @Test("defaults: country US, currency USD, status scheduled, TBA time, no performers")
    func defaults() throws {
        let e = try onlyEvent(event())
        #expect(e.start == .local(date: CalendarDate("2015-03-14")!, time: nil, timeZone: nil))
        #expect(e.status == .scheduled && e.currency == "USD" && e.performerIds.isEmpty)
        #expect(e.minPrice == nil && e.maxPrice == nil && e.onSaleDate == nil && e.url == nil && e.categoryId == nil)
        #expect(try onlyEvent(event("E1", "<time>TBA</time>")).start == e.start)
        #expect(try onlyEvent(event("E1", "<time> </time>")).start == e.start)
        let v = try onlyVenue("")
        #expect(v.country == "US" && v.location == nil && v.category == nil)
    }

    @Test("values are trimmed, CDATA and character references decoded, names kept verbatim inside")
    func trimming() throws {
        let e = try onlyEvent(
            "<events><event>\n <id> E9 </id><name><![CDATA[ A & B <live> ]]></name><venue_id>\tV1\n</venue_id>"
                + "<date> 2015-03-14 </date><time> 20:30:15 </time><status> Cancelled </status>"
                + "<currency> eur </currency><min_price> 0 </min_price></event></events>")
        #expect(e.id == "E9" && e.name == "A & B <live>" && e.venueId == "V1")
        #expect(
            e.start
                == .local(
                    date: CalendarDate("2015-03-14")!, time: LocalTime(hour: 20, minute: 30, second: 15), timeZone: nil)
        )
        #expect(e.status == .cancelled && e.currency == "EUR" && e.minPrice == 0)
        #expect(try onlyVenue("<city>Reykjav&#xED;k</city><country>is</country>").city == "Reykjavík")
        #expect(try onlyVenue("<country>is</country>").country == "IS")
    }

    @Test("every status value", arguments: EventStatus.allCases)
    func statuses(_ status: EventStatus) throws {
        #expect(try onlyEvent(event("E1", "<status>\(status.rawValue)</status>")).status == status)
    }

    @Test("onsale_date: RFC 3339 with Z, offsets and fractions")
    func onSaleDates() throws {
        func date(_ text: String) throws -> Date? {
            try onlyEvent(event("E1", "<onsale_date>\(text)</onsale_date>")).onSaleDate
        }
        #expect(try date("2015-01-20T10:00:00Z") == Date(timeIntervalSince1970: 1_421_748_000))
        #expect(try date("2015-01-20T12:00:00+02:00") == Date(timeIntervalSince1970: 1_421_748_000))
        #expect(try date("2015-01-20t05:00:00.5-05:00") == Date(timeIntervalSince1970: 1_421_748_000.5))
        #expect(try date("2000-02-29T00:00:00Z") == Date(timeIntervalSince1970: 951_782_400))
    }

    @Test("records may reference ids defined later or never; duplicates are all emitted")
    func referencesAndDuplicates() throws {
        let (records, rejects) = try parseFeed(
            event("E1", "<performers><artist_id>A1</artist_id></performers>")
                + "<artists><artist><id>A1</id><name>First</name></artist>"
                + "<artist><id>A1</id><name>Second</name></artist></artists>"
                + "<venues><venue><id>V1</id><name>Hall</name></venue></venues>" + event("E1"))
        #expect(rejects.isEmpty)
        #expect(records.count == 5)
        #expect(records[1] == .artist(ImportedArtist(id: "A1", name: "First")))
        #expect(records[2] == .artist(ImportedArtist(id: "A1", name: "Second")))
    }

    @Test("unknown elements and attributes are ignored, even with children")
    func unknownElements() throws {
        let e = try onlyEvent(
            "<promotions><promo id='1'><event>x</event></promo></promotions>"
                + "<events extra='1'><note>hi</note><event kind='x'><id>E1</id><name>Show<b>bold</b></name>"
                + "<venue_id>V1</venue_id><date>2015-03-14</date><future><id>nested</id></future>"
                + "<performers><artist_id>A1</artist_id><guest>G</guest><artist_id>A2</artist_id></performers>"
                + "</event></events>")
        #expect(e.id == "E1" && e.name == "Show" && e.performerIds == ["A1", "A2"])
    }

    @Test("a rejected record is reported with line, ordinal and id, and the parse goes on")
    func rejectPosition() throws {
        let (records, rejects) = try parseFeed(
            "<events>\n<event><id>OK1</id><name>a</name><venue_id>V</venue_id><date>2015-01-01</date></event>\n"
                + "<event><id>0B004E1E8E5A3F2C0B004E1E8E5A3F2C</id><name>b</name><venue_id>V</venue_id>"
                + "<date>2015-02-30</date></event>\n"
                + "<event><id>OK2</id><name>c</name><venue_id>V</venue_id><date>2015-01-02</date></event></events>")
        #expect(records.count == 2)
        #expect(
            rejects == [
                ImportReject(
                    position: "line 5, event 2 (id 0B004E1E8E5A3F2C0B004E1E…)",
                    reason: "<date> is not a date (YYYY-MM-DD): \"2015-02-30\"")
            ])
        #expect(
            try parseFeed("<artists><artist><name>x</name></artist></artists>").rejects.first?.position
                == "line 3, artist 1")
    }

    @Test("rejects: missing required fields")
    func missing() throws {
        #expect(try rejectReason("<categories><category><name>x</name></category></categories>") == "missing <id>")
        #expect(try rejectReason("<categories><category><id>1</id></category></categories>") == "missing <name>")
        #expect(try rejectReason("<artists><artist><id>1</id><name> </name></artist></artists>") == "missing <name>")
        #expect(try rejectReason("<venues><venue><id>1</id></venue></venues>") == "missing <name>")
        #expect(
            try rejectReason("<events><event><id>1</id><name>n</name><date>2015-01-01</date></event></events>")
                == "missing <venue_id>")
        #expect(
            try rejectReason("<events><event><id>1</id><name>n</name><venue_id>V</venue_id></event></events>")
                == "missing <date>")
    }

    @Test("rejects: malformed event values")
    func badEventValues() throws {
        let cases: [(String, String)] = [
            ("<time>25:00</time>", "<time> is not a time"),
            ("<time>8pm</time>", "<time> is not a time"),
            ("<status>sold</status>", "unknown <status>"),
            ("<onsale_date>2015-01-20</onsale_date>", "<onsale_date> is not an RFC 3339 time"),
            ("<onsale_date>2015-01-20T10:00:00</onsale_date>", "<onsale_date> is not an RFC 3339 time"),
            ("<onsale_date>2015-02-29T10:00:00Z</onsale_date>", "<onsale_date> is not an RFC 3339 time"),
            ("<url>tickets.example/e/1</url>", "<url> is not an absolute http(s) URL"),
            ("<url>ftp://tickets.example/e/1</url>", "<url> is not an absolute http(s) URL"),
            ("<url>https://</url>", "<url> is not an absolute http(s) URL"),
            ("<url>https://a b/</url>", "<url> is not an absolute http(s) URL"),
            ("<min_price>-5</min_price>", "<min_price> is negative"),
            ("<max_price>ten</max_price>", "<max_price> is not a decimal amount"),
            ("<min_price>1e3</min_price>", "<min_price> is not a decimal amount"),
            ("<min_price>10.</min_price>", "<min_price> is not a decimal amount"),
            ("<min_price>50</min_price><max_price>40.5</max_price>", "<min_price> 50 is above <max_price> 40.5"),
            ("<currency>US</currency>", "<currency> is not a three-letter ISO 4217 code"),
            ("<currency>US$</currency>", "<currency> is not a three-letter ISO 4217 code"),
            (
                "<performers><artist_id>A</artist_id><artist_id> </artist_id></performers>",
                "empty <artist_id> (performer 2)"
            ),
            ("<name>again</name>", "<name> given twice"),
        ]
        for (extra, reason) in cases {
            let found = try rejectReason(event("E1", extra))
            #expect(found?.hasPrefix(reason) == true, "\(extra) → \(found ?? "accepted")")
        }
        #expect(try rejectReason(event("E1", date: "14/03/2015"))?.hasPrefix("<date> is not a date") == true)
        #expect(try onlyEvent(event("E1", "<min_price>40</min_price><max_price>40.00</max_price>")).maxPrice == 40)
    }

    @Test("rejects: malformed venue and artist values")
    func badVenueValues() throws {
        func venueReason(_ extra: String) throws -> String? {
            try rejectReason("<venues><venue><id>V1</id><name>Hall</name>\(extra)</venue></venues>")
        }
        #expect(try venueReason("<latitude>34.06</latitude>") == "<latitude> and <longitude> must be given together")
        #expect(try venueReason("<longitude>34.06</longitude>") == "<latitude> and <longitude> must be given together")
        #expect(
            try venueReason("<latitude>91</latitude><longitude>0</longitude>")
                == "<latitude>: Latitude must be between -90 and 90.")
        #expect(
            try venueReason("<latitude>0</latitude><longitude>-180.5</longitude>")
                == "<longitude>: Longitude must be between -180 and 180.")
        #expect(
            try venueReason("<latitude>nan</latitude><longitude>0</longitude>")?.hasPrefix("<latitude> is not a number")
                == true)
        #expect(
            try venueReason("<latitude>1e2</latitude><longitude>0</longitude>")?.hasPrefix("<latitude> is not a number")
                == true)
        #expect(try venueReason("<country>USA</country>")?.hasPrefix("<country> is not a two-letter") == true)
        #expect(
            try venueReason("<image_url>/img/1.jpg</image_url>")?.hasPrefix("<image_url> is not an absolute") == true)
        #expect(
            try onlyVenue("<latitude>-33.87</latitude><longitude>151.21</longitude>").location
                == GeoPoint(latitude: -33.87, longitude: 151.21))
        #expect(
            try rejectReason(
                "<artists><artist><id>1</id><name>n</name><url>javascript:alert(1)</url></artist></artists>")?
                .hasPrefix("<url> is not an absolute http(s) URL") == true)
        #expect(
            try rejectReason(
                "<artists><artist><id>\(String(repeating: "9", count: 300))</id><name>n</name></artist></artists>")
                == "<id> longer than 255 bytes")
    }

    @Test("an unknown entity rejects just its record, never expanded")
    func unknownEntityRejectsRecord() throws {
        let (records, rejects) = try parseFeed(
            "<artists><artist><id>1</id><name>Evil &xxe;</name></artist>"
                + "<artist><id>2</id><name>Fine</name></artist>"
                + "<artist ref='&ent;'><id>3</id><name>Attr</name></artist></artists>")
        #expect(records == [.artist(ImportedArtist(id: "2", name: "Fine"))])
        #expect(rejects.map(\.reason) == ["unknown entity &xxe;", "unknown entity &ent;"])
        #expect(rejects.map(\.position) == ["line 3, artist 1 (id 1)", "line 3, artist 3 (id 3)"])
    }

    @Test("whole-document problems throw")
    func documentErrors() {
        #expect(throws: ImportError.self) {
            try EventFeedParser(bytes: Array("<other/>".utf8)).parse({ _ in }, reject: { _ in })
        }
        #expect(throws: ImportError.self) { try parseFeed("<events><event></events>") }
        #expect(throws: ImportError.self) {
            try EventFeedParser(bytes: Array("<!DOCTYPE feed [<!ENTITY x 'y'>]><feed/>".utf8)).parse(
                { _ in }, reject: { _ in })
        }
        // A second root after a good record: the record was already emitted, then the document fails.
        var emitted = 0
        #expect(throws: ImportError.self) {
            try EventFeedParser(bytes: Array(("<feed>" + event() + "</feed><feed/>").utf8))
                .parse({ _ in emitted += 1 }, reject: { _ in })
        }
        #expect(emitted == 1)
    }
}

@Suite("Event feed: events passed by their bytes")
struct EventFeedKnownBytesTests {
    /// A venue, then three events on lines 5-8 (the second one on two lines), then a bad record on
    /// line 9. Events are passed only after venues.
    private let feed = """
        <?xml version="1.0" encoding="UTF-8"?>
        <feed>
          <venues><venue><id>V1</id><name>Hall</name></venue></venues>
          <events>
            <event><id>E1</id><name>One</name><venue_id>V1</venue_id><date>2031-03-14</date></event>
            <event><id>E2</id><name>Two</name><venue_id>V1</venue_id>
              <date>2031-03-15</date></event>
            <event><id>E3</id><name>Three</name><venue_id>V1</venue_id><date>2031-03-16</date></event>
            <event><id>E4</id><name>Bad</name><venue_id>V1</venue_id><date>soon</date></event>
          </events>
        </feed>
        """

    /// The events (read or passed) and rejects of `xml` (the feed above by default).
    private func parse(
        _ known: KnownRecordHashes, chunkSize: Int = XMLPullParser.defaultChunkSize, xml: String? = nil
    ) throws -> (
        [ImportRecord], [ImportReject]
    ) {
        var records: [ImportRecord] = []
        var rejects: [ImportReject] = []
        try EventFeedParser(bytes: Array((xml ?? feed).utf8), chunkSize: chunkSize).parse(
            {
                if case .venue = $0 { return }
                records.append($0)
            }, reject: { rejects.append($0) }, known: known)
        return (records, rejects)
    }

    @Test("each event carries its bytes' hash; published hashes pass those events unread, and positions stay right")
    func passed() throws {
        let (records, rejects) = try parse(.none())
        let hashes = records.compactMap { if case .event(let event) = $0 { event.sourceHash } else { nil } }
        #expect(hashes.count == 3)
        let second = "<event><id>E2</id><name>Two</name><venue_id>V1</venue_id>\n      <date>2031-03-15</date></event>"
        #expect(hashes[1] == ByteHash.of(Array(second.utf8)))
        #expect(rejects.map(\.position) == ["line 9, event 4 (id E4)"])

        // E1 and E2 are known: passed unread with their bytes; E3 is read; the reject's line and
        // ordinal are those of a whole parse.
        let known = KnownRecordHashes()
        known.publish([hashes[0], hashes[1]], part: 0)
        let (again, rejectsAgain) = try parse(known)
        guard again.count == 3, case .known(let one) = again[0], case .known(let two) = again[1],
            case .event(let three) = again[2]
        else {
            Issue.record("\(again)")
            return
        }
        #expect([one.hash, two.hash] == [hashes[0], hashes[1]])
        #expect(String(decoding: two.bytes, as: UTF8.self) == second)
        #expect(three.id == "E3" && three.sourceHash == hashes[2])
        #expect(rejectsAgain.map(\.position) == ["line 9, event 4 (id E4)"])
        // In small reads an event's bytes may not all be in the buffer: then it is read whole.
        for chunkSize in [64, 7] {
            let (small, rejectsSmall) = try parse(known, chunkSize: chunkSize)
            let ids = small.map { record -> String in
                switch record {
                case .known(let known): known.hash == hashes[0] ? "E1" : known.hash == hashes[1] ? "E2" : "?"
                case .event(let event): event.id
                default: "?"
                }
            }
            #expect(ids == ["E1", "E2", "E3"], "chunk \(chunkSize)")
            #expect(rejectsSmall.map(\.position) == ["line 9, event 4 (id E4)"], "chunk \(chunkSize)")
        }

        // Before any venue, events are read whole.
        let (venueless, _) = try parse(
            known,
            xml: feed.replacingOccurrences(of: "<venues>", with: "<artists>")
                .replacingOccurrences(of: "</venues>", with: "</artists>"))
        #expect(venueless.allSatisfy { if case .event = $0 { true } else { false } })

        // Bytes passed unread parse, on their own, to the event they were, with the same hash.
        var alone: [ImportRecord] = []
        try EventFeedParser(bytes: Array(("<feed><events>" + second + "</events></feed>").utf8)).parse(
            { alone.append($0) }, reject: { _ in }, known: .none())
        #expect(alone == [records[1]])
    }

    @Test("the bytes' hash never changes (stored hashes outlive versions; the values come from a Python rendition)")
    func stableHash() {
        #expect(ByteHash.of(Array("<event><id>E1</id></event>".utf8)) == 6_534_704_691_037_907_393)
        #expect(ByteHash.of([]) == -7_160_610_219_483_255_062)
        #expect(ByteHash.of(Array("<event><id>E2</id></event>".utf8)) != 6_534_704_691_037_907_393)
    }

    @Test("without hashes asked for, events carry none; without any published, nothing is passed")
    func notAsked() throws {
        var records: [ImportRecord] = []
        try EventFeedParser(bytes: Array(feed.utf8)).parse(
            {
                if case .venue = $0 { return }
                records.append($0)
            }, reject: { _ in })
        #expect(records.count == 3)
        #expect(records.allSatisfy { if case .event(let event) = $0 { event.sourceHash == nil } else { false } })
    }
}
