import Foundation
import TonightAPI

/// Delivers live messages to users' open sockets on every instance.
protocol LiveFanout: Sendable {
    /// Sends `message` to every open socket of each user in `userIDs`.
    func send(_ message: LiveMessage, to userIDs: [String]) async
}

/// One process (the SQLite set-up): straight to this instance's sockets.
struct LocalFanout: LiveFanout {
    let hub: LiveHub

    func send(_ message: LiveMessage, to userIDs: [String]) async {
        await hub.deliver(message, to: Set(userIDs))
    }
}

/// What travels between instances: a message and its recipients.
struct LiveEnvelope: Codable, Sendable {
    var users: [String]
    var message: LiveMessage
}
