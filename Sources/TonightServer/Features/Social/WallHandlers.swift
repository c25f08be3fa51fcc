import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct WallHandlers: Sendable {
    let users: UserRepository
    let wall: WallRepository
    let notifier: Notifier
    let notifications: NotificationRepository
    let people: People
    let eventService: EventService

    func getWall(_ input: Operations.GetWall.Input) async throws -> Operations.GetWall.Output {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        let after = try Paging.keyset(input.query.cursor)
        let today = CalendarDate(date: Date())
        let (me, event) = try await wallAccess(caller, eventID: input.path.eventId, today: today)
        let rows = try await wall.wall(eventID: event.id, viewer: me, today: today, after: after, limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let items = page.map {
            Components.Schemas.WallCard(
                user: .init($0.user), gender: $0.user.gender.flatMap(Components.Schemas.Gender.init(rawValue:)),
                goingSince: Clock.date($0.goingSince))
        }
        let next = rows.count > limit ? page.last.map { Paging.keysetCursor($0.goingSince, $0.user.id) } : nil
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func swipe(_ input: Operations.Swipe.Input) async throws -> Operations.Swipe.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        let today = CalendarDate(date: Date())
        let (me, event) = try await wallAccess(caller, eventID: input.path.eventId, today: today)
        let other = try await people.reachable(input.path.userId, from: caller, field: "userId")
        guard try await wall.isGoing(eventID: event.id, userID: other.id),
            WallRules.isAdult(birthDate: other.birthDate, today: today)
        else { throw APIError.notFound("This person is not on this event's wall.") }
        let like = body.decision == .like
        let result: (match: MatchRecord?, notifications: [NotificationRecord])
        do {
            result = try await wall.swipe(
                user: me.id, target: other.id, eventID: event.id, like: like, now: Clock.millis()
            ) { match in
                [
                    .init(
                        userID: other.id, kind: .match, text: "You matched with \(me.shownName) at \(event.name)",
                        actorID: me.id, eventID: event.id, matchID: match.id),
                    .init(
                        userID: me.id, kind: .match, text: "You matched with \(other.shownName) at \(event.name)",
                        actorID: other.id, eventID: event.id, matchID: match.id),
                ]
            }
        } catch SwipeRefusal.alreadyMatched {
            throw APIError.conflict("You are matched with this person; unmatch instead.", code: .alreadyMatched)
        }
        await notifier.publish(result.notifications)
        let match = result.match.map {
            Components.Schemas.Match(
                id: $0.id, user: .init(other), eventId: $0.eventID, eventName: event.name,
                conversationId: $0.conversationID, createdAt: Clock.date($0.createdAt))
        }
        return .ok(.init(body: .json(.init(userId: other.id, decision: body.decision, match: match))))
    }

    func listMatches(_ input: Operations.ListMatches.Input) async throws -> Operations.ListMatches.Output {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        let rows = try await wall.matches(
            of: caller.userID, before: try Paging.keyset(input.query.cursor), limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let people = try await users.find(ids: page.map { $0.match.other(than: caller.userID) })
        let items = page.compactMap { row in
            people[row.match.other(than: caller.userID)].map {
                Components.Schemas.Match(
                    id: row.match.id, user: .init($0), eventId: row.match.eventID, eventName: row.eventName,
                    conversationId: row.match.conversationID, createdAt: Clock.date(row.match.createdAt))
            }
        }
        let next =
            rows.count > limit ? page.last.map { Paging.keysetCursor($0.match.createdAt, $0.match.id) } : nil
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func unmatch(_ input: Operations.Unmatch.Input) async throws -> Operations.Unmatch.Output {
        let caller = try RequestInfo.requireMember()
        guard let match = try await wall.match(id: input.path.matchId), match.includes(caller.userID) else {
            throw APIError.notFound("No such match.")
        }
        try await wall.unmatch(match, now: Clock.millis())
        return .noContent(.init())
    }

    /// The caller and the event, when the caller may use its wall: an adult account going to it.
    private func wallAccess(_ caller: Principal, eventID: String, today: CalendarDate) async throws
        -> (UserRecord, EventRecord)
    {
        let event = try await eventService.find(eventID)
        let me = try await people.current(caller)
        guard WallRules.isAdult(birthDate: me.birthDate, today: today) else {
            throw APIError.forbidden("Event walls are for people 18 and over.", code: .adultsOnly)
        }
        guard try await wall.isGoing(eventID: event.id, userID: me.id) else {
            throw APIError.forbidden("Say you are going to this event to see who else is.", code: .notGoing)
        }
        return (me, event)
    }
}
