import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct InvitationsHandlers: Sendable {
    let users: UserRepository
    let events: EventRepository
    let social: SocialRepository
    let notifier: Notifier
    let invitations: InvitationRepository
    let people: People
    let eventService: EventService

    func inviteFriends(_ input: Operations.InviteFriends.Input) async throws -> Operations.InviteFriends.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        let event = try await eventService.find(input.path.eventId)
        guard !event.status.isCalledOff else {
            throw APIError.conflict("This event is \(event.status.rawValue).", code: .eventCancelled)
        }
        let mine = try await events.attendance(of: caller.userID, in: [event.id])[event.id]
        guard event.organizerID == caller.userID || mine == .going || mine == .interested else {
            throw APIError.forbidden(
                "Say you are going (or interested) before inviting friends.", code: .notAttending)
        }
        let me = try await people.current(caller)
        let candidates = NSOrderedSet(array: body.userIds).compactMap { $0 as? String }.filter { $0 != me.id }
        let friends = try await social.friends(of: me.id, among: candidates)
        let going = try await events.going(in: event.id, among: candidates)
        var skipped: [Components.Schemas.InviteSkip] = []
        var invitees: [String] = []
        for id in candidates {
            if !friends.contains(id) {
                skipped.append(.init(userId: id, reason: .notFriend))
            } else if going.contains(id) {
                skipped.append(.init(userId: id, reason: .alreadyGoing))
            } else {
                invitees.append(id)
            }
        }
        let (created, written) = try await invitations.invite(
            eventID: event.id, from: me.id, invitees: invitees, now: Clock.millis()
        ) { invitation in
            NotificationDraft(
                userID: invitation.toID, kind: .invitation, text: "\(me.shownName) invited you to \(event.name)",
                actorID: me.id, eventID: event.id)
        }
        await notifier.publish(written)
        let fresh = Set(created.map(\.toID))
        skipped += invitees.filter { !fresh.contains($0) }.map { .init(userId: $0, reason: .alreadyInvited) }
        let invited = try await assemble(created)
        return .ok(.init(body: .json(.init(invited: invited, skipped: skipped))))
    }

    func listInvitations(_ input: Operations.ListInvitations.Input) async throws -> Operations.ListInvitations.Output {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        let rows = try await invitations.list(
            userID: caller.userID, incoming: (input.query.direction ?? .incoming) == .incoming,
            status: input.query.status, before: try Paging.keyset(input.query.cursor), limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let next = rows.count > limit ? page.last.map { Paging.keysetCursor($0.createdAt, $0.id) } : nil
        return .ok(.init(body: .json(.init(items: try await assemble(page), nextCursor: next))))
    }

    func answerInvitation(_ input: Operations.AnswerInvitation.Input) async throws
        -> Operations.AnswerInvitation.Output
    {
        let caller = try RequestInfo.requireMember()
        guard var invitation = try await invitations.find(id: input.path.invitationId),
            invitation.toID == caller.userID
        else { throw APIError.notFound("No such invitation.") }
        let now = Clock.millis()
        if input.path.answer == .accept {
            let event = try await eventService.find(invitation.eventID)
            guard !event.status.isCalledOff else {
                throw APIError.conflict("This event is \(event.status.rawValue).", code: .eventCancelled)
            }
            guard
                try await events.setAttendance(eventID: event.id, userID: caller.userID, status: .going, now: now)
                    != nil
            else { throw APIError.notFound("No such event.") }
            invitation.status = .accepted
        } else {
            invitation.status = .declined
        }
        try await invitations.setStatus(id: invitation.id, status: invitation.status, now: now)
        guard let item = try await assemble([invitation]).first else {
            throw APIError.notFound("No such invitation.")
        }
        return .ok(.init(body: .json(item)))
    }

    /// Invitations with their event and both people (those whose event or users are gone drop out).
    private func assemble(_ records: [InvitationRecord]) async throws -> [Components.Schemas.Invitation] {
        let people = try await users.find(ids: records.flatMap { [$0.fromID, $0.toID] })
        var found: [String: EventRecord] = [:]
        for id in Set(records.map(\.eventID)) { found[id] = try await events.find(id: id) }
        return records.compactMap { record in
            guard let event = found[record.eventID], let from = people[record.fromID], let to = people[record.toID]
            else { return nil }
            return .init(
                id: record.id, eventId: event.id, eventName: event.name, eventStart: Clock.date(event.startAt),
                from: .init(from), to: .init(to), status: record.status,
                createdAt: Clock.date(record.createdAt))
        }
    }
}
