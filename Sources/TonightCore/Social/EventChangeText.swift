import Foundation

/// The sentence a follower reads when an event they follow or attend changes.
public enum EventChangeText {
    /// Describes one change record: `field` is `start`, `place` or `status`; `newValue` is an
    /// RFC 3339 instant or a `YYYY-MM-DD` date (start), a place's name (place), or a status.
    public static func describe(event: String, field: String, newValue: String?, timeZone: TimeZone) -> String {
        let name = "“\(event)”"
        switch field {
        case "status":
            switch newValue {
            case "cancelled": return "\(name) is cancelled"
            case "postponed": return "\(name) is postponed"
            case "rescheduled": return "\(name) is rescheduled"
            case "scheduled": return "\(name) is on again"
            case "onsale": return "\(name) is on sale"
            case "removed": return "\(name) is no longer on sale"
            default: return "\(name) is now \(newValue ?? "changed")"
            }
        case "place":
            return newValue.map { "\(name) moved to \($0)" } ?? "\(name) moved to another place"
        case "start":
            guard let newValue else { return "\(name) has a new time" }
            if let date = CalendarDate(newValue) {
                return "\(name) moved to \(dayName(date.weekday)) \(date)"
            }
            guard let instant = try? Date(newValue, strategy: .iso8601) else { return "\(name) has a new time" }
            return "\(name) now starts \(when(instant, timeZone: timeZone))"
        default:
            return "\(name) changed"
        }
    }

    /// "Monday 2026-11-23 at 18:00" on the clock of `timeZone`.
    public static func when(_ instant: Date, timeZone: TimeZone) -> String {
        let date = LocalClock.localDate(of: instant, in: timeZone)
        let time = LocalClock.localTime(of: instant, in: timeZone)
        return "\(dayName(date.weekday)) \(date) at " + Digits.padded(time.hour, 2) + ":"
            + Digits.padded(time.minute, 2)
    }

    private static func dayName(_ day: Weekday) -> String {
        switch day {
        case .monday: "Monday"
        case .tuesday: "Tuesday"
        case .wednesday: "Wednesday"
        case .thursday: "Thursday"
        case .friday: "Friday"
        case .saturday: "Saturday"
        case .sunday: "Sunday"
        }
    }
}
