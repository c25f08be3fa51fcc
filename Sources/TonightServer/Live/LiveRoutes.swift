import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import TonightAPI

/// `GET /v1/live`: the authenticated WebSocket. The token comes in the query (`?token=`) or in
/// a first `auth` message within 10 seconds; then the socket receives the user's events and
/// answers `ping` with `pong` (WebSocket-level pings also run every 30 seconds). A client says
/// it is typing with `{"type":"typing","conversationId":"…"}`; the other member gets a `typing`
/// event. Opening and closing sockets keeps the user's presence (``PresenceService``).
struct LiveRoutes {
    let hub: LiveHub
    let tokens: TokenService
    let presence: PresenceService
    let chat: ChatRepository
    let fanout: any LiveFanout
    let authTimeout: Duration = .seconds(10)

    func register(on router: Router<AppRequestContext>) {
        router.ws(
            "/v1/live",
            shouldUpgrade: { request, _ in
                guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                    throw APIError(
                        status: 426, code: .upgradeRequired, detail: "Open /v1/live as a WebSocket.")
                }
                if let token = request.uri.queryParameters["token"], await tokens.verify(String(token)) == nil {
                    throw APIError.unauthorized("The access token is invalid or expired.", code: .invalidToken)
                }
                return .upgrade([:])
            },
            onUpgrade: { inbound, outbound, context in
                try await serve(inbound: inbound, outbound: outbound, request: context.request, logger: context.logger)
            })
    }

    private func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, request: Request, logger: Logger
    ) async throws {
        let decoder = JSONDecoder()
        var principal: Principal?
        if let token = request.uri.queryParameters["token"] {
            principal = await tokens.verify(String(token))
        }
        let authenticated = NIOLockedValueBox(principal != nil)
        let timeout = Task { [authTimeout] in
            try await Task.sleep(for: authTimeout)
            if !authenticated.withLockedValue({ $0 }) {
                try await outbound.close(.policyViolation, reason: "authenticate first")
            }
        }
        defer { timeout.cancel() }
        let socketID = UUID()
        if let principal { try await ready(principal, socketID: socketID, outbound: outbound) }
        defer {
            if let userID = principal?.userID {
                Task {
                    await hub.unregister(userID: userID, socketID: socketID)
                    await presence.disconnected(userID)
                }
            }
        }
        for try await message in inbound.messages(maxSize: 1 << 16) {
            guard case .text(let text) = message,
                let parsed = try? decoder.decode(LiveMessage.self, from: Data(text.utf8))
            else {
                try await send(LiveMessage(type: LiveMessage.Kind.error, message: "Send JSON text messages."), outbound)
                continue
            }
            switch parsed.type {
            case LiveMessage.Kind.ping:
                try await send(LiveMessage(type: LiveMessage.Kind.pong), outbound)
            case LiveMessage.Kind.typing where principal != nil:
                guard let userID = principal?.userID, let id = parsed.conversationId,
                    let conversation = try? await chat.conversation(id: id), conversation.includes(userID)
                else {
                    try await send(
                        LiveMessage(type: LiveMessage.Kind.error, message: "No such conversation."), outbound)
                    continue
                }
                let typing = try LiveMessage.event(
                    LiveMessage.EventType.typing, ["conversationId": id, "userId": userID])
                await fanout.send(typing, to: [conversation.other(than: userID)])
            case LiveMessage.Kind.auth where principal == nil:
                guard let token = parsed.token, let verified = await tokens.verify(token) else {
                    try await send(LiveMessage(type: LiveMessage.Kind.error, message: "Invalid token."), outbound)
                    try await outbound.close(.policyViolation, reason: "invalid token")
                    return
                }
                principal = verified
                authenticated.withLockedValue { $0 = true }
                try await ready(verified, socketID: socketID, outbound: outbound)
            default:
                let reason = principal == nil ? "Authenticate first." : "Unknown message type \(parsed.type)."
                try await send(LiveMessage(type: LiveMessage.Kind.error, message: reason), outbound)
            }
        }
    }

    private func ready(_ principal: Principal, socketID: UUID, outbound: WebSocketOutboundWriter) async throws {
        await hub.register(userID: principal.userID, socketID: socketID, writer: outbound)
        await presence.connected(principal.userID)
        try await send(LiveMessage(type: LiveMessage.Kind.ready, userId: principal.userID), outbound)
    }

    private func send(_ message: LiveMessage, _ outbound: WebSocketOutboundWriter) async throws {
        let data = try JSONEncoder().encode(message)
        try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
    }
}
