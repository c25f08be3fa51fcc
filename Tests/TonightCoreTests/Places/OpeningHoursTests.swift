import Foundation
import Testing

@testable import TonightCore

@Suite struct OpeningHoursTests {
    private let berlin = TimeZone(identifier: "Europe/Berlin") ?? .gmt
    private let newYork = TimeZone(identifier: "America/New_York") ?? .gmt

    /// An instant from ISO 8601 text with an offset, e.g. `2025-06-09T10:00:00+02:00`.
    private func at(_ text: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: text), "bad test instant \(text)")
    }

    /// The state in Berlin at a June 2025 local time; 2025-06-09 is a Monday.
    private func state(_ hours: String, _ local: String) throws -> OpenState {
        OpeningHours(hours).state(at: try at("2025-06-\(local):00+02:00"), timeZone: berlin)
    }

    @Test func alwaysOpen() throws {
        let hours = OpeningHours("24/7")
        #expect(hours.isKnown)
        #expect(hours.text == "24/7")
        for local in ["09T00:00", "11T12:00", "15T23:59"] {
            #expect(try state("24/7", local) == .open)
        }
        #expect(hours.spans(on: .sunday) == [0..<1440])
    }

    @Test func weekdayRanges() throws {
        let hours = "Mo-Fr 10:00-20:00"
        #expect(try state(hours, "09T10:00") == .open)
        #expect(try state(hours, "09T09:59") == .closed)
        #expect(try state(hours, "13T19:59") == .open)
        #expect(try state(hours, "13T20:00") == .closed)
        #expect(try state(hours, "14T12:00") == .closed)
    }

    @Test func weekdayListsAndWrappingRanges() throws {
        #expect(try state("Mo,We,Fr 10:00-12:00", "11T11:00") == .open)
        #expect(try state("Mo,We,Fr 10:00-12:00", "10T11:00") == .closed)
        #expect(try state("Sa-Mo 10:00-12:00", "15T11:00") == .open)
        #expect(try state("Sa-Mo 10:00-12:00", "09T11:00") == .open)
        #expect(try state("Sa-Mo 10:00-12:00", "10T11:00") == .closed)
        #expect(try state("Mo-We,Su 10:00-12:00", "15T11:00") == .open)
        #expect(try state("Mo-We,Su 10:00-12:00", "12T11:00") == .closed)
        #expect(try state("Sa-Su", "14T03:00") == .open)
        #expect(try state("Sa-Su", "13T23:00") == .closed)
    }

    @Test func severalSpansADay() throws {
        let hours = "Mo-Fr 11:00-14:00,18:00-23:00"
        #expect(try state(hours, "10T12:00") == .open)
        #expect(try state(hours, "10T15:00") == .closed)
        #expect(try state(hours, "10T22:30") == .open)
        #expect(OpeningHours(hours).spans(on: .tuesday) == [660..<840, 1080..<1380])
    }

    @Test func toleratesSpacesAroundSeparators() throws {
        let hours = OpeningHours("Mo - Fr 10:00 - 14:00, 18:00-22:00 ; Sa 12:00-14:00;")
        #expect(hours.isKnown)
        #expect(hours.spans(on: .monday) == [600..<840, 1080..<1320])
        #expect(hours.spans(on: .saturday) == [720..<840])
        #expect(hours.spans(on: .sunday) == [])
    }

    @Test func endOfDay() throws {
        #expect(try state("Mo 18:00-24:00", "09T23:59") == .open)
        #expect(try state("Mo 18:00-24:00", "10T00:00") == .closed)
        #expect(try state("Mo 9:00-17:00", "09T09:30") == .open)
    }

    @Test func spansPastMidnightBelongToTheDayTheyStart() throws {
        for hours in ["Fr 20:00-04:00", "Fr 20:00-28:00"] {
            #expect(try state(hours, "13T21:00") == .open)
            #expect(try state(hours, "14T03:59") == .open)
            #expect(try state(hours, "14T04:00") == .closed)
            #expect(try state(hours, "13T03:00") == .closed)
        }
        // Saturday's own rule does not cut Friday's night short.
        #expect(try state("Fr 20:00-04:00; Sa off", "14T02:00") == .open)
        #expect(try state("Fr 20:00-04:00; Sa off", "14T21:00") == .closed)
        // Overriding Friday removes its night.
        #expect(try state("Mo-Fr 20:00-04:00; Fr off", "14T02:00") == .closed)
    }

    @Test func sundayNightRunsIntoMonday() throws {
        let hours = "Su 22:00-02:00"
        #expect(try state(hours, "15T23:00") == .open)
        #expect(try state(hours, "16T01:30") == .open)
        #expect(try state(hours, "09T01:30") == .open)
        #expect(try state(hours, "16T02:00") == .closed)
        #expect(try state(hours, "15T01:30") == .closed)
        #expect(try state(hours, "10T01:30") == .closed)
    }

    @Test func laterRulesOverrideEarlierOnes() throws {
        #expect(try state("Mo-Fr 10:00-20:00; We off", "11T12:00") == .closed)
        #expect(try state("Mo-Fr 10:00-20:00; We off", "12T12:00") == .open)
        #expect(try state("Mo-Fr 10:00-20:00; We 14:00-16:00", "11T12:00") == .closed)
        #expect(try state("Mo-Fr 10:00-20:00; We 14:00-16:00", "11T15:00") == .open)
        #expect(try state("10:00-20:00; Su closed", "15T12:00") == .closed)
        #expect(try state("10:00-20:00; Su closed", "14T12:00") == .open)
        #expect(try state("24/7; Mo off", "09T12:00") == .closed)
        // A rule without weekdays names every day.
        #expect(try state("Mo 10:00-12:00; 14:00-16:00", "09T11:00") == .closed)
        #expect(try state("Mo 10:00-12:00; 14:00-16:00", "10T15:00") == .open)
    }

    @Test func alwaysClosedIsKnown() throws {
        for text in ["off", "closed", "Mo-Su off"] {
            let hours = OpeningHours(text)
            #expect(hours.isKnown)
            #expect(hours.state(at: try at("2025-06-09T12:00:00Z"), timeZone: berlin) == .closed)
            let month = DateInterval(start: try at("2025-06-01T00:00:00Z"), duration: 31 * 86_400)
            #expect(hours.isOpen(anytimeIn: month, timeZone: berlin) == .closed)
        }
    }

    @Test(arguments: [
        "", " ", ";", "PH off", "Mo-Fr 10:00-20:00; PH off", "Mo-Fr 10:00-20:00; SH off", "Jan-Mar 10:00-12:00",
        "Dec 25 off", "week 1-10 Mo 10:00-12:00", "sunrise-sunset", "Mo 10:00-sunset", "10:00+", "Fr 22:00+",
        "Mo-Fr 10:00-20:00 || \"by appointment\"", "\"call us\"", "Mo-Fr 10:00-20:00 \"kitchen till 19:00\"",
        "Mo-Fr 10:00-20:00, Sa 10:00-14:00", "Mo[1] 10:00-12:00", "mo 10:00-12:00", "Monday 10:00-12:00",
        "Mo 10:00-10:00", "Mo 24:00-26:00", "Mo 10:60-11:00", "Mo 10:00-49:00", "Mo 10-12", "Mo 10:00",
        "Mo-Fr 24/7", "Mo 10:00-12:00 open", "Mo 10:00-12:00,", "Mo-", "Mo 10:00-12:00 unknown",
        "2025 Mo 10:00-12:00", "Mo 10:00-12:00/30", "Mo 10:00-12:00; Tu 10:00-xx",
    ])
    func unknownSyntax(_ text: String) throws {
        let hours = OpeningHours(text)
        #expect(!hours.isKnown)
        #expect(hours.text == text)
        #expect(hours.spans(on: .monday) == nil)
        let instant = try at("2025-06-09T10:30:00Z")
        #expect(hours.state(at: instant, timeZone: berlin) == .unknown)
        #expect(hours.isOpen(anytimeIn: DateInterval(start: instant, duration: 86_400), timeZone: berlin) == .unknown)
    }

    @Test func openAnytimeInAnInterval() throws {
        let hours = OpeningHours("Mo-Fr 18:00-23:00; Fr 20:00-04:00")
        let monday = try at("2025-06-09T12:00:00+02:00")
        #expect(hours.isOpen(anytimeIn: DateInterval(start: monday, duration: 6 * 3600 + 1), timeZone: berlin) == .open)
        // The end is excluded.
        #expect(hours.isOpen(anytimeIn: DateInterval(start: monday, duration: 6 * 3600), timeZone: berlin) == .closed)
        // An empty interval asks about its start.
        let seven = try at("2025-06-09T19:00:00+02:00")
        #expect(hours.isOpen(anytimeIn: DateInterval(start: seven, duration: 0), timeZone: berlin) == .open)
        // Friday's night is still on early Saturday, and then nothing until Monday.
        let saturday = try at("2025-06-14T01:00:00+02:00")
        #expect(hours.isOpen(anytimeIn: DateInterval(start: saturday, duration: 60), timeZone: berlin) == .open)
        let afterFour = try at("2025-06-14T04:00:00+02:00")
        let weekendRest = DateInterval(start: afterFour, end: try at("2025-06-16T18:00:00+02:00"))
        #expect(hours.isOpen(anytimeIn: weekendRest, timeZone: berlin) == .closed)
        // Long intervals: any open day counts.
        let year = DateInterval(start: afterFour, duration: 365 * 86_400)
        #expect(OpeningHours("Su 10:00-11:00").isOpen(anytimeIn: year, timeZone: berlin) == .open)
    }

    @Test func openTonight() throws {
        let hours = OpeningHours("We-Sa 22:00-05:00")
        let tuesday = try at("2025-06-10T20:00:00+02:00")
        let tonight = LocalClock.window(.tonight, now: tuesday, timeZone: berlin)
        #expect(hours.isOpen(anytimeIn: tonight, timeZone: berlin) == .closed)
        let wednesday = LocalClock.window(.tonight, now: tuesday.addingTimeInterval(86_400), timeZone: berlin)
        #expect(hours.isOpen(anytimeIn: wednesday, timeZone: berlin) == .open)
        let sundayEarly = LocalClock.window(.tonight, now: try at("2025-06-15T03:00:00+02:00"), timeZone: berlin)
        #expect(hours.isOpen(anytimeIn: sundayEarly, timeZone: berlin) == .open)
    }

    @Test func springForwardUsesTheWallClock() throws {
        // 2025-03-09 (a Sunday) in New York: 02:00 EST became 03:00 EDT at 07:00Z.
        let early = OpeningHours("Su 01:00-02:30")
        #expect(early.state(at: try at("2025-03-09T06:59:00Z"), timeZone: newYork) == .open)
        #expect(early.state(at: try at("2025-03-09T07:00:00Z"), timeZone: newYork) == .closed)
        let late = OpeningHours("Su 02:30-04:00")
        #expect(late.state(at: try at("2025-03-09T06:59:00Z"), timeZone: newYork) == .closed)
        #expect(late.state(at: try at("2025-03-09T07:00:00Z"), timeZone: newYork) == .open)
        #expect(late.state(at: try at("2025-03-09T07:59:00Z"), timeZone: newYork) == .open)
        #expect(late.state(at: try at("2025-03-09T08:00:00Z"), timeZone: newYork) == .closed)
        // A span inside the skipped hour never opens.
        let skipped = OpeningHours("Su 02:10-02:50")
        let night = DateInterval(start: try at("2025-03-09T05:00:00Z"), end: try at("2025-03-09T09:00:00Z"))
        #expect(skipped.isOpen(anytimeIn: night, timeZone: newYork) == .closed)
        #expect(late.isOpen(anytimeIn: night, timeZone: newYork) == .open)
    }

    @Test func fallBackOpensTheRepeatedHourTwice() throws {
        // 2025-11-02 (a Sunday) in New York: 02:00 EDT became 01:00 EST at 06:00Z.
        let hours = OpeningHours("Su 01:00-01:30")
        #expect(hours.state(at: try at("2025-11-02T05:15:00Z"), timeZone: newYork) == .open)
        #expect(hours.state(at: try at("2025-11-02T05:45:00Z"), timeZone: newYork) == .closed)
        #expect(hours.state(at: try at("2025-11-02T06:15:00Z"), timeZone: newYork) == .open)
        #expect(hours.state(at: try at("2025-11-02T06:45:00Z"), timeZone: newYork) == .closed)
        // Closed at 01:40 EDT, open again when the clock goes back to 01:00.
        let acrossTheChange = DateInterval(start: try at("2025-11-02T05:40:00Z"), duration: 25 * 60)
        #expect(hours.isOpen(anytimeIn: acrossTheChange, timeZone: newYork) == .open)
        let beforeTheChange = DateInterval(start: try at("2025-11-02T05:40:00Z"), duration: 20 * 60)
        #expect(hours.isOpen(anytimeIn: beforeTheChange, timeZone: newYork) == .closed)
        // Berlin, 2025-10-26: 03:00 CEST became 02:00 CET at 01:00Z.
        let berlinHours = OpeningHours("Sa 22:00-02:30")
        #expect(berlinHours.state(at: try at("2025-10-26T00:15:00Z"), timeZone: berlin) == .open)
        #expect(berlinHours.state(at: try at("2025-10-26T00:45:00Z"), timeZone: berlin) == .closed)
        #expect(berlinHours.state(at: try at("2025-10-26T01:15:00Z"), timeZone: berlin) == .open)
        #expect(berlinHours.state(at: try at("2025-10-26T01:45:00Z"), timeZone: berlin) == .closed)
    }

    @Test func farEastAndFarWestZones() throws {
        let kiritimati = try #require(TimeZone(identifier: "Pacific/Kiritimati"))
        let pagoPago = try #require(TimeZone(identifier: "Pacific/Pago_Pago"))
        let hours = OpeningHours("Mo 10:00-12:00")
        // Monday 11:00 on Kiritimati is Sunday 21:00 UTC; Monday 11:00 in Pago Pago is Monday 22:00 UTC.
        #expect(hours.state(at: try at("2025-06-08T21:00:00Z"), timeZone: kiritimati) == .open)
        #expect(hours.state(at: try at("2025-06-08T21:00:00Z"), timeZone: pagoPago) == .closed)
        #expect(hours.state(at: try at("2025-06-09T22:00:00Z"), timeZone: pagoPago) == .open)
        #expect(hours.state(at: try at("2025-06-09T22:00:00Z"), timeZone: kiritimati) == .closed)
    }

    @Test func equalTextsAreEqual() {
        #expect(OpeningHours("Mo 10:00-12:00") == OpeningHours("Mo 10:00-12:00"))
        #expect(OpeningHours("Mo 10:00-12:00") != OpeningHours("Mo 10:00-12:00;"))
        #expect(Set([OpeningHours("24/7"), OpeningHours("24/7")]).count == 1)
    }
}
