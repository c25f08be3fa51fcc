import Foundation
import Testing
import TonightCore

@testable import TonightServer

@Suite("Opening hours of stored places")
struct PlaceHoursTests {
    func place(_ hours: String?, zone: String = "Europe/Berlin") -> PlaceRecord {
        PlaceRecord(
            id: "p", name: "P", category: "bar", latitude: 52.5, longitude: 13.4, timeZone: zone, openingHours: hours,
            createdAt: 0, updatedAt: 0)
    }

    /// 2031-01-17 (a Friday) at `hour`:00 in Berlin (UTC+1 in winter).
    func friday(_ hour: Int) -> Date { Date(timeIntervalSince1970: 1_926_370_800 + Double(hour) * 3600) }

    @Test("open now and open tonight follow the place's own clock; unknown stays unknown")
    func states() {
        #expect(LocalClock.localDate(of: friday(12), in: TimeZone(identifier: "Europe/Berlin")!).weekday == .friday)
        let late = place("Fr-Sa 20:00-04:00")
        #expect(PlaceHours.state(late, at: friday(12)) == .closed)
        #expect(PlaceHours.openTonight(late, now: friday(12)) == .open)
        #expect(PlaceHours.state(late, at: friday(23)) == .open)
        // Saturday 03:00 is still Friday night's span.
        #expect(PlaceHours.state(late, at: friday(27)) == .open)
        let lunch = place("Mo-Su 11:00-14:00")
        #expect(PlaceHours.openTonight(lunch, now: friday(15)) == .closed)
        #expect(PlaceHours.openTonight(place("Mo-Fr 18:00-22:00; PH off"), now: friday(12)) == .unknown)
        #expect(PlaceHours.state(place(nil), at: friday(12)) == .unknown)
        // The same instant is 04:00 on Saturday in Tokyo: what is left of the night there is closed.
        #expect(PlaceHours.openTonight(place("Mo-Su 20:00-23:00", zone: "Asia/Tokyo"), now: friday(20)) == .closed)
    }
}
