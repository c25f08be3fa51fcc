import Foundation
import Testing
import TonightCore

@Suite("iCalendar parser")
struct ICalendarParserTests {
    private func parse(_ text: String) throws -> (events: [ImportedEvent], rejects: [ImportReject]) {
        var events: [ImportedEvent] = []
        var rejects: [ImportReject] = []
        try ICalendarParser(text: text).parse(
            { record in
                guard case .event(let event) = record else {
                    Issue.record("unexpected \(record)")
                    return
                }
                events.append(event)
            }, reject: { rejects.append($0) })
        return (events, rejects)
    }

    /// A calendar around `body`, with CRLF line ends.
    private func calendar(_ body: String) -> String {
        ("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Test//EN\n" + body + "END:VCALENDAR\n")
            .replacingOccurrences(of: "\n", with: "\r\n")
    }

    private func date(_ text: String) throws -> CalendarDate { try #require(CalendarDate(text)) }
    private func time(_ text: String) throws -> LocalTime { try #require(LocalTime(text)) }
    private func instant(_ text: String) throws -> Date { try #require(ISO8601DateFormatter().date(from: text)) }

    @Test("a full event: folded lines, escaped text, categories, status, URL, location and GEO")
    func fullEvent() throws {
        let text = calendar(
            """
            BEGIN:VEVENT
            UID:abc-123@example.com
            SUMMARY:Sigur Rós\\, live\\; at last
            DTSTART;TZID="Europe/Berlin":20250301T200000
            DTEND;TZID=Europe/Berlin:20250301T223000
            DESCRIPTION:First line\\nSecond line with a long text that is fol
             ded here and\tagain
            \there.
            CATEGORIES:Music,Post-Rock
            CATEGORIES:Concert\\, Live,Music
            STATUS:CANCELLED
            URL:https://example.com/e/1?a=1&b=2
            LOCATION;ALTREP="http://maps.example/x:y":Tempodrom\\, Möckernstraße 10\\, 10963 Berlin
            GEO:52.5016;13.3806
            BEGIN:VALARM
            ACTION:DISPLAY
            DESCRIPTION:Reminder text must not win
            TRIGGER:-PT15M
            END:VALARM
            END:VEVENT

            """)
        let (events, rejects) = try parse(text)
        #expect(rejects.isEmpty)
        let event = try #require(events.first)
        #expect(event.id == "abc-123@example.com")
        #expect(event.name == "Sigur Rós, live; at last")
        #expect(event.start == .local(date: try date("2025-03-01"), time: try time("20:00"), timeZone: "Europe/Berlin"))
        #expect(event.end == .local(date: try date("2025-03-01"), time: try time("22:30"), timeZone: "Europe/Berlin"))
        #expect(event.description == "First line\nSecond line with a long text that is folded here and\tagainhere.")
        #expect(event.categoryNames == ["Music", "Post-Rock", "Concert, Live"])
        #expect(event.status == .cancelled)
        #expect(event.url == "https://example.com/e/1?a=1&b=2")
        let venue = try #require(event.venue)
        #expect(venue.name == "Tempodrom")
        #expect(venue.street == "Möckernstraße 10, 10963 Berlin")
        #expect(venue.id == "tempodrom-mockernstrasse-10-10963-berlin")
        #expect(venue.location == GeoPoint(latitude: 52.5016, longitude: 13.3806))
        #expect(event.venueId == venue.id)
    }

    @Test("all-day, UTC, floating and DURATION ends")
    func times() throws {
        let text = calendar(
            """
            BEGIN:VEVENT
            UID:allday
            SUMMARY:Festival
            DTSTART;VALUE=DATE:20250614
            DURATION:P2D
            END:VEVENT
            BEGIN:VEVENT
            UID:allday-end
            SUMMARY:Fair
            DTSTART;VALUE=DATE:20250228
            DTEND;VALUE=DATE:20250301
            END:VEVENT
            BEGIN:VEVENT
            UID:utc
            SUMMARY:Stream
            DTSTART:20250301T190000Z
            DURATION:PT2H30M
            END:VEVENT
            BEGIN:VEVENT
            UID:floating
            SUMMARY:Open mic
            DTSTART:20251231T230000
            DURATION:PT1H30M
            STATUS:CONFIRMED
            END:VEVENT
            BEGIN:VEVENT
            UID:weeks
            SUMMARY:Exhibition
            DTSTART:20250101T100000Z
            DURATION:P1W
            END:VEVENT

            """)
        let (events, rejects) = try parse(text)
        #expect(rejects.isEmpty)
        #expect(events.count == 5)
        #expect(events[0].start == .local(date: try date("2025-06-14"), time: nil, timeZone: nil))
        #expect(events[0].end == .local(date: try date("2025-06-16"), time: nil, timeZone: nil))
        #expect(events[0].venue == nil)
        #expect(events[1].end == .local(date: try date("2025-03-01"), time: nil, timeZone: nil))
        #expect(events[2].start == .instant(try instant("2025-03-01T19:00:00Z")))
        #expect(events[2].end == .instant(try instant("2025-03-01T21:30:00Z")))
        #expect(events[3].start == .local(date: try date("2025-12-31"), time: try time("23:00"), timeZone: nil))
        #expect(events[3].end == .local(date: try date("2026-01-01"), time: try time("00:30"), timeZone: nil))
        #expect(events[3].status == .scheduled)
        #expect(events[4].end == .instant(try instant("2025-01-08T10:00:00Z")))
    }

    @Test("DST zones: hours are elapsed time, days are calendar days")
    func daylightSaving() throws {
        let text = calendar(
            """
            BEGIN:VTIMEZONE
            TZID:Europe/Berlin
            BEGIN:DAYLIGHT
            DTSTART:19700329T020000
            TZOFFSETTO:+0200
            END:DAYLIGHT
            END:VTIMEZONE
            BEGIN:VEVENT
            UID:night
            SUMMARY:Night across the spring change
            DTSTART;TZID=Europe/Berlin:20250330T013000
            DURATION:PT2H
            END:VEVENT
            BEGIN:VEVENT
            UID:day
            SUMMARY:Day across the spring change
            DTSTART;TZID=Europe/Berlin:20250329T200000
            DURATION:P1D
            END:VEVENT
            BEGIN:VEVENT
            UID:autumn
            SUMMARY:Night across the autumn change
            DTSTART;TZID=America/New_York:20251102T003000
            DURATION:PT3H
            END:VEVENT

            """)
        let (events, rejects) = try parse(text)
        #expect(rejects.isEmpty)
        #expect(events.count == 3)
        #expect(
            events[0].end == .local(date: try date("2025-03-30"), time: try time("04:30"), timeZone: "Europe/Berlin"))
        #expect(
            events[1].end == .local(date: try date("2025-03-30"), time: try time("20:00"), timeZone: "Europe/Berlin"))
        #expect(
            events[2].end == .local(date: try date("2025-11-02"), time: try time("02:30"), timeZone: "America/New_York")
        )
    }

