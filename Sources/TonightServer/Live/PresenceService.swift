import Foundation
import Logging
import ServiceLifecycle

/// Online / last seen, across instances: a user is online while `users.online_until` is in the
/// future. Connecting sets it 75 s ahead, every instance renews it every 30 s for the users it
/// has sockets for, and the last socket of a user on an instance closing sets it to now (another
/// instance with a socket for that user renews it within 30 s).
struct PresenceService: Service {
    let users: UserRepository
    let hub: LiveHub
    let logger: Logger
    static let lease: Int64 = 75_000
    static let renewEvery: Duration = .seconds(30)

    func connected(_ userID: String) async {
        let now = Clock.millis()
        await update([userID], onlineUntil: now + Self.lease, now: now)
    }

    func disconnected(_ userID: String) async {
        guard await !hub.isOnline(userID) else { return }
        let now = Clock.millis()
        await update([userID], onlineUntil: now, now: now)
    }

    /// Renews the lease of everyone connected here until graceful shutdown.
    func run() async throws {
        try await runUntilShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: Self.renewEvery)
                let now = Clock.millis()
                let users = await hub.onlineUsers()
                for chunk in stride(from: 0, to: users.count, by: 500) {
                    await update(
                        Array(users[chunk..<min(users.count, chunk + 500)]), onlineUntil: now + Self.lease, now: now)
                }
            }
        }
    }

    private func update(_ users: [String], onlineUntil: Int64, now: Int64) async {
        guard !users.isEmpty else { return }
        do {
            try await self.users.setOnline(users, until: onlineUntil, now: now)
        } catch {
            logger.warning("presence update failed", metadata: LoggedError.metadata(error))
        }
    }
}
