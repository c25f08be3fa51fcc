import Foundation

/// The sentence of a session reminder.
public enum SessionReminderText {
    /// "“Tennis (beginner)” starts at 18:00 at Court 3 (in 45 minutes)".
    public static func text(session: String, place: String, start: Date, now: Date, timeZone: TimeZone) -> String {
        let time = LocalClock.localTime(of: start, in: timeZone)
        let minutes = max(1, Int((start.timeIntervalSince(now) / 60).rounded()))
        return "“\(session)” starts at \(Digits.padded(time.hour, 2)):\(Digits.padded(time.minute, 2)) at \(place) "
            + "(in \(minutes) minute\(minutes == 1 ? "" : "s"))"
    }
}
