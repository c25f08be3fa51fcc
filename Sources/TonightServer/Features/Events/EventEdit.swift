import Foundation
import TonightAPI
import TonightCore

/// Validation and application of event creation and edits; every invalid field is reported at once.
struct EventEdit {
    let places: PlaceRepository
    let catalog: CatalogRepository

    /// Applies `patch`, throwing every invalid field at once (with `earlier` issues found by the
    /// caller). `knownPlace` stands in for `patch.placeId` when the place is not stored yet.
    func apply(
        _ patch: Components.Schemas.EventPatch, to event: inout EventRecord, creating: Bool,
        knownPlace: PlaceRecord? = nil, earlier: [FieldIssue] = []
    ) async throws {
        var issues = earlier
        if let name = patch.name?.trimmingCharacters(in: .whitespacesAndNewlines) {
            if name.isEmpty || name.count > 200 || !TextRules.isClean(name) {
                issues.append(.init(field: "name", code: "invalid", message: "Use 1–200 characters."))
            } else {
                event.name = name
            }
        }
        if let description = patch.description {
            if description.count > 5000 || !TextRules.isClean(description, multiline: true) {
                issues.append(.init(field: "description", code: "invalid", message: "At most 5000 characters."))
            } else {
                event.description = description.isEmpty ? nil : description
            }
        }
        var place: PlaceRecord?
        if let knownPlace {
            place = knownPlace
            event.placeID = knownPlace.id
        } else if let placeID = patch.placeId {
            place = try await places.find(id: placeID)
            if let place {
                event.placeID = place.id
            } else {
                issues.append(.init(field: "placeId", code: "not_found", message: "No such place."))
            }
        } else if !event.placeID.isEmpty {
            place = try await places.find(id: event.placeID)
        }
        var date = CalendarDate(event.localDate)
        var time = event.localTime.flatMap(LocalTime.init)
        if let text = patch.localDate {
            date = CalendarDate(text)
            if date == nil { issues.append(.init(field: "localDate", code: "invalid", message: "Use YYYY-MM-DD.")) }
        }
        if let text = patch.localTime {
            time = LocalTime(text)
            if time == nil { issues.append(.init(field: "localTime", code: "invalid", message: "Use HH:MM.")) }
        }
        if let currency = patch.currency {
            if currency.count == 3 && currency.allSatisfy({ $0.isASCII && $0.isLetter }) {
                event.currency = currency.uppercased()
            } else {
                issues.append(.init(field: "currency", code: "invalid", message: "Use an ISO 4217 code like EUR."))
            }
        }
        for (value, field) in [(patch.minPrice, "minPrice"), (patch.maxPrice, "maxPrice")] {
            guard let value else { continue }
            if !value.isFinite || value < 0 || value > 1_000_000 {
                issues.append(.init(field: field, code: "out_of_range", message: "Use 0 to 1000000."))
            } else if field == "minPrice" {
                event.minPrice = value
            } else {
                event.maxPrice = value
            }
        }
        if let low = event.minPrice, let high = event.maxPrice, low > high {
            issues.append(.init(field: "maxPrice", code: "below_min", message: "maxPrice is below minPrice."))
        }
        if let link = patch.ticketURL {
            if link.isEmpty {
                event.ticketURL = nil
            } else if WebLink.isValid(link) {
                event.ticketURL = link
            } else {
                issues.append(.init(field: "ticketURL", code: "invalid_url", message: "Use an absolute http(s) URL."))
            }
        }
        if let category = patch.categoryId {
            if category.isEmpty {
                event.categoryID = nil
            } else if try await catalog.categories().contains(where: { $0.id == category }) {
                event.categoryID = category
            } else {
                issues.append(.init(field: "categoryId", code: "not_found", message: "No such category."))
            }
        }
        if let minutes = patch.durationMinutes, !(1...10080).contains(minutes) {
            issues.append(.init(field: "durationMinutes", code: "out_of_range", message: "Use 1 to 10080 minutes."))
        }
        if let status = patch.status { event.status = EventStatus(rawValue: status.rawValue) ?? event.status }
        guard issues.isEmpty, let place, let date, let time else { throw APIError.validation(issues) }

        // The start is the place's wall-clock time; moving the place re-reads it in the new zone.
        let zone = TimeZone(identifier: place.timeZone) ?? .gmt
        let start = LocalClock.instant(date: date, time: time, timeZone: zone)
        let duration = patch.durationMinutes.map { Int64($0) * 60_000 } ?? event.endAt.map { $0 - event.startAt }
        if creating && start.timeIntervalSinceNow < -3600 {
            throw APIError.validation([.init(field: "localDate", code: "in_past", message: "The start is in the past.")]
            )
        }
        event.localDate = date.description
        event.localTime = time.description
        event.timeZone = place.timeZone
        event.startAt = Clock.millis(start)
        event.endAt = duration.map { event.startAt + $0 }
    }
}

