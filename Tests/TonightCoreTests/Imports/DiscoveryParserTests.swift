import Foundation
import Testing
import TonightCore

@Suite("Discovery JSON parser")
struct DiscoveryParserTests {
    private func parse(_ text: String) throws -> (records: [ImportRecord], rejects: [ImportReject]) {
        var records: [ImportRecord] = []
        var rejects: [ImportReject] = []
        try DiscoveryParser(text: text).parse({ records.append($0) }, reject: { rejects.append($0) })
        return (records, rejects)
    }

    private func events(_ records: [ImportRecord]) -> [ImportedEvent] {
        records.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    /// A Discovery API v2 page around `events` (JSON objects).
    private func page(_ events: String...) -> String {
        page(list: events)
    }

    private func page(list events: [String]) -> String {
        """
        {"_links": {"self": {"href": "/discovery/v2/events.json?page=0"}},
         "_embedded": {"events": [\(events.joined(separator: ","))]},
         "page": {"size": 20, "totalElements": \(events.count), "totalPages": 1, "number": 0}}
        """
    }

    private func feed(_ events: String...) -> String {
        #"{"events": [\#(events.joined(separator: ","))]}"#
    }

    private let apiEvent = """
        {"name": "Sigur Rós — Live", "type": "event", "id": "G5vYZ9aBc", "test": false,
         "url": "https://www.ticketmaster.com/event/0B004E1E8E5A3F2C", "locale": "en-us", "info": "Doors at 7pm.",
         "images": [{"ratio": "16_9", "url": "https://s1.ticketm.net/e.jpg", "width": 100, "height": 56}],
         "sales": {"public": {"startDateTime": "2025-01-20T15:00:00Z", "startTBD": false, "startTBA": false}},
         "dates": {"start": {"localDate": "2025-03-14", "localTime": "20:00:00", "dateTime": "2025-03-15T03:00:00Z",
                             "dateTBD": false, "dateTBA": false, "timeTBA": false, "noSpecificTime": false},
                   "timezone": "America/Los_Angeles", "status": {"code": "onsale"}, "spanMultipleDays": false},
         "classifications": [
            {"primary": false, "segment": {"id": "KZFzniwnSyZfZ7v7na", "name": "Arts & Theatre"}},
            {"primary": true, "segment": {"id": "KZFzniwnSyZfZ7v7nJ", "name": "Music"},
             "genre": {"id": "KnvZfZ7vAeA", "name": "Rock"}, "subGenre": {"id": "KZazBEonSMnZfZ7v6F1", "name": "Pop"},
             "type": {"id": "KZAyXgnZfZ7v7nI", "name": "Undefined"}, "family": false}],
         "priceRanges": [{"type": "standard", "currency": "USD", "min": 45.0, "max": 125.5}],
         "_embedded": {
            "venues": [{"name": "The Wiltern", "type": "venue", "id": "KovZpZAFnIEA", "postalCode": "90010",
                        "timezone": "America/Los_Angeles", "city": {"name": "Los Angeles"},
                        "state": {"name": "California", "stateCode": "CA"},
                        "country": {"name": "United States Of America", "countryCode": "US"},
                        "address": {"line1": "3790 Wilshire Blvd"},
                        "location": {"longitude": "-118.3085", "latitude": "34.0617"}}],
            "attractions": [{"name": "Sigur Rós", "type": "attraction", "id": "K8vZ9171ob7",
                             "url": "https://www.ticketmaster.com/sigur-ros-tickets/artist/735647",
                             "images": [{"ratio": "3_2", "url": "https://s1.ticketm.net/a.jpg"},
                                        {"ratio": "16_9", "url": "https://s1.ticketm.net/b.jpg"}]}]}}
        """

    private let feedEvent = """
        {"eventId": "G5vYZ9aBc", "eventName": "Sigur Rós — Live", "eventStatus": "onsale",
         "primaryEventUrl": "https://www.ticketmaster.com/event/0B004E1E8E5A3F2C", "eventInfo": "Doors at 7pm.",
         "eventStartLocalDate": "2025-03-14", "eventStartLocalTime": "20:00:00",
         "eventStartDateTime": "2025-03-15T03:00:00Z", "onsaleStartDateTime": "2025-01-20T15:00:00Z",
         "minPrice": "45.00", "maxPrice": "125.50", "currency": "USD", "transactable": true,
         "classificationSegment": "Music", "classificationSegmentId": "KZFzniwnSyZfZ7v7nJ",
         "classificationGenre": "Rock", "classificationGenreId": "KnvZfZ7vAeA",
         "classificationSubGenre": "Pop", "classificationSubGenreId": "KZazBEonSMnZfZ7v6F1",
         "venue": {"venueId": "KovZpZAFnIEA", "venueName": "The Wiltern", "venueStreet": "3790 Wilshire Blvd",
                   "venueCity": "Los Angeles", "venueStateCode": "CA", "venueCountryCode": "us",
                   "venueZipCode": "90010", "venueLatitude": 34.0617, "venueLongitude": -118.3085,
                   "venueTimezone": "America/Los_Angeles"},
         "attractions": [{"attraction": {"attractionId": "K8vZ9171ob7", "attractionName": "Sigur Rós",
                          "attractionUrl": "https://www.ticketmaster.com/sigur-ros-tickets/artist/735647",
                          "attractionImageUrl": "https://s1.ticketm.net/a.jpg"}}]}
        """

    @Test("an API page and a feed file of the same event give the same records")
    func bothShapes() throws {
        let api = try parse(page(apiEvent))
        let flat = try parse(feed(feedEvent))
        #expect(api.rejects.isEmpty)
        #expect(flat.rejects.isEmpty)
        #expect(api.records == flat.records)

        let music = ImportedCategory(id: "KZFzniwnSyZfZ7v7nJ", name: "Music")
        let rock = ImportedCategory(id: "KnvZfZ7vAeA", name: "Rock", parentId: music.id)
        let pop = ImportedCategory(id: "KZazBEonSMnZfZ7v6F1", name: "Pop", parentId: rock.id)
        let artist = ImportedArtist(
            id: "K8vZ9171ob7", name: "Sigur Rós", imageURL: "https://s1.ticketm.net/a.jpg",
            url: "https://www.ticketmaster.com/sigur-ros-tickets/artist/735647")
        let venue = ImportedVenue(
            id: "KovZpZAFnIEA", name: "The Wiltern", street: "3790 Wilshire Blvd", city: "Los Angeles", state: "CA",
            postalCode: "90010", country: "US", location: GeoPoint(latitude: 34.0617, longitude: -118.3085))
        let event = ImportedEvent(
            id: "G5vYZ9aBc", name: "Sigur Rós — Live", venueId: venue.id, venue: venue, categoryId: pop.id,
            categoryNames: ["Music", "Rock", "Pop"], performerIds: [artist.id], performers: [artist],
            start: .local(
                date: try #require(CalendarDate("2025-03-14")), time: LocalTime(hour: 20, minute: 0),
                timeZone: "America/Los_Angeles"),
            status: .onsale, onSaleDate: Date(timeIntervalSince1970: 1_737_385_200),
            url: "https://www.ticketmaster.com/event/0B004E1E8E5A3F2C", description: "Doors at 7pm.",
            minPrice: Decimal(string: "45"), maxPrice: Decimal(string: "125.5"), currency: "USD")
        #expect(api.records == [.category(music), .category(rock), .category(pop), .artist(artist), .event(event)])
    }

    @Test("numbers as strings or numbers; coordinates and prices keep their decimal value")
    func stringsAndNumbers() throws {
        let api =
            apiEvent
            .replacingOccurrences(
                of: #""longitude": "-118.3085", "latitude": "34.0617""#,
                with: #""longitude": -118.3085, "latitude": 34.0617"#
            )
            .replacingOccurrences(of: #""min": 45.0, "max": 125.5"#, with: #""min": "19.99", "max": 250"#)
        let flat =
            feedEvent
            .replacingOccurrences(
                of: #""venueLatitude": 34.0617, "venueLongitude": -118.3085"#,
                with: #""venueLatitude": "34.0617", "venueLongitude": "-118.3085""#
            )
            .replacingOccurrences(
                of: #""minPrice": "45.00", "maxPrice": "125.50""#,
                with: #""minPrice": 19.99, "maxPrice": "250""#)
        let fromAPI = try #require(events(try parse(page(api)).records).first)
        let fromFeed = try #require(events(try parse(feed(flat)).records).first)
        #expect(fromAPI == fromFeed)
        #expect(fromAPI.venue?.location == GeoPoint(latitude: 34.0617, longitude: -118.3085))
        #expect(fromFeed.minPrice == Decimal(string: "19.99"))
        #expect(fromFeed.maxPrice == 250)
    }

    @Test("TBA times, the venue's zone, UTC-only starts, status codes, price ranges, undefined genres")
    func variants() throws {
        let text = page(
            #"""
            {"id": "a", "name": "TBA", "dates": {"start": {"localDate": "2025-05-01", "localTime": "19:30:00",
             "timeTBA": true}, "status": {"code": "canceled"}},
             "_embedded": {"venues": [{"id": "v", "name": "V", "timezone": "Europe/Berlin"}]}}
            """#,
            #"""
            {"id": "b", "name": "No specific time", "dates": {"start": {"localDate": "2025-05-02",
             "noSpecificTime": true}, "timezone": "Europe/London", "status": {"code": "Postponed"}},
             "classifications": [{"segment": {"id": "s", "name": "Sports"}, "genre": {"id": "u", "name": "Undefined"},
             "subGenre": {"id": "x", "name": "Ghost"}}]}
            """#,
            #"""
            {"id": "c", "name": "UTC only", "dates": {"start": {"dateTime": "2025-05-03T18:00:00.000Z"},
             "status": {"code": "rescheduled"}},
             "priceRanges": [{"currency": "eur", "min": 10, "max": 20}, {"currency": "EUR", "min": 5, "max": 15},
                             {"currency": "USD", "min": 1, "max": 500}],
             "sales": {"public": {"startDateTime": "1900-01-01T18:00:00Z"}}}
            """#,
            #"""
            {"id": "d", "name": "Offsale", "dates": {"start": {"localDate": "2025-05-04", "localTime": "21:00"},
             "status": {"code": "offsale"}, "end": {"localDate": "2025-05-05", "localTime": "02:00:00"}},
             "classifications": [{"segment": {"id": "s", "name": "Sports"}}],
             "sales": {"public": {"startDateTime": "2025-01-20T10:00:00+01:00", "startTBD": false}}}
            """#)
        let (records, rejects) = try parse(text)
        #expect(rejects.isEmpty)
        let list = events(records)
        #expect(list.map(\.status) == [.cancelled, .postponed, .rescheduled, .offsale])
        #expect(
            list[0].start
                == .local(date: try #require(CalendarDate("2025-05-01")), time: nil, timeZone: "Europe/Berlin"))
        #expect(
            list[1].start
                == .local(date: try #require(CalendarDate("2025-05-02")), time: nil, timeZone: "Europe/London"))
        #expect(list[1].categoryId == "s")
        #expect(list[1].categoryNames == ["Sports"])
        #expect(list[2].start == .instant(Date(timeIntervalSince1970: 1_746_295_200)))
        #expect(list[2].minPrice == 5)
        #expect(list[2].maxPrice == 20)
        #expect(list[2].currency == "EUR")
        #expect(list[2].onSaleDate == nil)
        #expect(
            list[3].end
                == .local(
                    date: try #require(CalendarDate("2025-05-05")), time: LocalTime(hour: 2, minute: 0), timeZone: nil))
        #expect(list[3].onSaleDate == Date(timeIntervalSince1970: 1_737_363_600))
        // The Sports category is emitted once for the two events that use it.
        let categories = records.compactMap { if case .category(let category) = $0 { category } else { nil } }
        #expect(categories == [ImportedCategory(id: "s", name: "Sports")])
    }

    @Test("bad events are rejected with their position; the rest go on")
    func rejects() throws {
        /// An event with id, name and date, plus `extra` members.
        func dated(_ extra: String = "", dates: String = "") -> String {
            #"{"id": "x", "name": "N", "dates": {"start": {"localDate": "2025-05-01"}\#(dates)}\#(extra)}"#
        }
        func located(_ latitude: String) -> String {
            dated(#", "_embedded": {"venues": [{"id": "v", "name": "V", "location": {"latitude": \#(latitude)}}]}"#)
        }
        let cases: [(json: String, reason: String)] = [
            (#"{"name": "No id", "dates": {"start": {"localDate": "2025-05-01"}}}"#, "missing id"),
            (#"{"id": "x", "dates": {"start": {"localDate": "2025-05-01"}}}"#, "missing name"),
            (#"{"id": "x", "name": "N", "dates": {"start": {"dateTBD": true}}}"#, "missing start date"),
            (
                #"{"id": "x", "name": "N", "dates": {"start": {"localDate": "2025-02-30"}}}"#,
                "bad start date \"2025-02-30\""
            ),
            (
                dated(dates: #", "end": {"localDate": "2025-05-01", "localTime": "25:00:00"}"#),
                "bad end time \"25:00:00\""
            ),
            (located(#""95", "longitude": "0""#), "bad coordinates \"95\", \"0\""),
            (located(#""abc", "longitude": 0"#), "bad coordinates \"abc\", \"0\""),
            (dated(#", "priceRanges": [{"min": "12,50"}]"#), "bad price \"12,50\""),
            (dated(#", "priceRanges": [{"min": -1}]"#), "bad price \"-1\""),
            (dated(#", "priceRanges": [{"min": 9, "max": 3}]"#), "bad price: minimum 9 above maximum 3"),
            (dated(dates: #", "status": {"code": "soldout"}"#), "unknown status \"soldout\""),
            (dated(#", "url": {"en": "N"}"#), "url: expected a string or number"),
            (dated(dates: #", "timezone": "Mars/Base""#), "unknown time zone \"Mars/Base\""),
            (dated(#", "_embedded": {"attractions": [{"name": "A"}]}"#), "attraction 1 has no id"),
            (dated(#", "_embedded": {"venues": [{"id": "v"}]}"#), "venue has no name"),
        ]
        let good = #"{"id": "ok", "name": "Fine", "dates": {"start": {"localDate": "2025-05-01"}}}"#
        let (records, rejects) = try parse(page(list: [good] + cases.map(\.json) + ["null"]))
        #expect(events(records).map(\.id) == ["ok"])
        #expect(rejects.map(\.position) == (1...cases.count + 1).map { "_embedded.events[\($0)]" })
        for (reject, expected) in zip(rejects, cases) {
            #expect(reject.reason == expected.reason)
        }
        #expect(rejects.last?.reason.contains("object") == true)

        let flat = try parse(
            feed(
                #"{"eventId": "f", "eventName": "F", "eventStartLocalDate": "2025-05-01", "minPrice": "free"}"#,
                #"""
                {"eventId": "g", "eventName": "G", "eventStartLocalDate": "2025-05-01",
                 "venue": {"venueId": "v", "venueName": "V", "venueLatitude": 12.5}}
                """#,
                #"{"eventId": "h", "eventName": "H", "eventStartLocalDate": "2025-05-01", "eventStatus": "cancelled"}"#)
        )
        #expect(flat.rejects.map(\.position) == ["events[0]", "events[1]"])
        #expect(flat.rejects.map(\.reason) == ["bad price \"free\"", "bad coordinates \"12.5\", \"\""])
        #expect(events(flat.records).map(\.status) == [.cancelled])
    }

    @Test("files that are not JSON or neither shape are malformed; an empty API page is fine")
    func malformed() throws {
        for text in ["", "<events/>", "[1, 2]", #"{"foo": 1}"#, #"{"_embedded": {"events": 3}}"#, #"{"events": {}}"#] {
            #expect(throws: ImportError.self, "\(text)") { try parse(text) }
        }
        do {
            _ = try parse("{\"events\": [")
            Issue.record("expected a throw")
        } catch let error as ImportError {
            #expect(error == .malformed(position: "file", reason: "not valid JSON"))
        }
        let empty = try parse(
            #"{"_links": {}, "page": {"size": 20, "totalElements": 0, "totalPages": 0, "number": 0}}"#)
        #expect(empty.records.isEmpty)
        #expect(empty.rejects.isEmpty)
    }

    @Test("reads files, refusing ones over the size cap")
    func files() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("discovery-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(feed(feedEvent).utf8).write(to: url)
        var count = 0
        try DiscoveryParser(path: url.path).parse({ _ in count += 1 }, reject: { Issue.record("\($0)") })
        #expect(count == 5)
        #expect(throws: ImportError.self) {
            try DiscoveryParser(path: url.path, maxBytes: 100).parse({ _ in }, reject: { _ in })
        }
        #expect(throws: ImportError.self) {
            try DiscoveryParser(path: url.path + ".missing").parse({ _ in }, reject: { _ in })
        }
    }
}
