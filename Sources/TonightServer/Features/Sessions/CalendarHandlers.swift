import Foundation
import OpenAPIRuntime
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct CalendarHandlers: Sendable {
    let users: UserRepository
    let geo: GeoService
    let events: EventRepository
    let sessions: SessionRepository
    let eventService: EventService
    let people: People

    func getMyCalendar(_ input: Operations.GetMyCalendar.Input) async throws -> Operations.GetMyCalendar.Output {
        let caller = try RequestInfo.requireCaller()
        var issues: [FieldIssue] = []
        var zone = TimeZone.gmt
        if let name = input.query.timeZone {
            if let found = TimeZone(identifier: name) {
                zone = found
            } else {
                issues.append(
                    .init(field: "timeZone", code: "invalid", message: "Use an IANA zone like Europe/Paris."))
            }
        } else if let home = geo.homeCity(try await users.find(id: caller.userID)?.homeCity),
            let found = TimeZone(identifier: home.timeZone)
        {
            zone = found
        }
        let today = LocalClock.localDate(of: Date(), in: zone)
        func date(_ text: String?, _ field: String) -> CalendarDate? {
            guard let text else { return nil }
            guard let parsed = CalendarDate(text) else {
                issues.append(.init(field: field, code: "invalid", message: "Use YYYY-MM-DD."))
                return nil
            }
            return parsed
        }
        let first = date(input.query.from, "from") ?? today
        let last = date(input.query.to, "to") ?? first.adding(days: 30)
        if last < first {
            issues.append(.init(field: "to", code: "before_from", message: "to is before from."))
        } else if first.days(until: last) > 92 {
            issues.append(.init(field: "to", code: "too_long", message: "Ask for at most 92 days at once."))
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
        let days = try await calendarDays(of: caller.userID, from: first, through: last, zone: zone)
        return .ok(
            .init(
                body: .json(
                    .init(
                        timeZone: zone.identifier,
                        days: days.map { .init(date: $0.date.description, items: $0.items) }))))
    }

    /// What the user attends (going or interested) or organises between two dates, by local day.
    func calendarDays(of userID: String, from first: CalendarDate, through last: CalendarDate, zone: TimeZone)
        async throws -> [(date: CalendarDate, items: [Components.Schemas.Event])]
    {
        let midnight = LocalTime(hour: 0, minute: 0)!
        let start = LocalClock.instant(date: first, time: midnight, timeZone: zone)
        let end = LocalClock.instant(date: last.adding(days: 1), time: midnight, timeZone: zone)
        let records = try await events.events(
            of: userID, status: nil, from: Clock.millis(start), until: Clock.millis(end), after: nil, limit: 2000)
        let items = try await eventService.assembler.assemble(records, callerID: userID).filter {
            $0.organizerId == userID || $0.myStatus == .going || $0.myStatus == .interested
        }
        let grouped = Dictionary(grouping: items) { LocalClock.localDate(of: $0.start, in: zone) }
        return grouped.keys.sorted().map { (date: $0, items: grouped[$0] ?? []) }
    }

    func createCalendarSubscription(_ input: Operations.CreateCalendarSubscription.Input) async throws
        -> Operations.CreateCalendarSubscription.Output
    {
        let caller = try RequestInfo.requireMember()
        let (token, hash) = TokenService.makeRefreshToken()
        try await sessions.setCalendarToken(userID: caller.userID, tokenHash: hash, now: Clock.millis())
        return .ok(.init(body: .json(.init(url: "/v1/calendar/\(token)"))))
    }

    /// The feed covers the last 30 and the next 180 days in UTC; each entry carries its own instants.
    func getCalendarFeed(_ input: Operations.GetCalendarFeed.Input) async throws -> Operations.GetCalendarFeed.Output {
        guard let userID = try await sessions.calendarUser(tokenHash: TokenService.hash(input.path.token)) else {
            throw APIError.notFound("No such calendar.")
        }
        let now = Date()
        let today = LocalClock.localDate(of: now, in: .gmt)
        let days = try await calendarDays(
            of: userID, from: today.adding(days: -30), through: today.adding(days: 180), zone: .gmt)
        let entries = days.flatMap(\.items).map { event in
            var details: [String] = []
            if let session = event.session {
                details.append(
                    "\(session.sport.name), \(session.skill.rawValue); \(session.occupied) of \(session.capacity) players."
                )
            }
            if let description = event.description { details.append(description) }
            let address = [event.place.address.street, event.place.address.city].compactMap { $0 }
            return CalendarEntry(
                uid: event.id + "@tonight", summary: event.name, start: event.start, end: event.end,
                location: ([event.place.name] + address).joined(separator: ", "),
                geo: GeoPoint(latitude: event.place.location.lat, longitude: event.place.location.lon),
                description: details.isEmpty ? nil : details.joined(separator: "\n"),
                url: event.ticketURL, cancelled: [.cancelled, .removed].contains(event.status), updated: event.updatedAt
            )
        }
        let text = ICalendarWriter.document(name: "Tonight", entries: entries, now: now)
        return .ok(.init(body: .textCalendar(HTTPBody(text))))
    }
}
