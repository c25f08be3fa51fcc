import Foundation
import Logging
import ServiceLifecycle
import TonightCore

/// Reminds every player of a session shortly before it starts (`sessions.reminder.minutes`).
///
/// The reminder is claimed by setting the session's `reminded_at` in the same transaction that
/// writes the notifications, so it goes out once even with several instances, and a restart
/// picks up whatever is due. Moving the start clears `reminded_at`, so a rescheduled session is
/// reminded again for its new time.
struct SessionReminder: Service {
    let sessions: SessionRepository
    let notifier: Notifier
    let lead: Duration
    let interval: Duration
    let logger: Logger
    static let batch = 200

    func run() async throws {
        try await runEvery(interval, logger: logger, failure: "session reminders failed") {
            while try await runOnce() == Self.batch {}
        }
    }

    /// Sends the reminders due at `now`; returns how many sessions it looked at.
    @discardableResult
    func runOnce(now: Int64 = Clock.millis()) async throws -> Int {
        let horizon = now + Int64(lead.components.seconds) * 1000
        let (seen, written) = try await sessions.remindDue(now: now, horizon: horizon, limit: Self.batch)
        await notifier.publish(written)
        return seen
    }
}
