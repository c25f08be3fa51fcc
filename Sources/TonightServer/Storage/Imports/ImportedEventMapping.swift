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

    /// The columns an import writes into an event's row: ``values(of:)``'s, then
    /// `name_folded`, `created_at`, `updated_at`, `import_hash` and `import_raw_hash`.
    static let columns = [
        "id", "kind", "name", "description", "place_id", "start_at", "end_at", "local_date", "local_time",
        "time_zone", "status", "category_id", "min_price", "max_price", "currency", "ticket_url", "onsale_at",
        "source", "source_id", "name_folded", "created_at", "updated_at", "import_hash", "import_raw_hash",
    ]

    /// The values of an event's row that come from the file, in ``columns``' order.
    static func values(of event: EventRecord) -> [SQLValue] {
        [
            .init(event.id), .init(event.kind.rawValue), .init(event.name), .init(event.description),
            .init(event.placeID), .init(event.startAt), .init(event.endAt), .init(event.localDate),
            .init(event.localTime), .init(event.timeZone), .init(event.status.rawValue), .init(event.categoryID),
            .init(event.minPrice), .init(event.maxPrice), .init(event.currency), .init(event.ticketURL),
            .init(event.onSaleAt), .init(event.source), .init(event.sourceID),
        ]
    }

    /// The columns a stored event's row changes to take `new` (``values(of:)``): only those, so an index over
    /// none of them is not written (a new price or status rewrites no index of the events' eight).
    static func changedColumns(_ old: EventRecord, _ new: [SQLValue]) -> [String] {
        var changed: [String] = []
        for (index, value) in values(of: old).enumerated() where value != new[index] {
            changed.append(columns[index])
            if columns[index] == "name" { changed.append("name_folded") }
        }
        return changed + ["updated_at", "import_hash", "import_raw_hash"]
    }
}