/// The change records between two versions of an event: place, start and status.
enum EventChanges {
    static func between(_ old: EventRecord, _ new: EventRecord, origin: String, now: Int64 = Clock.millis())
        -> [EventChangeRecord]
    {
        var changes: [EventChangeRecord] = []
        func record(_ field: String, _ before: String?, _ after: String?) {
            changes.append(
                EventChangeRecord(
                    id: Identifier.make(), eventID: new.id, field: field, oldValue: before, newValue: after,
                    origin: origin, changedAt: now))
        }
        if old.placeID != new.placeID { record("place", old.placeID, new.placeID) }
        if old.startAt != new.startAt || old.localTime != new.localTime {
            record("start", Self.instant(old), Self.instant(new))
        }
        if old.status != new.status { record("status", old.status.rawValue, new.status.rawValue) }
        return changes
    }

    static func instant(_ event: EventRecord) -> String {
        event.localTime == nil ? event.localDate : Clock.date(event.startAt).formatted(.iso8601)
    }
}

/// `when=` windows applied to events, each in its own time zone.
enum EventWindows {
    /// A UTC range that holds the window in every time zone (UTC−12 to UTC+14).
    ///
    /// The window is not monotone in the zone's offset: where it is still before 06:00, tonight
    /// ends this morning, while a zone a few hours west is in its afternoon and its tonight ends
    /// tomorrow morning. So every quarter-hour offset is tried (every zone's offset is one), not
    /// only the two extremes — those alone cut the range short between 12:00 and 16:00 UTC and
    /// lost Europe's evening shows. A zone whose offset changes inside the window (a DST change
    /// on the weekend) reads its ends with two offsets, which no fixed offset does: the range is
    /// widened by the largest such change in use (two hours, Antarctica/Troll).
    static func broad(_ when: When, now: Date) -> DateInterval {
        let windows = offsets.map { LocalClock.window(when, now: now, timeZone: $0) }
        return DateInterval(
            start: windows.map(\.start).min()!.addingTimeInterval(-maxShift),
            end: windows.map(\.end).max()!.addingTimeInterval(maxShift))
    }

    private static let maxShift: TimeInterval = 2 * 3600

    /// UTC−12:00 to UTC+14:00 in steps of 15 minutes.
    private static let offsets = stride(from: -12 * 3600, through: 14 * 3600, by: 900).compactMap {
        TimeZone(secondsFromGMT: $0)
    }

    /// How much earlier than a window SQL starts reading (a day and a bit: see ``contains(_:when:now:)``).
    static let slack: Int64 = 26 * 3_600_000

    /// Not over yet: it starts from now on, is running, or its time is not announced and its date is
    /// today or later at the place.
    static func isUpcoming(_ event: EventRecord, now: Date) -> Bool {
        let start = Clock.date(event.startAt)
        if event.localTime == nil, let date = CalendarDate(event.localDate) {
            let zone = TimeZone(identifier: event.timeZone) ?? .gmt
            return date >= LocalClock.localDate(of: now, in: zone)
        }
        if start >= now { return true }
        return event.endAt.map { Clock.date($0) > now } ?? false
    }

    /// Whether `event` falls in the window in its own time zone: it starts inside it or is running at
    /// its start; an event whose time is not announced counts when its date is a day of the window.
    static func contains(_ event: EventRecord, when: When, now: Date) -> Bool {
        let zone = TimeZone(identifier: event.timeZone) ?? .gmt
        let window = LocalClock.window(when, now: now, timeZone: zone)
        if event.localTime == nil, let date = CalendarDate(event.localDate) {
            let first = LocalClock.localDate(of: window.start, in: zone)
            let last = LocalClock.localDate(of: window.end.addingTimeInterval(-6 * 3600 - 1), in: zone)
            return first <= date && date <= last
        }
        let start = Clock.date(event.startAt)
        if start >= window.start && start < window.end { return true }
        if let end = event.endAt { return start < window.start && Clock.date(end) > window.start }
        return false
    }
}