    @Test("TZID: Windows names, vendor prefixes, unknown zones rejected")
    func zones() throws {
        let text = calendar(
            """
            BEGIN:VEVENT
            UID:win
            SUMMARY:Outlook
            DTSTART;TZID=Pacific Standard Time:20250301T200000
            END:VEVENT
            BEGIN:VEVENT
            UID:moz
            SUMMARY:Sunbird
            DTSTART;TZID=/mozilla.org/20050126_1/Europe/Berlin:20250301T200000
            END:VEVENT
            BEGIN:VEVENT
            UID:bad
            SUMMARY:Nowhere
            DTSTART;TZID=Mars/Olympus_Mons:20250301T200000
            END:VEVENT

            """)
        let (events, rejects) = try parse(text)
        #expect(
            events.map(\.start) == [
                .local(date: try date("2025-03-01"), time: try time("20:00"), timeZone: "America/Los_Angeles"),
                .local(date: try date("2025-03-01"), time: try time("20:00"), timeZone: "Europe/Berlin"),
            ])
        #expect(rejects == [ImportReject(position: "line 14", reason: "unknown time zone \"Mars/Olympus_Mons\"")])
    }

    @Test("recurring events import their first occurrence; overrides get their own id")
    func recurrence() throws {
        let text = calendar(
            """
            BEGIN:VEVENT
            UID:weekly
            SUMMARY:Jam session
            DTSTART:20250106T190000Z
            RRULE:FREQ=WEEKLY;COUNT=10
            END:VEVENT
            BEGIN:VEVENT
            UID:weekly
            RECURRENCE-ID:20250113T190000Z
            SUMMARY:Jam session (moved)
            DTSTART:20250114T190000Z
            END:VEVENT

            """)
        let (events, rejects) = try parse(text)
        #expect(rejects.isEmpty)
        #expect(events.map(\.id) == ["weekly", "weekly#20250113T190000Z"])
        #expect(events[0].start == .instant(try instant("2025-01-06T19:00:00Z")))
    }

    @Test("bad events are rejected at their BEGIN:VEVENT line and the parse goes on")
    func rejects() throws {
        let text = calendar(
            """
            BEGIN:VEVENT
            SUMMARY:No uid
            DTSTART:20250301T200000Z
            END:VEVENT
            BEGIN:VEVENT
            UID:no-summary
            DTSTART:20250301T200000Z
            END:VEVENT
            BEGIN:VEVENT
            UID:no-start
            SUMMARY:x
            END:VEVENT
            BEGIN:VEVENT
            UID:bad-start
            SUMMARY:x
            DTSTART:20250230T200000Z
            END:VEVENT
            BEGIN:VEVENT
            UID:bad-geo
            SUMMARY:x
            DTSTART:20250301T200000Z
            LOCATION:Somewhere
            GEO:95.0;13.0
            END:VEVENT
            BEGIN:VEVENT
            UID:bad-duration
            SUMMARY:x
            DTSTART:20250301T200000Z
            DURATION:-PT1H
            END:VEVENT
            BEGIN:VEVENT
            UID:backwards
            SUMMARY:x
            DTSTART:20250301T200000Z
            DTEND:20250301T190000Z
            END:VEVENT
            BEGIN:VEVENT
            UID:broken-line
            SUMMARY:x
            DTSTART:20250301T200000Z
            this line has no colon
            END:VEVENT
            BEGIN:VEVENT
            UID:ok
            SUMMARY:Fine
            DTSTART:20250301T200000Z
            LOCATION:Club
            END:VEVENT

            """)
        let (events, rejects) = try parse(text)
        #expect(events.map(\.id) == ["ok"])
        #expect(events.first?.venue == ImportedVenue(id: "club", name: "Club"))
        #expect(rejects.map(\.position) == [4, 8, 12, 16, 21, 28, 34, 40].map { "line \($0)" })
        #expect(
            rejects.map(\.reason) == [
                "missing UID", "missing SUMMARY", "missing DTSTART", "bad DTSTART \"20250230T200000Z\"",
                "bad GEO \"95.0;13.0\": expected latitude;longitude in range", "bad DURATION \"-PT1H\"",
                "event ends before it starts", "malformed content line 44",
            ])
    }

    @Test("VTODO and other components are skipped; LF-only files work")
    func otherComponents() throws {
        let text = """
            BEGIN:VCALENDAR
            BEGIN:VTODO
            UID:todo
            SUMMARY:Not an event
            DTSTART:20250301T200000Z
            END:VTODO
            BEGIN:VEVENT
            UID:e
            SUMMARY:Event
            DTSTART:20250301
            END:VEVENT
            END:VCALENDAR
            """
        let (events, rejects) = try parse(text)
        #expect(rejects.isEmpty)
        #expect(events.map(\.id) == ["e"])
    }

    @Test("whole-file problems throw malformed")
    func malformed() throws {
        let cases = [
            "",
            "hello world\n",
            "BEGIN:VEVENT\nEND:VEVENT\n",
            "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:x\nEND:VCALENDAR\n",
            "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:x\nSUMMARY:y\nDTSTART:20250301\nEND:VEVENT\n",
        ]
        for text in cases {
            #expect(throws: ImportError.self, "\(text)") { try parse(text) }
        }
        #expect(throws: ImportError.unreadable("cannot open /nonexistent/x.ics")) {
            try ICalendarParser(path: "/nonexistent/x.ics").parse({ _ in }, reject: { _ in })
        }
    }

    @Test("reads a file from disk")
    func file() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cal-\(UUID().uuidString).ics")
        defer { try? FileManager.default.removeItem(at: url) }
        var body = ""
        for index in 0..<2_000 {
            body += "BEGIN:VEVENT\nUID:e\(index)\nSUMMARY:Event \(index) with a summary long enough to be fol\n"
            body += " ded\nDTSTART:20250301T200000Z\nEND:VEVENT\n"
        }
        try Data(calendar(body).utf8).write(to: url)
        var count = 0
        try ICalendarParser(path: url.path).parse(
            { record in
                guard case .event(let event) = record else { return }
                if event.id == "e1999" { #expect(event.name == "Event 1999 with a summary long enough to be folded") }
                count += 1
            }, reject: { Issue.record("\($0)") })
        #expect(count == 2_000)
    }
}
