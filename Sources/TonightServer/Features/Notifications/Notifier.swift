import Foundation
import Logging
import OpenAPIRuntime
import TonightAPI
import TonightCore

/// Hands notifications to their recipients once the transaction that wrote them has committed:
/// a `notification` event with the item and the new unread count on every open `/v1/live` socket
/// (on any instance, through ``LiveFanout``).
struct Notifier: Sendable {
    let fanout: any LiveFanout
    let users: UserRepository
    let notifications: NotificationRepository
    let logger: Logger

    /// Delivers `records` live. Failures are logged, never thrown: the inbox already has them.
    func publish(_ records: [NotificationRecord]) async {
        guard !records.isEmpty else { return }
        do {
            let actors = try await users.find(ids: records.compactMap(\.actorID))
            var unread: [String: Int] = [:]
            for record in records {
                if unread[record.userID] == nil {
                    unread[record.userID] = try await notifications.unreadCount(userID: record.userID)
                }
                let item = Components.Schemas.Notification(record, actor: record.actorID.flatMap { actors[$0] })
                let payload = LivePayload.NotificationEvent(notification: item, unreadCount: unread[record.userID] ?? 0)
                await fanout.send(
                    try LiveFrame.event(LiveMessage.EventType.notification, payload), to: [record.userID])
            }
        } catch {
            logger.warning("live notification delivery failed", metadata: LoggedError.metadata(error))
        }
    }
}

/// Payloads of live events, encoded into a message's `data` (``LiveFrame/event(_:_:)``).
enum LivePayload {
    /// `notification`: a new inbox item and the recipient's unread count.
    struct NotificationEvent: Codable, Sendable {
        var notification: Components.Schemas.Notification
        var unreadCount: Int
    }
}

extension Components.Schemas.Notification {
    init(_ record: NotificationRecord, actor: UserRecord?) {
        self.init(
            id: record.id, kind: record.kind, text: record.text,
            actor: actor.map(Components.Schemas.PublicProfile.init), eventId: record.eventID,
            eventKind: record.eventKind.flatMap { .init(rawValue: $0.rawValue) }, matchId: record.matchID,
            conversationId: record.conversationID, postId: record.postID, createdAt: Clock.date(record.createdAt),
            readAt: record.readAt.map(Clock.date))
    }
}
