import Foundation
import Logging
import TonightAPI
import TonightCore

/// A push job: deliver one notification to every device of its recipient, or (`token` set) retry
/// one device. Written in the same transaction as the notification (the outbox).
struct PushJob: Codable, Sendable {
    static let kind = "push"
    var notificationId: String
    var token: String?
    var attempt: Int = 1
}

/// Runs push jobs through APNs. The badge is the recipient's unread count at sending time; a
/// notification read before its push goes out is not pushed; a token APNs calls unregistered is
/// dropped; 429 and 5xx are retried per device with backoff (honouring `Retry-After`).
struct PushService: Sendable {
    /// `nil` when APNs is not configured: push jobs then finish without sending.
    let client: APNsClient?
    let devices: DeviceRepository
    let notifications: NotificationRepository
    let jobs: JobQueue
    let retry: RetryPolicy
    let logger: Logger
    /// Sends per device, including the first.
    static let maxAttempts = 5

    /// The handler for ``PushJob/kind``.
    func run(_ job: ClaimedJob) async throws {
        guard let client else { return }
        let push = try JSONDecoder().decode(PushJob.self, from: Data(job.payload.utf8))
        guard let notification = try await notifications.find(id: push.notificationId), notification.readAt == nil
        else { return }
        var tokens = push.token.map { [$0] } ?? []
        if push.token == nil { tokens = try await devices.devices(of: notification.userID).map(\.token) }
        let badge = try await notifications.unreadCount(userID: notification.userID)
        for token in tokens {
            let message = APNsNotification(
                deviceToken: token, title: "Tonight", body: notification.text, badge: badge, sound: "default",
                threadID: notification.kind.rawValue,
                custom: ["kind": notification.kind.rawValue, "notificationId": notification.id],
                collapseID: notification.id)
            switch await client.send(message) {
            case .delivered:
                continue
            case .unregistered:
                try await devices.drop(token: token)
            case .rejected(let reason):
                logger.warning("push refused", metadata: ["reason": "\(reason)", "notification": "\(notification.id)"])
            case .retry(let after):
                guard push.attempt < Self.maxAttempts else {
                    logger.warning("push gave up", metadata: ["notification": "\(notification.id)"])
                    continue
                }
                let backoff = retry.delay(afterAttempts: push.attempt)
                let wait = max(backoff, after.map { TimeInterval($0.components.seconds) } ?? 0)
                try await jobs.enqueue(
                    PushJob.kind,
                    payload: PushJob(notificationId: notification.id, token: token, attempt: push.attempt + 1),
                    runAt: Date().addingTimeInterval(wait), maxAttempts: 1)
            }
        }
    }
}
