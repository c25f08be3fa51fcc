import Foundation

/// Age brackets shown instead of exact ages (the wall, recommendations).
public enum AgeGroup: String, Sendable, CaseIterable, Codable {
    case under18
    case from18to24 = "18-24"
    case from25to34 = "25-34"
    case from35to44 = "35-44"
    case from45to54 = "45-54"
    case over55 = "55+"

    /// The bracket of someone born on `birthDate` (a calendar date) as of `today`.
    public init(birthDate: CalendarDate, today: CalendarDate) {
        var age = today.year - birthDate.year
        if (today.month, today.day) < (birthDate.month, birthDate.day) { age -= 1 }
        switch age {
        case ..<18: self = .under18
        case 18...24: self = .from18to24
        case 25...34: self = .from25to34
        case 35...44: self = .from35to44
        case 45...54: self = .from45to54
        default: self = .over55
        }
    }
}

/// A calendar date without time or zone (`YYYY-MM-DD`).
public struct CalendarDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Parses `YYYY-MM-DD`, rejecting impossible dates such as `2023-02-30`.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), day >= 1, day <= CalendarDate.days(inMonth: month, year: year)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Today's date in UTC (or the given zone).
    public init(date: Date, timeZone: TimeZone = .gmt) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        self.year = parts.year ?? 1970
        self.month = parts.month ?? 1
        self.day = parts.day ?? 1
    }

    public var description: String {
        Digits.padded(year, 4) + "-" + Digits.padded(month, 2) + "-" + Digits.padded(day, 2)
    }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

extension AgeGroup {
    /// The birth dates of people in this bracket on `today`: after `after` (exclusive) and up to
    /// `through` (inclusive); nil bounds are open. As `YYYY-MM-DD` text they compare like dates,
    /// so SQL can count people of a bracket without computing ages.
    public func birthDates(today: CalendarDate) -> (after: CalendarDate?, through: CalendarDate?) {
        let (youngest, oldest): (Int, Int?) =
            switch self {
            case .under18: (0, 17)
            case .from18to24: (18, 24)
            case .from25to34: (25, 34)
            case .from35to44: (35, 44)
            case .from45to54: (45, 54)
            case .over55: (55, nil)
            }
        let through = youngest == 0 ? nil : today.yearsEarlier(youngest)
        let after = oldest.map { today.yearsEarlier($0 + 1) }
        return (after, through)
    }
}

extension CalendarDate {
    /// The same day `years` earlier; 29 February becomes 28 February in a common year.
    public func yearsEarlier(_ years: Int) -> CalendarDate {
        let year = self.year - years
        let day = min(self.day, CalendarDate.days(inMonth: month, year: year))
        return CalendarDate(String(format: "%04d-%02d-%02d", year, month, day))!
    }
}
