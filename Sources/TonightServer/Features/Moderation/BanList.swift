import Logging
import ServiceLifecycle
import Synchronization
import TonightAPI

/// The banned users, held in memory so every request can be checked without a query: loaded at
/// start, changed at once by this instance's bans and unbans and by those other instances send
/// through the live fan-out (``LiveHub``), and reloaded every ``interval`` as well.
///
/// It also remembers accounts deleted while their access tokens may still be valid (``tokenLifetime``),
/// so such a token is answered `401 account_gone` everywhere instead of failing on a missing row.
final class BanList: Service, Sendable {
    /// Why a user's tokens no longer count.
    enum Revocation: Sendable { case banned, gone }

    /// How long an access token lives (so how long a deleted account is remembered).
    static let tokenLifetime: Int64 = 15 * 60 * 1000
    private let banned = Mutex<Set<String>>([])
    /// How many times ``set(_:banned:)`` has changed the list (see ``reload()``).
    private let edits = Atomic<UInt64>(0)
    /// Deleted accounts and when they can be forgotten (milliseconds).
    private let gone = Mutex<[String: Int64]>([:])
    private let repository: BanRepository
    private let interval: Duration
    private let logger: Logger

    init(repository: BanRepository, interval: Duration = .seconds(30), logger: Logger) {
        self.repository = repository
        self.interval = interval
        self.logger = logger
    }

    /// Whether `userID` is banned.
    func contains(_ userID: String) -> Bool { banned.withLock { $0.contains(userID) } }

    /// The answer to a request with `userID`'s token, if it no longer counts.
    func refusal(for userID: String) -> APIError? {
        if banned.withLock({ $0.contains(userID) }) { return .accountSuspended }
        let until = gone.withLock { $0[userID] }
        if let until, until > Clock.millis() { return .accountGone }
        return nil
    }

    /// Records a revocation here, at once (nothing is stored).
    func mark(_ userID: String, _ revocation: Revocation) {
        switch revocation {
        case .banned: set(userID, banned: true)
        case .gone:
            let now = Clock.millis()
            gone.withLock { gone in
                gone = gone.filter { $0.value > now }
                gone[userID] = now + Self.tokenLifetime
            }
        }
    }

    /// Bans a user: stored, and in force on this instance at once.
    func ban(_ userID: String, by moderatorID: String, now: Int64) async throws {
        try await repository.ban(userID, by: moderatorID, now: now)
        set(userID, banned: true)
    }

    /// Lifts a user's ban: stored, and lifted on this instance at once.
    func unban(_ userID: String) async throws {
        try await repository.unban(userID)
        set(userID, banned: false)
    }

    /// Marks a user banned or not, here, at once (nothing is stored).
    func set(_ userID: String, banned isBanned: Bool) {
        banned.withLock { set in
            if isBanned { set.insert(userID) } else { set.remove(userID) }
            edits.add(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Ends a member's access everywhere: here at once, and on every instance through `fanout`
    /// (their open sockets get an error and close; each instance's list learns of it).
    func revoke(_ userID: String, _ revocation: Revocation, fanout: any LiveFanout) async {
        mark(userID, revocation)
        let code: ErrorCode = revocation == .gone ? .accountGone : .accountSuspended
        await fanout.send(LiveMessage(type: LiveHub.revoked, message: code.rawValue), to: [userID])
    }

    /// Lifts a ban's effect on every instance through `fanout` (stored by ``unban(_:)``).
    func reinstate(_ userID: String, fanout: any LiveFanout) async {
        set(userID, banned: false)
        await fanout.send(LiveMessage(type: LiveHub.reinstated), to: [userID])
    }

    /// Reads the bans from the database. A reload during which the list changed here is dropped:
    /// its read may predate that change (a ban stored and set just after the read began would be
    /// undone), and the next reload catches up.
    @discardableResult
    func reload() async throws -> Bool {
        let before = edits.load(ordering: .sequentiallyConsistent)
        let ids = try await repository.all()
        return banned.withLock { set in
            guard edits.load(ordering: .sequentiallyConsistent) == before else { return false }
            set = ids
            return true
        }
    }

    func run() async throws {
        try await runUntilShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: self.interval)
                do { try await self.reload() } catch {
                    self.logger.warning("ban list reload failed", metadata: LoggedError.metadata(error))
                }
            }
        }
    }
}
