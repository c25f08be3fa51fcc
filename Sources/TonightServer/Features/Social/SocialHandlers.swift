import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct SocialHandlers: Sendable {
    let users: UserRepository
    let social: SocialRepository
    let notifier: Notifier
    let people: People

    func listFriends(_ input: Operations.ListFriends.Input) async throws -> Operations.ListFriends.Output {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        let rows = try await social.friends(
            of: caller.userID, before: try Paging.keyset(input.query.cursor), limit: limit + 1)
        return .ok(.init(body: .json(try await friendPage(rows, limit: limit))))
    }

    func removeFriend(_ input: Operations.RemoveFriend.Input) async throws -> Operations.RemoveFriend.Output {
        let caller = try RequestInfo.requireMember()
        try await social.removeFriend(caller.userID, input.path.userId)
        return .noContent(.init())
    }

    func listFriendRequests(_ input: Operations.ListFriendRequests.Input) async throws
        -> Operations.ListFriendRequests.Output
    {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        let direction = input.query.direction ?? .incoming
        let rows = try await social.requests(
            of: caller.userID, incoming: direction == .incoming, before: try Paging.keyset(input.query.cursor),
            limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let people = try await users.find(ids: page.map(\.userID))
        let items = page.compactMap { row in
            people[row.userID].map {
                Components.Schemas.FriendRequest(
                    user: .init($0), direction: direction, createdAt: Clock.date(row.since))
            }
        }
        return .ok(.init(body: .json(.init(items: items, nextCursor: Self.nextCursor(rows, page, limit)))))
    }

    func sendFriendRequest(_ input: Operations.SendFriendRequest.Input) async throws
        -> Operations.SendFriendRequest.Output
    {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        let me = try await people.current(caller)
        let other = try await people.reachable(body.userId, from: caller, field: "userId")
        let (outcome, written) = try await social.sendRequest(from: me.id, to: other.id, now: Clock.millis()) {
            outcome in
            switch outcome {
            case .pending:
                [
                    .init(
                        userID: other.id, kind: .friendRequest, text: "\(me.shownName) wants to be friends",
                        actorID: me.id)
                ]
            case .friends:
                [
                    .init(
                        userID: other.id, kind: .friendAccepted, text: "You and \(me.shownName) are now friends",
                        actorID: me.id)
                ]
            }
        }
        await notifier.publish(written)
        return .ok(.init(body: .json(.init(userId: other.id, status: outcome == .friends ? .friends : .pending))))
    }

    func cancelFriendRequest(_ input: Operations.CancelFriendRequest.Input) async throws
        -> Operations.CancelFriendRequest.Output
    {
        let caller = try RequestInfo.requireMember()
        try await social.deleteRequest(from: caller.userID, to: input.path.userId)
        return .noContent(.init())
    }

    func acceptFriendRequest(_ input: Operations.AcceptFriendRequest.Input) async throws
        -> Operations.AcceptFriendRequest.Output
    {
        let caller = try RequestInfo.requireMember()
        let me = try await people.current(caller)
        let notice = NotificationDraft(
            userID: input.path.userId, kind: .friendAccepted,
            text: "\(me.shownName) accepted your friend request", actorID: me.id)
        guard
            let written = try await social.acceptRequest(
                from: input.path.userId, to: me.id, now: Clock.millis(), notices: [notice])
        else { throw APIError.notFound("This user has not asked to be your friend.") }
        await notifier.publish(written)
        return .ok(.init(body: .json(.init(userId: input.path.userId, status: .friends))))
    }

    func denyFriendRequest(_ input: Operations.DenyFriendRequest.Input) async throws
        -> Operations.DenyFriendRequest.Output
    {
        let caller = try RequestInfo.requireMember()
        try await social.deleteRequest(from: input.path.userId, to: caller.userID)
        return .noContent(.init())
    }

    func listBlocks(_ input: Operations.ListBlocks.Input) async throws -> Operations.ListBlocks.Output {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        let rows = try await social.blocks(
            of: caller.userID, before: try Paging.keyset(input.query.cursor), limit: limit + 1)
        return .ok(.init(body: .json(try await friendPage(rows, limit: limit))))
    }

    func blockUser(_ input: Operations.BlockUser.Input) async throws -> Operations.BlockUser.Output {
        let caller = try RequestInfo.requireMember()
        guard input.path.userId != caller.userID else {
            throw APIError.badRequest("You cannot block yourself.", code: ._self)
        }
        guard let other = try await users.find(id: input.path.userId), !other.isAnonymous else {
            throw APIError.notFound("No such user.")
        }
        try await social.block(caller.userID, other.id, now: Clock.millis())
        return .noContent(.init())
    }

    func unblockUser(_ input: Operations.UnblockUser.Input) async throws -> Operations.UnblockUser.Output {
        let caller = try RequestInfo.requireMember()
        try await social.unblock(caller.userID, input.path.userId)
        return .noContent(.init())
    }

    private func friendPage(_ rows: [SocialEntry], limit: Int) async throws -> Components.Schemas.FriendPage {
        let page = Array(rows.prefix(limit))
        let people = try await users.find(ids: page.map(\.userID))
        let items = page.compactMap { row in
            people[row.userID].map { Components.Schemas.Friend(user: .init($0), since: Clock.date(row.since)) }
        }
        return .init(items: items, nextCursor: Self.nextCursor(rows, page, limit))
    }

    /// The cursor after the last entry of `page` when `rows` (fetched with one extra) has more.
    static func nextCursor(_ rows: [SocialEntry], _ page: [SocialEntry], _ limit: Int) -> String? {
        rows.count > limit ? page.last.map { Paging.keysetCursor($0.since, $0.userID) } : nil
    }
}

extension UserRecord {
    /// The name other people see: the display name, else the username.
    var shownName: String { displayName ?? username ?? "Someone" }
}
