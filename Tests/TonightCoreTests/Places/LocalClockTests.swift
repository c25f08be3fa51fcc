import Foundation
import Testing

@testable import TonightCore

/// An instant from ISO 8601 text with an offset, e.g. `2025-03-09T07:30:00Z`.
private func at(_ text: String) throws -> Date {
    try #require(ISO8601DateFormatter().date(from: text), "bad test instant \(text)")
}

private func zone(_ id: String) throws -> TimeZone {
    try #require(TimeZone(identifier: id))
}

private func day(_ text: String) throws -> CalendarDate {
    try #require(CalendarDate(text))
}

private func time(_ text: String) throws -> LocalTime {
    try #require(LocalTime(text))
}

@Suite struct CalendarDateArithmeticTests {
    @Test func addsDaysAcrossMonthsYearsAndLeapDays() throws {
        #expect(try day("2024-02-28").adding(days: 1) == day("2024-02-29"))
        #expect(try day("2023-02-28").adding(days: 1) == day("2023-03-01"))
        #expect(try day("2025-12-31").adding(days: 1) == day("2026-01-01"))
        #expect(try day("2025-01-01").adding(days: -1) == day("2024-12-31"))
        #expect(try day("1970-01-01").daysSinceEpoch == 0)
        #expect(try day("1969-12-31").daysSinceEpoch == -1)
        #expect(try day("2025-01-01").days(until: day("2026-01-01")) == 365)
        #expect(try day("2024-03-01").days(until: day("2024-02-01")) == -29)
    }

    @Test func roundTripsEveryDayOfFourCenturies() throws {
        let start = try day("1900-01-01").daysSinceEpoch
        let mismatches = (start..<(start + 146_097)).filter { n in
            let date = CalendarDate(daysSinceEpoch: n)
            return date.daysSinceEpoch != n || CalendarDate(date.description) != date
                || date.adding(days: 1) != CalendarDate(daysSinceEpoch: n + 1)
        }
        #expect(mismatches.isEmpty)
        #expect(CalendarDate(daysSinceEpoch: start + 146_097) == (try day("2300-01-01")))
    }

    @Test func knowsWeekdays() throws {
        #expect(try day("1970-01-01").weekday == .thursday)
        #expect(try day("2025-03-09").weekday == .sunday)
        #expect(try day("2025-11-03").weekday == .monday)
        #expect(try day("1969-12-29").weekday == .monday)
        #expect(try day("2000-02-29").weekday == .tuesday)
    }

    @Test func checksFields() {
        #expect(CalendarDate(year: 2024, month: 2, day: 29) == CalendarDate("2024-02-29"))
        #expect(CalendarDate(year: 2023, month: 2, day: 29) == nil)
        #expect(CalendarDate(year: 2023, month: 4, day: 31) == nil)
        #expect(CalendarDate(year: 2023, month: 13, day: 1) == nil)
        #expect(CalendarDate(year: 2023, month: 1, day: 0) == nil)
    }
}

