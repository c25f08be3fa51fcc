import Foundation
import TonightCore

/// Maps an imported event onto an event row in its place's time zone.
enum ImportedEventMapping {
    static func record(
        _ event: ImportedEvent, id: String, placeID: String, zone zoneID: String, in zone: TimeZone, source: String,
        categoryKey: String?, now: Int64
    ) -> EventRecord {
        let (startAt, date, time) = resolve(event.start, zone: zone)
        let end = event.end.map { resolve($0, zone: zone).0 }
        return EventRecord(
            id: id, kind: .show, name: event.name, description: event.description, placeID: placeID, startAt: startAt,
            endAt: end.flatMap { $0 > startAt ? $0 : nil }, localDate: date.description, localTime: time?.description,
            timeZone: zoneID, status: event.status, categoryID: categoryKey,
            minPrice: event.minPrice.map { NSDecimalNumber(decimal: $0).doubleValue },
            maxPrice: event.maxPrice.map { NSDecimalNumber(decimal: $0).doubleValue }, currency: event.currency,
            ticketURL: event.url, onSaleAt: event.onSaleDate.map(Clock.millis), organizerID: nil, source: source,
            sourceID: event.id, createdAt: now, updatedAt: now)
    }

    /// The instant, local date and local time (nil when not announced) of an imported time.
    static func resolve(_ time: ImportedTime, zone placeZone: TimeZone) -> (Int64, CalendarDate, LocalTime?) {
        switch time {
        case .local(let date, let clock, let zoneID):
            let zone = zoneID.flatMap(TimeZone.init(identifier:)) ?? placeZone
            let instant = LocalClock.instant(date: date, time: clock ?? .midnight, timeZone: zone)
            return (Clock.millis(instant), date, clock)
        case .instant(let instant):
            return (
                Clock.millis(instant), LocalClock.localDate(of: instant, in: placeZone),
                LocalClock.localTime(of: instant, in: placeZone)
            )
        }
    }
}
