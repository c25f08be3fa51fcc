import Foundation
import TonightAPI
import TonightCore

/// Validation and storage of a user's notification settings (muted kinds, quiet hours).
enum NotificationSettingsRules {
    /// The stored settings, or the defaults (nothing muted, no quiet hours) when unreadable.
    static func decode(_ stored: String) -> Components.Schemas.NotificationSettings {
        if stored == "{}" { return .init(muted: []) }
        return (try? JSONDecoder().decode(Components.Schemas.NotificationSettings.self, from: Data(stored.utf8)))
            ?? .init(muted: [])
    }

    /// `settings` checked and normalised (muted kinds once each), or a 400 listing what is wrong.
    static func validated(_ settings: Components.Schemas.NotificationSettings) throws
        -> Components.Schemas.NotificationSettings
    {
        var issues: [FieldIssue] = []
        if let quiet = settings.quietHours, QuietHours(start: quiet.start, end: quiet.end) == nil {
            issues.append(.init(field: "quietHours", code: "invalid_time", message: "Use HH:MM times, e.g. 22:00."))
        }
        if let zone = settings.timeZone, TimeZone(identifier: zone) == nil {
            issues.append(
                .init(field: "timeZone", code: "unknown_zone", message: "Use an IANA zone like Europe/Paris."))
        }
        if !issues.isEmpty { throw APIError.validation(issues) }
        var seen = Set<String>()
        var result = settings
        result.muted = settings.muted.filter { seen.insert($0.rawValue).inserted }
        return result
    }

    /// Whether `instant` falls in the quiet hours of `settings` (in its zone, else UTC).
    static func isQuiet(_ settings: Components.Schemas.NotificationSettings, at instant: Date) -> Bool {
        guard let hours = settings.quietHours, let quiet = QuietHours(start: hours.start, end: hours.end) else {
            return false
        }
        let zone = settings.timeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        return quiet.contains(instant, timeZone: zone)
    }

    static func encode(_ settings: Components.Schemas.NotificationSettings) -> String {
        String(decoding: (try? JSONEncoder().encode(settings)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