@Suite struct LocalClockConversionTests {
    @Test func convertsOrdinaryTimes() throws {
        let newYork = try zone("America/New_York")
        #expect(
            try LocalClock.instant(date: day("2025-07-01"), time: time("12:00"), timeZone: newYork)
                == at("2025-07-01T16:00:00Z"))
        #expect(
            try LocalClock.instant(date: day("2025-01-15"), time: time("23:59:59"), timeZone: newYork)
                == at("2025-01-16T04:59:59Z"))
        #expect(
            try LocalClock.instant(date: day("2025-07-01"), time: time("00:00"), timeZone: .gmt)
                == at("2025-07-01T00:00:00Z"))
    }

    @Test func movesTimesInASpringForwardGapForwardByTheGap() throws {
        let newYork = try zone("America/New_York")
        // 02:00 EST became 03:00 EDT: 02:30 does not exist and becomes 03:30 EDT.
        let instant = try LocalClock.instant(date: day("2025-03-09"), time: time("02:30"), timeZone: newYork)
        #expect(try instant == at("2025-03-09T07:30:00Z"))
        #expect(LocalClock.localTime(of: instant, in: newYork) == (try time("03:30")))
        #expect(
            try LocalClock.instant(date: day("2025-03-09"), time: time("02:00"), timeZone: newYork)
                == at("2025-03-09T07:00:00Z"))
        #expect(
            try LocalClock.instant(date: day("2025-03-09"), time: time("03:00"), timeZone: newYork)
                == at("2025-03-09T07:00:00Z"))
        #expect(
            try LocalClock.instant(date: day("2025-03-09"), time: time("01:59"), timeZone: newYork)
                == at("2025-03-09T06:59:00Z"))

        let berlin = try zone("Europe/Berlin")
        #expect(
            try LocalClock.instant(date: day("2025-03-30"), time: time("02:30"), timeZone: berlin)
                == at("2025-03-30T01:30:00Z"))
    }

    @Test func takesTheFirstOfRepeatedFallBackTimes() throws {
        let newYork = try zone("America/New_York")
        // 02:00 EDT became 01:00 EST: 01:30 happens at 05:30Z (EDT) and 06:30Z (EST).
        #expect(
            try LocalClock.instant(date: day("2025-11-02"), time: time("01:30"), timeZone: newYork)
                == at("2025-11-02T05:30:00Z"))
        #expect(
            try LocalClock.instant(date: day("2025-11-02"), time: time("02:00"), timeZone: newYork)
                == at("2025-11-02T07:00:00Z"))
        #expect(LocalClock.localTime(of: try at("2025-11-02T06:30:00Z"), in: newYork) == (try time("01:30")))

        let berlin = try zone("Europe/Berlin")
        #expect(
            try LocalClock.instant(date: day("2025-10-26"), time: time("02:30"), timeZone: berlin)
                == at("2025-10-26T00:30:00Z"))
    }

    @Test func handlesADayThatWasSkipped() throws {
        // Samoa moved across the date line: 2011-12-29 23:59:59 was followed by 2011-12-31 00:00.
        let apia = try zone("Pacific/Apia")
        let instant = try LocalClock.instant(date: day("2011-12-30"), time: time("12:00"), timeZone: apia)
        #expect(LocalClock.localDate(of: instant, in: apia) == (try day("2011-12-31")))
        #expect(LocalClock.localTime(of: instant, in: apia) == (try time("12:00")))
    }

    @Test func readsLocalDatesAndTimesFarEastAndFarWest() throws {
        let kiritimati = try zone("Pacific/Kiritimati")  // UTC+14
        let pagoPago = try zone("Pacific/Pago_Pago")  // UTC-11
        let instant = try at("2025-06-01T11:30:00Z")
        #expect(LocalClock.localDate(of: instant, in: kiritimati) == (try day("2025-06-02")))
        #expect(LocalClock.localTime(of: instant, in: kiritimati) == (try time("01:30")))
        #expect(LocalClock.localDate(of: instant, in: pagoPago) == (try day("2025-06-01")))
        #expect(LocalClock.localTime(of: instant, in: pagoPago) == (try time("00:30")))
        #expect(
            try LocalClock.instant(date: day("2025-06-02"), time: time("01:30"), timeZone: kiritimati) == instant)
        #expect(try LocalClock.instant(date: day("2025-06-01"), time: time("00:30"), timeZone: pagoPago) == instant)
    }

    @Test func readsInstantsBefore1970AndWithFractions() throws {
        let instant = Date(timeIntervalSince1970: -0.5)
        #expect(LocalClock.localDate(of: instant, in: .gmt) == (try day("1969-12-31")))
        #expect(LocalClock.localTime(of: instant, in: .gmt) == (try time("23:59:59")))
    }
}

@Suite struct WhenParsingTests {
    @Test func parsesKeywordsAndDates() throws {
        #expect(try When.parse("tonight").get() == .tonight)
        #expect(try When.parse(" Weekend ").get() == .weekend)
        #expect(try When.parse("2025-06-01").get() == .dates(day("2025-06-01"), day("2025-06-01")))
        #expect(try When.parse("2025-06-01..2025-06-03").get() == .dates(day("2025-06-01"), day("2025-06-03")))
        #expect(try When.parse("2024-01-01..2024-12-31").get() == .dates(day("2024-01-01"), day("2024-12-31")))
    }

    @Test func rejectsReversedAndOverlongRanges() {
        #expect(code("2025-06-03..2025-06-01") == "reversed_range")
        #expect(code("2025-01-01..2026-01-02") == "range_too_long")
        #expect(When.parse("2025-01-01..2026-01-02", field: "q").failure?.field == "q")
        #expect(When.parse("2025-01-01..2026-01-01").failure == nil)
    }

    @Test(arguments: [
        "", "today", "tonite", "2025-02-30", "2025-6-1", "2025-06-01..", "..2025-06-01", "2025-06-01...2025-06-02",
        "2025-06-01..2025-06-02..2025-06-03", "2025-06-01 2025-06-02", "tonight..weekend",
    ])
    func rejectsOtherText(_ text: String) {
        #expect(code(text) == "invalid_when")
    }

    private func code(_ text: String) -> String? { When.parse(text).failure?.code }
}

