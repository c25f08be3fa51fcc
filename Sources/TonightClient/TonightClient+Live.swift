import Foundation
import HummingbirdWSClient
import Logging

extension TonightClient {
    /// Opens the `/v1/live` WebSocket and calls `onMessage` for every message the server sends
    /// (first `ready`, then the user's events) until the socket closes or the task is cancelled.
    /// The SDK answers nothing itself; WebSocket pings keep the connection alive.
    public func live(
        logger: Logger = Logger(label: "tonight.live"),
        _ onMessage: @escaping @Sendable (LiveMessage, LiveSender) async throws -> Void
    ) async throws {
        guard let token = try await session.accessToken() else { throw TonightError.notSignedIn }
        guard var components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false) else {
            throw TonightError.unexpectedResponse(status: 0)
        }
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        components.path = components.path.hasSuffix("/") ? components.path + "v1/live" : components.path + "/v1/live"
        components.queryItems = [URLQueryItem(name: "token", value: token)]
        guard let url = components.string else { throw TonightError.unexpectedResponse(status: 0) }
        let decoder = JSONDecoder()
        try await WebSocketClient.connect(url: url, logger: logger) { inbound, outbound, _ in
            let sender = LiveSender(outbound: outbound)
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message,
                    let decoded = try? decoder.decode(LiveMessage.self, from: Data(text.utf8))
                else { continue }
                try await onMessage(decoded, sender)
            }
        }
    }
}

/// Sends messages on an open live socket.
public struct LiveSender: Sendable {
    let outbound: WebSocketOutboundWriter

    /// Sends a message, e.g. `LiveMessage(type: "ping")`.
    public func send(_ message: LiveMessage) async throws {
        let data = try JSONEncoder().encode(message)
        try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
    }

    /// Closes the socket normally.
    public func close() async throws {
        try await outbound.close(.normalClosure, reason: nil)
    }
}
