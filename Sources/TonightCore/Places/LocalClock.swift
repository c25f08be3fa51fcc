import Foundation

/// A day of the week, numbered as in ISO 8601 (Monday = 1 … Sunday = 7).
public enum Weekday: Int, Sendable, Hashable, CaseIterable, Comparable {
    case monday = 1, tuesday, wednesday, thursday, friday, saturday, sunday

    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension CalendarDate {
    /// The date with these fields; nil for impossible dates such as 2023-02-29.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        self.init(daysSinceEpoch: CalendarDate.days(year: year, month: month, day: day))
        guard self.year == year, self.month == month, self.day == day else { return nil }
    }

    /// The date `daysSinceEpoch` days after 1970-01-01 (proleptic Gregorian calendar).
    public init(daysSinceEpoch: Int) {
        // Howard Hinnant's civil_from_days.
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        self.year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        self.month = month
        self.day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    }

    /// Days since 1970-01-01 (negative before it).
    public var daysSinceEpoch: Int { CalendarDate.days(year: year, month: month, day: day) }

    /// The date `days` days later (earlier when negative).
    public func adding(days: Int) -> CalendarDate { CalendarDate(daysSinceEpoch: daysSinceEpoch + days) }

    /// Days from this date to `other`: positive when `other` is later.
    public func days(until other: CalendarDate) -> Int { other.daysSinceEpoch - daysSinceEpoch }

    /// The day of the week.
    public var weekday: Weekday { Weekday(daysSinceEpoch: daysSinceEpoch) }

    /// Howard Hinnant's days_from_civil.
    private static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension Weekday {
    /// The weekday of the day `daysSinceEpoch` days after 1970-01-01, a Thursday.
    init(daysSinceEpoch days: Int) {
        self = Weekday(rawValue: LocalClock.floorMod(days + 3, 7) + 1) ?? .monday
    }
}

/// Conversions between instants and wall-clock readings in a time zone, and the time windows of
/// event search (`when=`).
///
/// Everything works on the zone's UTC offsets (`TimeZone.secondsFromGMT(for:)`), so it is exact
/// across daylight-saving and other offset changes and does not depend on a `Calendar`'s policy
/// for skipped or repeated times.
public enum LocalClock {
    static let secondsPerDay = 86_400

    /// The instant at which clocks in `timeZone` read `time` on `date`.
    ///
    /// - A time that does not exist because clocks jump forward (02:30 when 02:00 becomes 03:00)
    ///   moves forward by the gap: it is read with the offset in force before the jump, giving 03:30.
    /// - A time that happens twice because clocks fall back (01:30 when 02:00 becomes 01:00) gives
    ///   the first occurrence, still on the offset in force before the change.
    public static func instant(date: CalendarDate, time: LocalTime, timeZone: TimeZone) -> Date {
        let local = date.daysSinceEpoch * secondsPerDay + time.secondsSinceMidnight
        // An instant is at most 14 hours from its reading, so one day either side brackets it.
        let before = offset(timeZone, at: local - secondsPerDay)
        let after = offset(timeZone, at: local + secondsPerDay)
        for candidate in [before, after] where offset(timeZone, at: local - candidate) == candidate {
            return utc(local - candidate)
        }
        return utc(local - before)
    }

    /// The date clocks in `timeZone` show at `instant`.
    public static func localDate(of instant: Date, in timeZone: TimeZone) -> CalendarDate {
        CalendarDate(daysSinceEpoch: floorDiv(localSeconds(of: instant, in: timeZone), secondsPerDay))
    }

    /// The time clocks in `timeZone` show at `instant` (fractions of a second dropped).
    public static func localTime(of instant: Date, in timeZone: TimeZone) -> LocalTime {
        let seconds = floorMod(localSeconds(of: instant, in: timeZone), secondsPerDay)
        return LocalTime(secondsSinceMidnight: seconds)
    }

