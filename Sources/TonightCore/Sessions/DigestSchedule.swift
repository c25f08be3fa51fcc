import Foundation

/// When the "Tonight" digest goes out: once per local day, from `hour`:00 until 22:00 on the
/// user's clock (a digest found due later than that would come too late to plan the evening).
/// Works on the zone's real UTC offsets, so daylight-saving days are one hour shorter or longer
/// but the digest still arrives at the same wall-clock time.
public enum DigestSchedule {
    /// The last local hour a digest may start going out.
    public static let lastHour = 21

    /// The local date a digest is due for at `now`, or nil (too early, too late, or sent today).
    public static func due(now: Date, timeZone: TimeZone, hour: Int, lastSent: CalendarDate?) -> CalendarDate? {
        let today = LocalClock.localDate(of: now, in: timeZone)
        let local = LocalClock.localTime(of: now, in: timeZone)
        guard local.hour >= hour, local.hour <= lastHour else { return nil }
        if let lastSent, lastSent >= today { return nil }
        return today
    }
}

/// The sentence of a "Tonight" digest.
public enum DigestText {
    /// One line per part: "Tonight near you: Jazz Night at Blue Note 21:00, Techno at Rex 23:30.
    /// Sessions for you: Tennis (beginner) at Court 3, Tue 18:30." Items are `(name, place, time)`.
    public static func compose(
        events: [(name: String, place: String, time: String)], sessions: [(name: String, place: String, time: String)]
    ) -> String {
        var parts: [String] = []
        if !events.isEmpty {
            parts.append(
                "Tonight near you: " + events.map { "\($0.name) at \($0.place) \($0.time)" }.joined(separator: ", ")
                    + ".")
        }
        if !sessions.isEmpty {
            parts.append(
                "Sessions for you: " + sessions.map { "\($0.name) at \($0.place), \($0.time)" }.joined(separator: ", ")
                    + ".")
        }
        return parts.joined(separator: " ")
    }
}
