import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import TonightAPI

/// `GET /v1/live`: the authenticated WebSocket. The token comes in the query (`?token=`) or in
/// a first `auth` message within 10 seconds; then the socket receives the user's events and
/// answers `ping` with `pong` (WebSocket-level pings also run, every ``pingInterval``). A client says
/// it is typing with `{"type":"typing","conversationId":"…"}`; the other member gets a `typing`
/// event. Opening and closing sockets keeps the user's presence (``PresenceService``).
///
/// Sockets are served by SwiftNIO handlers (``LiveUpgradeChannel``, ``LiveChannelHandler``),
/// which call this for what needs the rest of Tonight. Everything the server sends goes through
/// the socket's bounded queue (``LiveSocket``); a peer that stops reading is disconnected, and
/// nobody else waits for it. A banned or deleted member's token opens no socket, and their open
/// sockets are closed (``LiveHub``).
struct LiveRoutes: Sendable {
    let hub: LiveHub
    let tokens: TokenService
    let presence: PresenceService
    let chat: ChatRepository
    let fanout: any LiveFanout
    /// Banned and deleted members' tokens open no socket.
    let bans: BanList
    /// How often the server pings each socket (`LIVE_PING_SECONDS`); a socket whose pong has not
    /// come by the next ping is closed.
    let pingInterval: Duration
    let authTimeout: Duration = .seconds(10)

    /// What handling one message leaves the socket with.
    enum Outcome: Sendable {
        case next
        /// The `auth` message's token was valid: the socket now takes this user's events.
        case authenticated(Principal)
        /// A close frame is queued: later messages are not handled.
        case end
    }

    /// A handshake that may open a socket, and its caller when the token came in the query.
    struct Admission: Sendable {
        let principal: Principal?
    }

    /// A plain `GET /v1/live` (no `Upgrade: websocket`) answers 426.
    func register(on router: Router<AppRequestContext>) {
        router.get("/v1/live") { _, _ -> Response in
            throw APIError(status: 426, code: .upgradeRequired, detail: "Open /v1/live as a WebSocket.")
        }
    }

    /// Whether the WebSocket handshake for `target` (path and query) opens a socket: only for
    /// `/v1/live`, and with a valid token when the query carries one.
    func admit(target: String) async -> Admission? {
        let uri = URI(target)
        guard uri.path == "/v1/live" else { return nil }
        guard let token = uri.queryParameters["token"] else { return Admission(principal: nil) }
        guard let principal = try? await verify(String(token)) else { return nil }
        return Admission(principal: principal)
    }

    /// The caller of a token, or the 401 for an invalid token or a banned or deleted member.
    private func verify(_ token: String) async throws -> Principal {
        guard let principal = await tokens.verify(token) else {
            throw APIError.unauthorized("The access token is invalid or expired.", code: .invalidToken)
        }
        if let refusal = bans.refusal(for: principal.userID) { throw refusal }
        return principal
    }

    /// The socket of `principal` takes the user's events, after its `ready`.
    func opened(_ principal: Principal, socket: LiveSocket) async {
        await hub.register(userID: principal.userID, socket: socket)
        await presence.connected(principal.userID)
    }

    /// The socket of `principal` is closed.
    func closed(_ principal: Principal, socket: LiveSocket) async {
        await hub.unregister(userID: principal.userID, socketID: socket.id)
        await presence.disconnected(principal.userID)
    }

    /// Handles one of the client's messages other than `ping`.
    func handle(_ message: LiveMessage, principal: Principal?, socket: LiveSocket) async -> Outcome {
        switch message.type {
        case LiveMessage.Kind.typing where principal != nil:
            guard let userID = principal?.userID, bans.refusal(for: userID) == nil else {
                socket.enqueue(.close(.policyViolation, "access ended"))
                return .end
            }
            guard let id = message.conversationId,
                let conversation = try? await chat.conversation(id: id), conversation.includes(userID),
                let typing = try? LiveFrame.event(
                    LiveMessage.EventType.typing, ["conversationId": id, "userId": userID])
            else {
                socket.enqueue(LiveMessage(type: LiveMessage.Kind.error, message: "No such conversation."))
                return .next
            }
            await fanout.send(typing, to: [conversation.other(than: userID)])
            return .next
        case LiveMessage.Kind.auth where principal == nil:
            do {
                let verified = try await verify(message.token ?? "")
                await opened(verified, socket: socket)
                return .authenticated(verified)
            } catch {
                let detail = (error as? APIError)?.detail ?? "The access token is invalid or expired."
                socket.enqueue(LiveMessage(type: LiveMessage.Kind.error, message: detail))
                socket.enqueue(.close(.policyViolation, "invalid token"))
                return .end
            }
        default:
            let reason = principal == nil ? "Authenticate first." : "Unknown message type \(message.type)."
            socket.enqueue(LiveMessage(type: LiveMessage.Kind.error, message: reason))
            return .next
        }
    }
}
