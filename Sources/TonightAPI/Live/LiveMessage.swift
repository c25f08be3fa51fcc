import OpenAPIRuntime

/// A message on the `/v1/live` WebSocket, in either direction, as JSON text frames.
///
/// Client → server: `{"type":"auth","token":"…"}` (if the token was not in the URL),
/// `{"type":"ping"}`. Server → client: `{"type":"ready","userId":"…"}`, `{"type":"pong"}`,
/// `{"type":"error","message":"…"}`, and events `{"type":"<event>","data":{…}}` pushed to the
/// user's open sockets (event types are listed in ``LiveMessage/EventType``).
public struct LiveMessage: Codable, Sendable, Equatable {
    /// The message type.
    public var type: String
    /// For `auth`: the access token.
    public var token: String?
    /// For `ready`: the authenticated user's id.
    public var userId: String?
    /// For `error`: what went wrong.
    public var message: String?
    /// For events: the payload.
    public var data: OpenAPIObjectContainer?
    /// For `typing` sent by a client: the conversation the user is typing in.
    public var conversationId: String?

    /// Creates a message.
    public init(
        type: String, token: String? = nil, userId: String? = nil, message: String? = nil,
        data: OpenAPIObjectContainer? = nil, conversationId: String? = nil
    ) {
        self.type = type
        self.token = token
        self.userId = userId
        self.message = message
        self.data = data
        self.conversationId = conversationId
    }

    /// Protocol message types.
    public enum Kind {
        public static let auth = "auth"
        public static let ready = "ready"
        public static let ping = "ping"
        public static let pong = "pong"
        public static let error = "error"
        /// Client → server: the user is typing in `conversationId` (send every few seconds while typing).
        public static let typing = "typing"
    }

    /// Event types the server pushes. Later features add theirs here.
    public enum EventType {
        /// A notice to the user (used by tests and administration).
        public static let notice = "notice"
        /// A new notification: `data` is `{"notification": Notification, "unreadCount": n}`.
        public static let notification = "notification"
        /// A chat message was stored: `data` is `{"message": Message}` (to both members).
        public static let message = "message"
        /// A read receipt: `data` is `{"conversationId", "userId", "seq"}`.
        public static let read = "read"
        /// The other member is typing: `data` is `{"conversationId", "userId"}`.
        public static let typing = "typing"
    }
}
