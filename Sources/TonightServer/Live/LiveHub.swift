import Foundation
import HummingbirdWebSocket
import Logging
import OpenAPIRuntime
import TonightAPI

/// The open `/v1/live` sockets of this process, by user, and delivery of events to them.
///
/// ``LiveFanout`` feeds ``deliver(_:to:)``: directly in one process, or on every instance through
/// PostgreSQL `LISTEN/NOTIFY`, so a user's sockets receive events whichever instance holds them.
public actor LiveHub {
    private var sockets: [String: [UUID: WebSocketOutboundWriter]] = [:]
    private static let encoder = JSONEncoder()

    /// Creates an empty hub.
    public init() {}

    func register(userID: String, socketID: UUID, writer: WebSocketOutboundWriter) {
        sockets[userID, default: [:]][socketID] = writer
    }

    func unregister(userID: String, socketID: UUID) {
        sockets[userID]?[socketID] = nil
        if sockets[userID]?.isEmpty == true { sockets[userID] = nil }
    }

    /// Whether the user has an open socket on this instance.
    public func isOnline(_ userID: String) -> Bool {
        sockets[userID]?.isEmpty == false
    }

    /// Sends an event to every open socket of `userID`; returns how many sockets got it.
    @discardableResult
    public nonisolated func deliver(_ message: LiveMessage, to userID: String) async -> Int {
        let writers = await self.writers(for: userID)
        guard !writers.isEmpty, let data = try? Self.encoder.encode(message) else { return 0 }
        let text = String(decoding: data, as: UTF8.self)
        var sent = 0
        for writer in writers where (try? await writer.write(.text(text))) != nil { sent += 1 }
        return sent
    }

    /// Users with at least one open socket here.
    func onlineUsers() -> [String] { Array(sockets.keys) }

    private func writers(for userID: String) -> [WebSocketOutboundWriter] {
        Array(sockets[userID]?.values ?? [:].values)
    }
}
