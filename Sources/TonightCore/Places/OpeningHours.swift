import Foundation

/// What opening hours say about a moment or a period.
public enum OpenState: String, Sendable, Hashable, CaseIterable, Codable {
    case open, closed, unknown
}

/// OpenStreetMap `opening_hours`, in the subset Tonight reads:
///
/// - rules separated by `;`, e.g. `Mo-Fr 10:00-20:00; Sa 10:00-14:00; Su off`;
/// - an optional weekday selector: `Mo`, `Mo-Fr`, `Sa-Mo` (wrapping), `Mo,We,Fr`, `Mo-Fr,Su`;
/// - then time spans `10:00-20:00` (several with commas; ending `24:00`, or after midnight as
///   `20:00-04:00` or `20:00-28:00`), or `off`/`closed`; weekdays alone mean all day;
/// - or the whole rule `24/7`. A rule without weekdays applies to every day.
///
/// A later rule replaces earlier ones on the days it names. A span after midnight belongs to the
/// day it starts: `Fr 20:00-04:00; Sa off` is open Saturday 00:00–04:00. Times are wall-clock times,
/// so a span inside a skipped daylight-saving hour never opens and one in a repeated hour opens twice.
///
/// Anything else (public holidays, months, week numbers, sunrise, `+`, `||`, comments…) makes
/// the value unknown: ``text`` is kept verbatim and every question answers `.unknown`.
public struct OpeningHours: Sendable, Hashable {
    /// The text as given.
    public let text: String
    /// Open spans per weekday (index 0 = Monday) in minutes after that day's midnight; nil when unknown.
    private let week: [[Range<Int>]]?

    /// Reads `text`; see the type's documentation for the subset understood.
    public init(_ text: String) {
        self.text = text
        self.week = OpeningHours.parse(text)
    }

    /// Whether the text is in the subset understood.
    public var isKnown: Bool { week != nil }

    /// The spans starting on `weekday`, in minutes after its midnight (an upper bound past 1440 runs
    /// into the next day); empty when closed, nil when unknown.
    public func spans(on weekday: Weekday) -> [Range<Int>]? {
        week?[weekday.rawValue - 1]
    }

    /// Open or closed at `instant` on the clocks of `timeZone`; `.unknown` when the text is.
    public func state(at instant: Date, timeZone: TimeZone) -> OpenState {
        guard let week else { return .unknown }
        let local = LocalClock.localSeconds(of: instant, in: timeZone)
        return OpeningHours.isOpen(week, localRange: local..<local + 1) ? .open : .closed
    }

    /// `.open` when open at any moment of `interval` (its end excluded; an empty interval asks about
    /// its start), `.closed` when never, `.unknown` when the text is.
    public func isOpen(anytimeIn interval: DateInterval, timeZone: TimeZone) -> OpenState {
        guard let week else { return .unknown }
        guard interval.duration > 0 else { return state(at: interval.start, timeZone: timeZone) }
        // Between offset changes the wall clock runs with the instant, so each piece is a plain range.
        var start = interval.start
        while start < interval.end {
            var end = interval.end
            if let change = timeZone.nextDaylightSavingTimeTransition(after: start), change > start, change < end {
                end = change
            }
            let offset = timeZone.secondsFromGMT(for: start)
            let low = Int(start.timeIntervalSince1970.rounded(.down)) + offset
            let high = Int(end.timeIntervalSince1970.rounded(.up)) + offset
            if OpeningHours.isOpen(week, localRange: low..<max(high, low + 1)) { return .open }
            start = end
        }
        return .closed
    }

    // MARK: - Evaluation

