import Foundation
import Logging
import ServiceLifecycle
import TonightAPI

/// The open `/v1/live` sockets of this process, by user, and delivery of events to them.
///
/// ``LiveFanout`` feeds ``deliver(_:to:)``: directly in one process, or on every instance through
/// PostgreSQL `LISTEN/NOTIFY`, so a user's sockets receive events whichever instance holds them.
/// Delivery only queues (``LiveSocket``): no producer ever waits for a peer.
///
/// A ``revoked`` message (sent when a member is banned or deletes their account) is not passed
/// on: each of the user's sockets gets an `error` message and is closed (policy violation), on
/// every instance, and the instance's ``BanList`` learns of it; a ``reinstated`` one (a ban lifted)
/// only tells the ``BanList``.
public actor LiveHub {
    /// The internal message type that ends a user's sockets; its `message` is the error code
    /// (`account_suspended` or `account_gone`).
    static let revoked = "revoked"
    /// The internal message type that lifts a user's ban on every instance's ``BanList``.
    static let reinstated = "reinstated"

    private var sockets: [String: [UUID: LiveSocket]] = [:]
    let bans: BanList?

    /// Creates an empty hub; `bans` learns of revocations that arrive through the fan-out.
    init(bans: BanList?) { self.bans = bans }

    /// Creates an empty hub.
    public init() { self.bans = nil }

    /// Takes `socket` for the user's events and queues its `ready` first, in one turn of the hub:
    /// the client hears `ready` only once the socket is here (an event published after it reaches
    /// the socket), and every event comes after it.
    func register(userID: String, socket: LiveSocket) {
        sockets[userID, default: [:]][socket.id] = socket
        socket.enqueue(LiveMessage(type: LiveMessage.Kind.ready, userId: userID))
    }

    func unregister(userID: String, socketID: UUID) {
        sockets[userID]?[socketID] = nil
        if sockets[userID]?.isEmpty == true { sockets[userID] = nil }
    }

    /// Whether the user has an open socket on this instance.
    public func isOnline(_ userID: String) -> Bool {
        sockets[userID]?.isEmpty == false
    }

    /// Queues an event for every open socket of `userID`; returns how many sockets took it.
    @discardableResult
    public nonisolated func deliver(_ message: LiveMessage, to userID: String) async -> Int {
        guard let frame = try? LiveFrame(message) else { return 0 }
        return await deliver(frame, to: [userID])
    }

    /// Queues `frame` for every open socket of each user in `userIDs`, as it is (a chat message goes
    /// to both members); returns how many sockets took it.
    @discardableResult
    nonisolated func deliver(_ frame: LiveFrame, to userIDs: Set<String>) async -> Int {
        if frame.type == Self.revoked {
            let code = frame.message?.message ?? ""
            for userID in userIDs { await revoke(userID, code: code) }
            return 0
        }
        if frame.type == Self.reinstated {
            for userID in userIDs { bans?.set(userID, banned: false) }
            return 0
        }
        let targets = await self.sockets(for: userIDs)
        return targets.reduce(0) { $0 + ($1.enqueue(.text(frame.text)) ? 1 : 0) }
    }

    /// Users with at least one open socket here.
    func onlineUsers() -> [String] { Array(sockets.keys) }

    /// Ends every socket of `userID` here: an error message, then a close frame.
    private func revoke(_ userID: String, code: String) {
        let gone = code == ErrorCode.accountGone.rawValue
        bans?.mark(userID, gone ? .gone : .banned)
        let text = gone ? "This account no longer exists." : "This account is suspended."
        for socket in sockets[userID]?.values ?? [:].values {
            socket.enqueue(LiveMessage(type: LiveMessage.Kind.error, message: text))
            socket.enqueue(.close(.policyViolation, code))
        }
    }

    /// Closes every socket whose current write has waited past ``LiveSocket/writeDeadline``.
    func closeStuck() -> Int {
        let now = DispatchTime.now().uptimeNanoseconds
        var closed = 0
        for socket in sockets.values.flatMap(\.values) where socket.isStuck(now: now) {
            socket.abort()
            closed += 1
        }
        return closed
    }

    private func sockets(for userIDs: Set<String>) -> [LiveSocket] {
        userIDs.flatMap { sockets[$0]?.values ?? [:].values }
    }

    /// Checks every socket for a stuck write every second while the server runs.
    struct Watchdog: Service {
        let hub: LiveHub
        let logger: Logger

        func run() async throws {
            try await runEvery(.seconds(1), logger: logger, failure: "live socket check failed") {
                let closed = await hub.closeStuck()
                if closed > 0 {
                    logger.info("closed live sockets that stopped reading", metadata: ["count": "\(closed)"])
                }
            }
        }
    }
}
