import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct NotificationsHandlers: Sendable {
    let notifications: NotificationRepository
    let users: UserRepository
    let people: People

    func listNotifications(_ input: Operations.ListNotifications.Input) async throws
        -> Operations.ListNotifications.Output
    {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        let before = try Paging.keyset(input.query.cursor)?.1
        let rows = try await notifications.list(
            userID: caller.userID, unreadOnly: input.query.unread == true, before: before, limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let actors = try await users.find(ids: page.compactMap(\.actorID))
        let items = page.map { Components.Schemas.Notification($0, actor: $0.actorID.flatMap { actors[$0] }) }
        let next = rows.count > limit ? page.last.map { Paging.keysetCursor($0.createdAt, $0.id) } : nil
        let unread = try await notifications.unreadCount(userID: caller.userID)
        return .ok(.init(body: .json(.init(items: items, nextCursor: next, unreadCount: unread))))
    }

    func unreadNotificationCount(_ input: Operations.UnreadNotificationCount.Input) async throws
        -> Operations.UnreadNotificationCount.Output
    {
        let caller = try RequestInfo.requireMember()
        return .ok(.init(body: .json(.init(unread: try await notifications.unreadCount(userID: caller.userID)))))
    }

    func markAllNotificationsRead(_ input: Operations.MarkAllNotificationsRead.Input) async throws
        -> Operations.MarkAllNotificationsRead.Output
    {
        let caller = try RequestInfo.requireMember()
        try await notifications.markAllRead(userID: caller.userID, now: Clock.millis())
        return .ok(.init(body: .json(.init(unread: try await notifications.unreadCount(userID: caller.userID)))))
    }

    func markNotificationRead(_ input: Operations.MarkNotificationRead.Input) async throws
        -> Operations.MarkNotificationRead.Output
    {
        let caller = try RequestInfo.requireMember()
        guard
            try await notifications.markRead(
                userID: caller.userID, id: input.path.notificationId, now: Clock.millis())
        else { throw APIError.notFound("No such notification.") }
        return .ok(.init(body: .json(.init(unread: try await notifications.unreadCount(userID: caller.userID)))))
    }

    func getNotificationSettings(_ input: Operations.GetNotificationSettings.Input) async throws
        -> Operations.GetNotificationSettings.Output
    {
        let caller = try RequestInfo.requireMember()
        let stored = try await notifications.settings(userID: caller.userID) ?? "{}"
        return .ok(.init(body: .json(NotificationSettingsRules.decode(stored))))
    }

    func putNotificationSettings(_ input: Operations.PutNotificationSettings.Input) async throws
        -> Operations.PutNotificationSettings.Output
    {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        let settings = try NotificationSettingsRules.validated(body)
        try await notifications.setSettings(
            userID: caller.userID, json: NotificationSettingsRules.encode(settings))
        return .ok(.init(body: .json(settings)))
    }
}
