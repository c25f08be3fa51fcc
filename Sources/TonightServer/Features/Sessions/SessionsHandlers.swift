import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct SessionsHandlers: Sendable {
    let users: UserRepository
    let geo: GeoService
    let places: PlaceRepository
    let events: EventRepository
    let catalog: CatalogRepository
    let notifier: Notifier
    let sessions: SessionRepository
    let eventService: EventService
    let people: People

    func listSports(_ input: Operations.ListSports.Input) async throws -> Operations.ListSports.Output {
        let all = try await eventService.assembler.sports().values.sorted { ($0.name, $0.slug) < ($1.name, $1.slug) }
        return .ok(.init(body: .json(.init(items: all.map(Components.Schemas.Sport.init)))))
    }

    func createSport(_ input: Operations.CreateSport.Input) async throws -> Operations.CreateSport.Output {
        _ = try RequestInfo.requireAdmin()
        let body = input.body.json
        var issues: [FieldIssue] = []
        let slug = body.slug
        if !SportCatalog.isValidSlug(slug) {
            issues.append(.init(field: "slug", code: "invalid", message: "Use 2–40 of a–z, 0–9 and -."))
        }
        let name = body.name.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty || name.count > 60 || !TextRules.isClean(name) {
            issues.append(.init(field: "name", code: "invalid", message: "Use 1–60 characters."))
        }
        let icon = body.icon ?? "sportscourt"
        if icon.isEmpty || icon.count > 60
            || !icon.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == ".") })
        {
            issues.append(.init(field: "icon", code: "invalid", message: "Use an icon name like figure.run."))
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
        let sport = Sport(slug: slug, name: name, icon: icon)
        guard SportCatalog.bySlug[slug] == nil, try await sessions.insertSport(sport, now: Clock.millis()) else {
            throw APIError.conflict("A sport with this slug exists.", code: .sportExists)
        }
        return .created(.init(body: .json(.init(sport))))
    }

    func createSession(_ input: Operations.CreateSession.Input) async throws -> Operations.CreateSession.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        var event = EventRecord.draft(kind: .session, organizerID: caller.userID, now: Clock.millis())
        let patch = Components.Schemas.SessionPatch(
            sport: body.sport, skill: body.skill, name: body.name, notes: body.notes, placeId: body.placeId,
            spot: body.spot, localDate: body.localDate, localTime: body.localTime,
            durationMinutes: body.durationMinutes, capacity: body.capacity)
        let newSpot = try await sessionEdit().apply(patch, to: &event, creating: true)
        if let newSpot { event.placeID = try await storeSpot(newSpot).id }
        try await events.insertSession(event, creator: caller.userID)
        event.goingCount = 1
        let item = try await eventService.assembler.assemble([event], callerID: caller.userID, withChanges: true)
        return .created(.init(body: .json(item[0])))
    }

    func updateSession(_ input: Operations.UpdateSession.Input) async throws -> Operations.UpdateSession.Output {
        let caller = try RequestInfo.requireMember()
        let patch = input.body.json
        var event = try await findSession(input.path.eventId)
        try EventService.requireOrganizer(caller, of: event)
        let old = event
        let newSpot = try await sessionEdit().apply(patch, to: &event, creating: false)
        if let newSpot { event.placeID = try await storeSpot(newSpot).id }
        return .ok(.init(body: .json(try await eventService.saveEdit(event, from: old, by: caller))))
    }

    func deleteSession(_ input: Operations.DeleteSession.Input) async throws -> Operations.DeleteSession.Output {
        let caller = try RequestInfo.requireMember()
        let event = try await findSession(input.path.eventId)
        try EventService.requireOrganizer(caller, of: event)
        let when = EventChangeText.when(
            Clock.date(event.startAt), timeZone: TimeZone(identifier: event.timeZone) ?? .gmt)
        let notice = NotificationDraft(
            userID: "", kind: .sessionDeleted, text: "“\(event.name)” on \(when) was deleted by its organiser",
            actorID: caller.userID)
        let written = try await sessions.delete(eventID: event.id, telling: notice, now: Clock.millis())
        await notifier.publish(written)
        return .noContent(.init())
    }

    func listSessionPlayers(_ input: Operations.ListSessionPlayers.Input) async throws
        -> Operations.ListSessionPlayers.Output
    {
        let caller = try RequestInfo.requireCaller()
        let event = try await findSession(input.path.eventId)
        let ids = try await sessions.players(of: event.id, viewer: caller.userID)
        let people = try await users.find(ids: ids)
        return .ok(
            .init(
                body: .json(.init(items: ids.compactMap { people[$0].map(Components.Schemas.PublicProfile.init) })))
        )
    }

    func searchSessions(_ input: Operations.SearchSessions.Input) async throws -> Operations.SearchSessions.Output {
        let limit = try Paging.limit(input.query.limit)
        let search = try SessionSearch(input.query, now: Date()) { try RequestInfo.requireCaller().userID }
        let page = try await eventService.searchPage(
            search, cursor: input.query.cursor, limit: limit,
            callerID: RequestInfo.current?.principal?.userID)
        return .ok(.init(body: .json(page)))
    }

    func getPlayerStats(_ input: Operations.GetPlayerStats.Input) async throws -> Operations.GetPlayerStats.Output {
        _ = try RequestInfo.requireCaller()
        let user = try await people.profile(input.path.username)
        let now = Clock.millis()
        let rows = try await sessions.played(by: user.id, before: now)
        let sports = try await eventService.assembler.sports()
        var perSport: [String: (sessions: Int, minutes: Int64)] = [:]
        for row in rows {
            perSport[row.sport, default: (0, 0)].sessions += row.sessions
            perSport[row.sport, default: (0, 0)].minutes += row.minutes
        }
        let items = perSport.sorted { ($1.value.sessions, $0.key) < ($0.value.sessions, $1.key) }.map {
            Components.Schemas.SportStats(
                sport: .init(sports[$0.key] ?? Sport(slug: $0.key, name: $0.key, icon: "sportscourt")),
                sessions: $0.value.sessions, minutes: Int($0.value.minutes))
        }
        let minutes = Int(perSport.values.map(\.minutes).reduce(0, +))
        return .ok(
            .init(
                body: .json(
                    .init(
                        userId: user.id, sessionsPlayed: perSport.values.map(\.sessions).reduce(0, +),
                        minutesPlayed: minutes, hoursPlayed: (Double(minutes) / 6).rounded() / 10,
                        distinctPlaymates: try await sessions.distinctPlaymates(of: user.id, before: now),
                        friends: try await sessions.friendCount(of: user.id), sports: items))))
    }

    func sessionEdit() async throws -> SessionEdit {
        SessionEdit(places: places, catalog: catalog, geo: geo, sports: try await eventService.assembler.sports())
    }

    /// Stores a new spot; if another request stored the same spot first, that one is used.
    func storeSpot(_ spot: PlaceRecord) async throws -> PlaceRecord {
        do {
            try await places.insert(spot)
            return spot
        } catch {
            guard let stored = try await places.find(id: spot.id) else { throw error }
            return stored
        }
    }

    func findSession(_ id: String) async throws -> EventRecord {
        guard let event = try await events.find(id: id), event.kind == .session else {
            throw APIError.notFound("No such session.")
        }
        return event
    }
}
