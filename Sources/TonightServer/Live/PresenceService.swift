import Foundation
import Logging
import ServiceLifecycle
import TonightCore

/// Online / last seen, across instances. Each instance holds a lease (``PresenceRepository``) for
/// every user it has a live socket for: taken on connect, renewed every ``renewEvery`` for
/// ``lease`` ahead, and released when its last socket for the user closes. `users.online_until`
/// follows the latest lease of any instance, so:
///
/// - a user whose sockets are on two instances stays online when one of them closes;
/// - a user whose only socket was on an instance that crashed goes offline when that lease runs
///   out (at most ``lease`` after its last renewal);
/// - an instance that stops gracefully releases its leases as its sockets close.
///
/// Whoever reads presence (chat notifications and pushes, "online" in conversations) reads
/// `users.online_until` only.
struct PresenceService: Service {
    let repository: PresenceRepository
    let hub: LiveHub
    let logger: Logger
    /// This process, as the owner of its leases.
    let instance: String
    /// How long a lease holds without renewal (`presence.lease.seconds`, default 15).
    let lease: Int64
    let renewEvery: Duration

    init(database: Database, hub: LiveHub, leaseSeconds: Int = 15, logger: Logger) {
        self.repository = PresenceRepository(database: database)
        self.hub = hub
        self.logger = logger
        self.instance = Identifier.make()
        self.lease = Int64(max(1, leaseSeconds)) * 1000
        self.renewEvery = .milliseconds(self.lease / 3)
    }

    func connected(_ userID: String) async {
        let now = Clock.millis()
        await attempt { try await repository.renew([userID], instance: instance, until: now + lease, now: now) }
    }

    func disconnected(_ userID: String) async {
        guard await !hub.isOnline(userID) else { return }
        await attempt { try await repository.release(userID, instance: instance, now: Clock.millis()) }
    }

    /// Renews the leases of everyone connected here until graceful shutdown, and forgets leases
    /// that ran out a minute ago. On shutdown it releases all of this instance's leases at once:
    /// the server does not wait for live sockets to close, so their own releases may come too late.
    func run() async throws {
        try await runUntilShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: renewEvery)
                let now = Clock.millis()
                let users = await hub.onlineUsers()
                for chunk in stride(from: 0, to: users.count, by: 500) {
                    let some = Array(users[chunk..<min(users.count, chunk + 500)])
                    await attempt { try await repository.renew(some, instance: instance, until: now + lease, now: now) }
                }
                await attempt { try await repository.purge(before: now - 60_000) }
            }
        }
        await attempt { try await repository.releaseAll(instance: instance, now: Clock.millis()) }
    }

    private func attempt(_ update: () async throws -> Void) async {
        do {
            try await update()
        } catch {
            logger.warning("presence update failed", metadata: LoggedError.metadata(error))
        }
    }
}
