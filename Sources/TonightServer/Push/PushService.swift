import Crypto
import Foundation
import Logging
import TonightAPI
import TonightCore

/// A push job: deliver one notification to every device and browser of its recipient, or (`token`
/// or `endpoint` set) retry one APNs device or one browser. Written in the same transaction as the
/// notification (the outbox).
struct PushJob: Codable, Sendable {
    static let kind = "push"
    var notificationId: String
    var token: String?
    var endpoint: String?
    var attempt: Int = 1
}

/// Runs push jobs through APNs and Web Push. The badge is the recipient's unread count at sending
/// time; a notification read before its push goes out is not pushed; a token APNs calls
/// unregistered, or a browser subscription its push service calls gone, is dropped; 429 and 5xx
/// are retried per device with backoff (honouring `Retry-After`).
struct PushService: Sendable {
    /// `nil` when APNs is not configured: only browsers get pushes then.
    let client: APNsClient?
    let devices: DeviceRepository
    let webPush: WebPushSender
    let subscriptions: WebPushRepository
    let notifications: NotificationRepository
    let jobs: JobQueue
    let retry: RetryPolicy
    let logger: Logger
    /// Sends per device, including the first.
    static let maxAttempts = 5

    /// The handler for ``PushJob/kind``.
    func run(_ job: ClaimedJob) async throws {
        let push = try JSONDecoder().decode(PushJob.self, from: Data(job.payload.utf8))
        guard let notification = try await notifications.find(id: push.notificationId), notification.readAt == nil
        else { return }
        let everywhere = push.token == nil && push.endpoint == nil
        if let client, everywhere || push.token != nil {
            try await sendAPNs(notification, push: push, client: client)
        }
        if everywhere || push.endpoint != nil {
            try await sendWebPush(notification, push: push)
        }
    }

    private func sendAPNs(_ notification: NotificationRecord, push: PushJob, client: APNsClient) async throws {
        var tokens = push.token.map { [$0] } ?? []
        if push.token == nil { tokens = try await devices.devices(of: notification.userID).map(\.token) }
        guard !tokens.isEmpty else { return }
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
                try await again(
                    notification, PushJob(notificationId: notification.id, token: token, attempt: push.attempt + 1),
                    after: after.map { Int($0.components.seconds) })
            }
        }
    }

    private func sendWebPush(_ notification: NotificationRecord, push: PushJob) async throws {
        var targets: [WebPushSubscriptionRecord] = []
        if let endpoint = push.endpoint {
            if let one = try await subscriptions.subscription(endpoint: endpoint), one.userID == notification.userID {
                targets = [one]
            }
        } else {
            targets = try await subscriptions.subscriptions(of: notification.userID)
        }
        guard !targets.isEmpty else { return }
        let payload = try Self.payload(notification)
        for subscription in targets {
            let outcome = await webPush.send(
                payload, to: subscription, ttl: Self.timeToLive(notification.kind),
                urgency: Self.urgency(notification.kind), topic: Self.topic(notification.id))
            switch outcome {
            case .delivered:
                continue
            case .gone:
                try await subscriptions.drop(endpoint: subscription.endpoint)
            case .refused(let reason):
                // An endpoint that can never work (refused address, bad keys) is forgotten too.
                logger.warning(
                    "web push refused", metadata: ["reason": "\(reason)", "notification": "\(notification.id)"])
                try await subscriptions.drop(endpoint: subscription.endpoint)
            case .skipped(let reason):
                logger.warning(
                    "web push not taken", metadata: ["reason": "\(reason)", "notification": "\(notification.id)"])
            case .retry(let after):
                try await again(
                    notification,
                    PushJob(
                        notificationId: notification.id, endpoint: subscription.endpoint, attempt: push.attempt + 1),
                    after: after)
            }
        }
    }

    /// Queues `next` after the backoff (or `after` seconds, when longer), unless attempts are spent.
    private func again(_ notification: NotificationRecord, _ next: PushJob, after: Int?) async throws {
        guard next.attempt <= Self.maxAttempts else {
            logger.warning("push gave up", metadata: ["notification": "\(notification.id)"])
            return
        }
        let wait = max(retry.delay(afterAttempts: next.attempt - 1), TimeInterval(after ?? 0))
        try await jobs.enqueue(PushJob.kind, payload: next, runAt: Date().addingTimeInterval(wait), maxAttempts: 1)
    }

    /// What the service worker (`Web/sw.js`) receives: the text and the notification's targets.
    static func payload(_ notification: NotificationRecord) throws -> Data {
        var target: [String: String] = ["id": notification.id, "kind": notification.kind.rawValue]
        target["eventId"] = notification.eventID
        target["eventKind"] = notification.eventKind?.rawValue
        target["matchId"] = notification.matchID
        target["conversationId"] = notification.conversationID
        target["postId"] = notification.postID
        // One record holds at most 3,993 bytes of payload: the text is kept well under it.
        var text = ""
        for character in notification.text {
            guard text.utf8.count + String(character).utf8.count <= 1000 else {
                text += "…"
                break
            }
            text.append(character)
        }
        let body: [String: Any] = ["title": "Tonight", "body": text, "tag": notification.id, "notification": target]
        return try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
    }

    /// How long a push service keeps an undelivered message: a reminder is stale after an hour.
    static func timeToLive(_ kind: NotificationKind) -> Int {
        kind == .sessionReminder ? 3600 : 86_400
    }

    /// People waiting on each other go first; the daily digest may wait for a charger.
    static func urgency(_ kind: NotificationKind) -> String {
        switch kind {
        case .message, .match, .invitation, .sessionReminder: "high"
        case .digest: "low"
        default: "normal"
        }
    }

    /// One topic per notification (32 base64url characters): a retry replaces a copy still queued.
    static func topic(_ id: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(id.utf8))).prefix(24))
    }
}
