import Foundation
import Logging
import ServiceLifecycle
import TonightCore

/// Tells everyone who attends or follows an event about each change of its place, start or
/// status (from edits and re-imports), once per change: a change record is claimed by setting
/// its `notified_at` in the same transaction that writes the notifications, so two instances
/// never both send it. The organiser is not told about edits (they made them).
struct EventChangeNotifier: Service {
    let events: EventRepository
    let notifier: Notifier
    let interval: Duration
    let logger: Logger
    /// Change records handled per round.
    static let batch = 200

    func run() async throws {
        try await runEvery(interval, logger: logger, failure: "event change alerts failed") {
            while try await runOnce() == Self.batch {}
        }
    }

    /// Handles one batch of pending change records; returns how many it looked at.
    @discardableResult
    func runOnce(now: Int64 = Clock.millis()) async throws -> Int {
        let (seen, written) = try await events.notifyChanges(now: now, limit: Self.batch)
        await notifier.publish(written)
        return seen
    }
}
