import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct EventsHandlers: Sendable {
    let users: UserRepository
    let places: PlaceRepository
    let events: EventRepository
    let catalog: CatalogRepository
    let sessions: SessionRepository
    let eventService: EventService

    func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output {
        let limit = try Paging.limit(input.query.limit)
        let search = try await EventSearch(input.query, now: Date(), categories: catalog.categories)
        let page = try await eventService.searchPage(
            search, cursor: input.query.cursor, limit: limit,
            callerID: RequestInfo.current?.principal?.userID)
        return .ok(.init(body: .json(page)))
    }

    func getEvent(_ input: Operations.GetEvent.Input) async throws -> Operations.GetEvent.Output {
        let event = try await eventService.find(input.path.eventId)
        let caller = RequestInfo.current?.principal?.userID
        guard let item = try await eventService.assembler.assemble([event], callerID: caller, withChanges: true).first
        else {
            throw APIError.notFound("No such event.")
        }
        return .ok(.init(body: .json(item)))
    }

    func createEvent(_ input: Operations.CreateEvent.Input) async throws -> Operations.CreateEvent.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        var event = EventRecord.draft(kind: .party, organizerID: caller.userID, now: Clock.millis())
        let patch = Components.Schemas.EventPatch(
            name: body.name, description: body.description, placeId: body.placeId, localDate: body.localDate,
            localTime: body.localTime, durationMinutes: body.durationMinutes, categoryId: body.categoryId,
            minPrice: body.minPrice, maxPrice: body.maxPrice, currency: body.currency, ticketURL: body.ticketURL)
        try await EventEdit(places: places, catalog: catalog).apply(patch, to: &event, creating: true)
        try await events.insert(event, performers: [])
        let item = try await eventService.assembler.assemble([event], callerID: caller.userID, withChanges: true)
        return .created(.init(body: .json(item[0])))
    }

    func updateEvent(_ input: Operations.UpdateEvent.Input) async throws -> Operations.UpdateEvent.Output {
        let caller = try RequestInfo.requireMember()
        let patch = input.body.json
        var event = try await eventService.find(input.path.eventId)
        try EventService.requireOrganizer(caller, of: event)
        let old = event
        try await EventEdit(places: places, catalog: catalog).apply(patch, to: &event, creating: false)
        return .ok(.init(body: .json(try await eventService.saveEdit(event, from: old, by: caller))))
    }

    func cancelEvent(_ input: Operations.CancelEvent.Input) async throws -> Operations.CancelEvent.Output {
        let caller = try RequestInfo.requireMember()
        var event = try await eventService.find(input.path.eventId)
        try EventService.requireOrganizer(caller, of: event)
        if event.status != .cancelled {
            let old = event
            event.status = .cancelled
            return .ok(.init(body: .json(try await eventService.saveEdit(event, from: old, by: caller))))
        }
        let item = try await eventService.assembler.assemble([event], callerID: caller.userID, withChanges: true)
        return .ok(.init(body: .json(item[0])))
    }

    func listAttendees(_ input: Operations.ListAttendees.Input) async throws -> Operations.ListAttendees.Output {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        let after = try Paging.keyset(input.query.cursor)
        let event = try await eventService.find(input.path.eventId)
        try EventService.requireOrganizer(caller, of: event)
        let rows = try await events.attendees(
            of: event.id, status: input.query.status, viewer: caller.userID, after: after,
            limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let people = try await users.find(ids: page.map(\.userID))
        let items: [Components.Schemas.Attendee] = page.compactMap { row in
            people[row.userID].map {
                .init(
                    user: .init($0), status: row.status,
                    since: Clock.date(row.since))
            }
        }
        let next = rows.count > limit ? page.last.map { Paging.keysetCursor($0.since, $0.userID) } : nil
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func setAttendance(_ input: Operations.SetAttendance.Input) async throws -> Operations.SetAttendance.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        let event = try await eventService.find(input.path.eventId)
        if event.status.isCalledOff && body.status != .following {
            throw APIError.conflict(
                "This event is \(event.status.rawValue); you can only follow it.", code: .eventCancelled)
        }
        guard
            let updated = try await events.setAttendance(
                eventID: event.id, userID: caller.userID, status: body.status, now: Clock.millis())
        else { throw APIError.notFound("No such event.") }
        return .ok(
            .init(
                body: .json(
                    .init(
                        eventId: event.id, status: body.status,
                        counts: .init(
                            going: Int(updated.goingCount), interested: Int(updated.interestedCount),
                            following: Int(updated.followingCount))))))
    }

    func deleteAttendance(_ input: Operations.DeleteAttendance.Input) async throws
        -> Operations.DeleteAttendance.Output
    {
        let caller = try RequestInfo.requireMember()
        guard
            try await events.setAttendance(
                eventID: input.path.eventId, userID: caller.userID, status: nil, now: Clock.millis()) != nil
        else { throw APIError.notFound("No such event.") }
        return .noContent(.init())
    }

    func listMyEvents(_ input: Operations.ListMyEvents.Input) async throws -> Operations.ListMyEvents.Output {
        let caller = try RequestInfo.requireCaller()
        let limit = try Paging.limit(input.query.limit)
        let after = try Paging.keyset(input.query.cursor)
        let now = Clock.millis()
        let past = input.query.past == true
        let records = try await events.events(
            of: caller.userID, status: input.query.status, kinds: EventKind.set(input.query.kind),
            from: past ? nil : now,
            until: past ? now : nil, after: after, limit: limit + 1)
        let page = Array(records.prefix(limit))
        let items = try await eventService.assembler.assemble(page, callerID: caller.userID)
        let next = records.count > limit ? page.last.map { Paging.keysetCursor($0.startAt, $0.id) } : nil
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func listCategories(_ input: Operations.ListCategories.Input) async throws -> Operations.ListCategories.Output {
        .ok(.init(body: .json(.init(items: CategoryTree.nested(try await catalog.categories())))))
    }

}