    /// Whether any second of `localRange` (seconds since 1970-01-01 00:00 local) is open.
    private static func isOpen(_ week: [[Range<Int>]], localRange: Range<Int>) -> Bool {
        let day = LocalClock.secondsPerDay
        if localRange.count > 8 * day { return week.contains { !$0.isEmpty } }
        let firstDay = LocalClock.floorDiv(localRange.lowerBound, day) - 1  // yesterday's spans run into today
        let lastDay = LocalClock.floorDiv(localRange.upperBound - 1, day)
        for dayNumber in firstDay...lastDay {
            let midnight = dayNumber * day
            for span in week[Weekday(daysSinceEpoch: dayNumber).rawValue - 1] {
                let open = midnight + span.lowerBound * 60
                let close = midnight + span.upperBound * 60
                if open < localRange.upperBound && close > localRange.lowerBound { return true }
            }
        }
        return false
    }

    // MARK: - Parsing

    private static let dayNames = ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"]
    private static let allDay = [0..<1440]

    private static func parse(_ text: String) -> [[Range<Int>]]? {
        let rules = text.split(separator: ";").filter { !$0.allSatisfy(\.isWhitespace) }
        guard !rules.isEmpty else { return nil }
        var week = [[Range<Int>]](repeating: [], count: 7)
        for rule in rules {
            guard let (days, spans) = parseRule(rule) else { return nil }
            for day in days { week[day] = spans }
        }
        return week
    }

    /// A rule's days (0 = Monday) and spans, nil outside the subset.
    private static func parseRule(_ rule: Substring) -> (days: [Int], spans: [Range<Int>])? {
        let words = squeezed(rule)
        let everyDay = Array(0..<7)
        switch words.count {
        case 1:
            if words[0] == "24/7" { return (everyDay, allDay) }
            if let days = weekdays(words[0]) { return (days, allDay) }
            if let spans = spans(words[0]) { return (everyDay, spans) }
            return nil
        case 2:
            guard let days = weekdays(words[0]), let spans = spans(words[1]) else { return nil }
            return (days, spans)
        default:
            return nil
        }
    }

    /// The rule's words, with the spaces some mappers put around `,` and `-` removed
    /// (`Mo - Fr 10:00 - 14:00, 18:00-22:00` → `Mo-Fr`, `10:00-14:00,18:00-22:00`).
    private static func squeezed(_ rule: Substring) -> [String] {
        var words: [String] = []
        for token in rule.split(whereSeparator: \.isWhitespace) {
            let glued =
                words.last.map { $0.hasSuffix(",") || $0.hasSuffix("-") } == true
                || token.hasPrefix(",") || token.hasPrefix("-")
            if glued, let last = words.popLast() {
                words.append(last + token)
            } else {
                words.append(String(token))
            }
        }
        return words
    }

    /// `Mo`, `Mo-Fr`, `Sa-Mo`, `Mo,We,Fr`, `Mo-Fr,Su` as day indices (0 = Monday).
    private static func weekdays(_ word: String) -> [Int]? {
        var days: [Int] = []
        for item in word.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = item.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(ends.count), let first = dayNames.firstIndex(of: String(ends[0])),
                let last = dayNames.firstIndex(of: String(ends[ends.count - 1]))
            else { return nil }
            var day = first
            days.append(day)
            while day != last {
                day = (day + 1) % 7
                days.append(day)
            }
        }
        return days
    }

    /// `off`, `closed`, or comma-separated `HH:MM-HH:MM` spans in minutes.
    private static func spans(_ word: String) -> [Range<Int>]? {
        if word == "off" || word == "closed" { return [] }
        var spans: [Range<Int>] = []
        for item in word.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = item.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2, let open = minutes(ends[0]), var close = minutes(ends[1]), open < 1440,
                close != open
            else { return nil }
            if close < open { close += 1440 }
            guard close <= 2880 else { return nil }
            spans.append(open..<close)
        }
        return spans
    }

    /// `H:MM` or `HH:MM` (hours up to 48) in minutes.
    private static func minutes(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
            parts.allSatisfy({ $0.allSatisfy { ("0"..."9").contains($0) } }),
            let hour = Int(parts[0]), let minute = Int(parts[1]), minute < 60
        else { return nil }
        let total = hour * 60 + minute
        return total <= 2880 ? total : nil
    }
}