@Suite struct WindowTests {
    @Test func tonightRunsUntilSixTheNextMorning() throws {
        let berlin = try zone("Europe/Berlin")
        let evening = try at("2025-06-10T23:00:00+02:00")
        #expect(
            LocalClock.window(.tonight, now: evening, timeZone: berlin)
                == DateInterval(start: evening, end: try at("2025-06-11T06:00:00+02:00")))
        let night = try at("2025-06-11T03:00:00+02:00")
        #expect(
            LocalClock.window(.tonight, now: night, timeZone: berlin)
                == DateInterval(start: night, end: try at("2025-06-11T06:00:00+02:00")))
        let six = try at("2025-06-11T06:00:00+02:00")
        #expect(LocalClock.window(.tonight, now: six, timeZone: berlin).end == (try at("2025-06-12T06:00:00+02:00")))
    }

    @Test func tonightSpansTheSpringForwardNight() throws {
        let newYork = try zone("America/New_York")
        let now = try at("2025-03-08T23:00:00-05:00")
        let window = LocalClock.window(.tonight, now: now, timeZone: newYork)
        #expect(window.end == (try at("2025-03-09T06:00:00-04:00")))
        #expect(window.duration == 6 * 3600)
        let fallBack = LocalClock.window(.tonight, now: try at("2025-11-01T23:00:00-04:00"), timeZone: newYork)
        #expect(fallBack.duration == 8 * 3600)
    }

    @Test func weekendIsFridayEveningToMondayMorning() throws {
        let berlin = try zone("Europe/Berlin")
        let friday = try at("2025-06-13T18:00:00+02:00")
        let monday = try at("2025-06-16T06:00:00+02:00")
        // Wednesday and Friday morning: the coming weekend.
        #expect(
            LocalClock.window(.weekend, now: try at("2025-06-11T12:00:00+02:00"), timeZone: berlin)
                == DateInterval(start: friday, end: monday))
        #expect(
            LocalClock.window(.weekend, now: try at("2025-06-13T10:00:00+02:00"), timeZone: berlin)
                == DateInterval(start: friday, end: monday))
        // Monday after 06:00: next weekend.
        #expect(
            LocalClock.window(.weekend, now: try at("2025-06-09T07:00:00+02:00"), timeZone: berlin)
                == DateInterval(start: friday, end: monday))
        // During the weekend, including Sunday night and early Monday: from now.
        for now in try [
            "2025-06-13T20:00:00+02:00", "2025-06-14T15:00:00+02:00", "2025-06-15T23:00:00+02:00",
            "2025-06-16T03:00:00+02:00",
        ].map(at) {
            #expect(LocalClock.window(.weekend, now: now, timeZone: berlin) == DateInterval(start: now, end: monday))
        }
    }

    @Test func weekendAcrossFallBack() throws {
        let berlin = try zone("Europe/Berlin")
        let window = LocalClock.window(.weekend, now: try at("2025-10-22T12:00:00+02:00"), timeZone: berlin)
        #expect(window.start == (try at("2025-10-24T18:00:00+02:00")))
        #expect(window.end == (try at("2025-10-27T06:00:00+01:00")))
        #expect(window.duration == 61 * 3600)
    }

    @Test func datesRunFromMidnightToSixAfterTheLastDay() throws {
        let newYork = try zone("America/New_York")
        let now = try at("2025-01-01T12:00:00Z")
        let when = try When.parse("2025-03-08..2025-03-09").get()
        #expect(
            LocalClock.window(when, now: now, timeZone: newYork)
                == DateInterval(start: try at("2025-03-08T00:00:00-05:00"), end: try at("2025-03-10T06:00:00-04:00")))
        let single = try When.parse("2025-03-08").get()
        #expect(LocalClock.window(single, now: now, timeZone: newYork).duration == 29 * 3600)
    }

    @Test func windowsFarEastAndFarWest() throws {
        let kiritimati = try zone("Pacific/Kiritimati")
        let pagoPago = try zone("Pacific/Pago_Pago")
        // The same instant is Saturday 23:00 on Kiritimati and Friday 22:00 in Pago Pago.
        let now = try at("2025-06-14T09:00:00Z")
        #expect(LocalClock.window(.tonight, now: now, timeZone: kiritimati).end == (try at("2025-06-14T16:00:00Z")))
        #expect(LocalClock.window(.tonight, now: now, timeZone: pagoPago).end == (try at("2025-06-14T17:00:00Z")))
        #expect(
            LocalClock.window(.weekend, now: now, timeZone: kiritimati)
                == DateInterval(start: now, end: try at("2025-06-15T16:00:00Z")))
        #expect(
            LocalClock.window(.weekend, now: now, timeZone: pagoPago)
                == DateInterval(start: now, end: try at("2025-06-16T17:00:00Z")))
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { failure } else { nil }
    }
}
