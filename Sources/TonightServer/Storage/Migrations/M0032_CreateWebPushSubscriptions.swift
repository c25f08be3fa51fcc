/// Browsers' Web Push subscriptions: where each one's push service takes messages for it, and the
/// keys its messages are encrypted to.
struct CreateWebPushSubscriptions: Migration {
    let name = "0032_create_web_push_subscriptions"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE web_push_subscriptions (
                endpoint TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                p256dh TEXT NOT NULL,
                auth TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX web_push_subscriptions_user ON web_push_subscriptions(user_id)",
        ]
    }
}