    /// The search window of `when` as seen from `now` on the clocks of `timeZone`:
    ///
    /// - `tonight`: from `now` until 06:00 the next morning; between 00:00 and 06:00 the night is
    ///   still on, so until 06:00 today.
    /// - `weekend`: from Friday 18:00 (or `now`, when later) until Monday 06:00. From Monday 06:00
    ///   to Thursday it is the coming weekend; until Monday 06:00 the current one.
    /// - `dates(first, last)`: from `first` at 00:00 until the day after `last` at 06:00, so the last
    ///   night is included. It is not clipped to `now`.
    ///
    /// Wall-clock times are converted with ``instant(date:time:timeZone:)``.
    public static func window(_ when: When, now: Date, timeZone: TimeZone) -> DateInterval {
        let today = localDate(of: now, in: timeZone)
        let earlyMorning = localTime(of: now, in: timeZone) < sixAM
        let start: Date
        let end: Date
        switch when {
        case .tonight:
            start = now
            end = instant(date: earlyMorning ? today : today.adding(days: 1), time: sixAM, timeZone: timeZone)
        case .weekend:
            let weekday = today.weekday
            let friday: CalendarDate
            if weekday == .monday && earlyMorning {
                friday = today.adding(days: -3)
            } else {
                // Days since Friday: Fr 0, Sa 1, Su 2 (this weekend); Mo–Th 3…6 (go on to the next Friday).
                let sinceFriday = (weekday.rawValue - Weekday.friday.rawValue + 7) % 7
                friday = today.adding(days: sinceFriday <= 2 ? -sinceFriday : 7 - sinceFriday)
            }
            start = max(now, instant(date: friday, time: sixPM, timeZone: timeZone))
            end = instant(date: friday.adding(days: 3), time: sixAM, timeZone: timeZone)
        case .dates(let first, let last):
            start = instant(date: first, time: .midnight, timeZone: timeZone)
            end = instant(date: last.adding(days: 1), time: sixAM, timeZone: timeZone)
        }
        return DateInterval(start: start, end: max(start, end))
    }

    // MARK: - Internals shared with OpeningHours

    /// Seconds since 1970-01-01 00:00 on the clocks of `timeZone` at `instant`.
    static func localSeconds(of instant: Date, in timeZone: TimeZone) -> Int {
        Int(instant.timeIntervalSince1970.rounded(.down)) + timeZone.secondsFromGMT(for: instant)
    }

    static func floorDiv(_ a: Int, _ b: Int) -> Int { (a - floorMod(a, b)) / b }

    static func floorMod(_ a: Int, _ b: Int) -> Int { (a % b + b) % b }

    private static let sixAM = LocalTime(secondsSinceMidnight: 6 * 3600)
    private static let sixPM = LocalTime(secondsSinceMidnight: 18 * 3600)

    private static func offset(_ timeZone: TimeZone, at seconds: Int) -> Int {
        timeZone.secondsFromGMT(for: utc(seconds))
    }

    private static func utc(_ seconds: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }
}

extension LocalTime {
    /// 00:00:00.
    public static let midnight = LocalTime(secondsSinceMidnight: 0)

    /// The time `seconds` (0..<86_400, not checked) after midnight.
    init(secondsSinceMidnight seconds: Int) {
        self.hour = seconds / 3600
        self.minute = seconds / 60 % 60
        self.second = seconds % 60
    }
}

/// The `when` of event search: `tonight`, `weekend`, or a range of dates.
public enum When: Sendable, Hashable {
    case tonight
    case weekend
    /// From the first to the last date, both included.
    case dates(CalendarDate, CalendarDate)

    /// The most days a `dates` range may span, both ends included.
    public static let maxDays = 366

    /// Parses `tonight`, `weekend` (any case), `YYYY-MM-DD` or `YYYY-MM-DD..YYYY-MM-DD`.
    /// A range must not be reversed (`reversed_range`) nor span more than ``maxDays`` days
    /// (`range_too_long`); anything else is `invalid_when`.
    public static func parse(_ text: String, field: String = "when") -> Result<When, FieldIssue> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch trimmed.lowercased() {
        case "tonight": return .success(.tonight)
        case "weekend": return .success(.weekend)
        default: break
        }
        let parts = trimmed.components(separatedBy: "..")
        guard (1...2).contains(parts.count), let first = CalendarDate(parts[0]),
            let last = CalendarDate(parts[parts.count - 1])
        else {
            return .failure(
                FieldIssue(
                    field: field, code: "invalid_when",
                    message: "Use tonight, weekend, YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD."))
        }
        let days = first.days(until: last) + 1
        if days < 1 {
            return .failure(
                FieldIssue(field: field, code: "reversed_range", message: "The last date is before the first."))
        }
        if days > maxDays {
            return .failure(
                FieldIssue(
                    field: field, code: "range_too_long", message: "A date range spans at most \(maxDays) days."))
        }
        return .success(.dates(first, last))
    }
}
