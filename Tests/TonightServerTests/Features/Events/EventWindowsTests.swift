import Foundation
import Testing
import TonightCore

@testable import TonightServer

@Suite("Event windows")
struct EventWindowsTests {
    /// The SQL range of `when=` must hold the window of every zone, or the exact check never sees
    /// the events it leaves out. Failed before: at 15:00 UTC on 2026-03-29 the range ended at
    /// 18:00 UTC, and a 21:30 show in Zurich was not tonight.
    @Test("the broad range holds every zone's window, at every time of day, across DST changes")
    func broadHoldsEveryZone() throws {
        let zones = [
            "Europe/Zurich", "Europe/London", "America/Los_Angeles", "America/New_York", "America/St_Johns",
            "Pacific/Kiritimati", "Pacific/Pago_Pago", "Pacific/Chatham", "Asia/Kathmandu", "Asia/Tokyo",
            "Australia/Eucla", "Australia/Lord_Howe", "Pacific/Auckland", "Antarctica/Troll", "UTC",
        ].compactMap(TimeZone.init(identifier:))
        #expect(zones.count == 15)
        let starts = [
            "2026-03-27T00:00:00Z", "2026-03-29T00:00:00Z", "2026-04-03T00:00:00Z", "2026-10-23T00:00:00Z",
            "2026-10-25T00:00:00Z", "2026-11-27T00:00:00Z",
        ]
        let windows: [When] = [.tonight, .weekend, .dates(CalendarDate("2026-11-28")!, CalendarDate("2026-11-29")!)]
        var misses: [String] = []
        for start in starts {
            let day = try #require(ISO8601DateFormatter().date(from: start))
            for minutes in stride(from: 0, to: 48 * 60, by: 10) {
                let now = day.addingTimeInterval(Double(minutes) * 60)
                for when in windows {
                    let broad = EventWindows.broad(when, now: now)
                    for zone in zones {
                        let window = LocalClock.window(when, now: now, timeZone: zone)
                        if window.start < broad.start || window.end > broad.end {
                            misses.append("\(when) at \(now) in \(zone.identifier): \(window) not in \(broad)")
                        }
                    }
                }
            }
        }
        #expect(misses.isEmpty, "\(misses.count) misses, first: \(misses.prefix(3))")
    }
}
