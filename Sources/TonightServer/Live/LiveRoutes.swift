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
///
/// Everything the server sends goes through the socket's bounded queue (``LiveSocket``); a peer
/// that stops reading is disconnected, and nobody else waits for it. A banned or deleted
/// member's token opens no socket, and their open sockets are closed (``LiveHub``).
struct LiveRoutes {
    let hub: LiveHub
    let tokens: TokenService
    let presence: PresenceService
    let chat: ChatRepository
    let fanout: any LiveFanout
    /// Banned and deleted members' tokens open no socket.
    let bans: BanList
    let authTimeout: Duration = .seconds(10)

    func register(on router: Router<AppRequestContext>) {
        router.ws(
            "/v1/live",
            shouldUpgrade: { request, _ in
                guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                    throw APIError(
                        status: 426, code: .upgradeRequired, detail: "Open /v1/live as a WebSocket.")
                }
                if let token = request.uri.queryParameters["token"] {
                    _ = try await verify(String(token))
                }
                return .upgrade([:])
            },
            onUpgrade: { inbound, outbound, context in
                let socket = LiveSocket(channel: context.requestContext.channel)
                let drained = Task { await socket.drain(into: outbound) }
                do {
                    try await serve(inbound: inbound, socket: socket, request: context.request)
                } catch {
                    socket.abort()
                    throw error
                }
                // What is still queued goes out, unless the peer has stopped reading.
                socket.finish()
                let deadline = Task {
                    try await Task.sleep(for: LiveSocket.writeDeadline)
                    socket.abort()
                }
                await drained.value
                deadline.cancel()
            })
    }

    /// The caller of a token, or the 401 for an invalid token or a banned or deleted member.
    private func verify(_ token: String) async throws -> Principal {
        guard let principal = await tokens.verify(token) else {
            throw APIError.unauthorized("The access token is invalid or expired.", code: .invalidToken)
        }
        if let refusal = bans.refusal(for: principal.userID) { throw refusal }
        return principal
    }

    private func serve(inbound: WebSocketInboundStream, socket: LiveSocket, request: Request) async throws {
        let decoder = JSONDecoder()
        var principal: Principal?
        if let token = request.uri.queryParameters["token"] {
            principal = try? await verify(String(token))
        }
        // Only a socket that came without a token waits for its `auth` message (a task per socket
        // that sleeps: 10,000 sockets would hold 10,000 of them).
        let authenticated = NIOLockedValueBox(principal != nil)
        let timeout =
            principal != nil
            ? nil
            : Task { [authTimeout] in
                try await Task.sleep(for: authTimeout)
                if !authenticated.withLockedValue({ $0 }) {
                    socket.enqueue(.close(.policyViolation, "authenticate first"))
                }
            }
        defer { timeout?.cancel() }
        if let principal { await ready(principal, socket: socket) }
        defer {
            if let userID = principal?.userID {
                Task {
                    await hub.unregister(userID: userID, socketID: socket.id)
                    await presence.disconnected(userID)
                }
            }
        }
        for try await message in inbound.messages(maxSize: 1 << 16) {
            guard case .text(let text) = message,
                let parsed = try? decoder.decode(LiveMessage.self, from: Data(text.utf8))
            else {
                socket.enqueue(LiveMessage(type: LiveMessage.Kind.error, message: "Send JSON text messages."))
                continue
            }
            switch parsed.type {
            case LiveMessage.Kind.ping:
                socket.enqueue(LiveMessage(type: LiveMessage.Kind.pong))
            case LiveMessage.Kind.typing where principal != nil:
                guard let userID = principal?.userID, bans.refusal(for: userID) == nil else {
                    socket.enqueue(.close(.policyViolation, "access ended"))
                    return
                }
                guard let id = parsed.conversationId,
                    let conversation = try? await chat.conversation(id: id), conversation.includes(userID)
                else {
                    socket.enqueue(LiveMessage(type: LiveMessage.Kind.error, message: "No such conversation."))
                    continue
                }
                let typing = try LiveMessage.event(
                    LiveMessage.EventType.typing, ["conversationId": id, "userId": userID])
                await fanout.send(typing, to: [conversation.other(than: userID)])
            case LiveMessage.Kind.auth where principal == nil:
                let verified: Principal
                do {
                    verified = try await verify(parsed.token ?? "")
                } catch let error as APIError {
                    socket.enqueue(LiveMessage(type: LiveMessage.Kind.error, message: error.detail))
                    socket.enqueue(.close(.policyViolation, "invalid token"))
                    return
                }
                principal = verified
                authenticated.withLockedValue { $0 = true }
                await ready(verified, socket: socket)
            default:
                let reason = principal == nil ? "Authenticate first." : "Unknown message type \(parsed.type)."
                socket.enqueue(LiveMessage(type: LiveMessage.Kind.error, message: reason))
            }
        }
    }

    /// `ready` goes first in the socket's queue, then the socket takes the user's events.
    private func ready(_ principal: Principal, socket: LiveSocket) async {
        socket.enqueue(LiveMessage(type: LiveMessage.Kind.ready, userId: principal.userID))
        await hub.register(userID: principal.userID, socket: socket)
        await presence.connected(principal.userID)
    }
}
