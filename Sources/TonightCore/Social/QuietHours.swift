import Foundation

/// A daily stretch of local time when notifications are not pushed, e.g. 22:00–07:00.
///
/// `start == end` is an empty stretch; `end` before `start` runs past midnight.
public struct QuietHours: Sendable, Hashable {
    /// Minutes after local midnight when quiet starts.
    public let start: Int
    /// Minutes after local midnight when quiet ends.
    public let end: Int

    /// Parses two `HH:MM` times; nil when either is not a time of day.
    public init?(start: String, end: String) {
        guard let start = Self.minutes(start), let end = Self.minutes(end) else { return nil }
        self.start = start
        self.end = end
    }

    /// Whether `instant` falls in the quiet stretch on the wall clock of `timeZone`.
    public func contains(_ instant: Date, timeZone: TimeZone) -> Bool {
        let local = LocalClock.localTime(of: instant, in: timeZone)
        let minute = local.hour * 60 + local.minute
        if start == end { return false }
        return start < end ? (start..<end).contains(minute) : minute >= start || minute < end
    }

    /// `HH:MM` as minutes after midnight.
    static func minutes(_ text: String) -> Int? {
        guard text.count == 5, let time = LocalTime(text) else { return nil }
        return time.hour * 60 + time.minute
    }
}
