import Logging

/// Who is calling: a signed-in account or an anonymous device, from a verified access token.
public struct Principal: Sendable, Equatable {
    /// The user (or anonymous device) id.
    public var userID: String
    /// The login this access token belongs to.
    public var loginID: String
    /// The role at the time the token was issued.
    public var role: Role
    /// Anonymous devices may only read.
    public var isAnonymous: Bool

    /// Creates a principal.
    public init(userID: String, loginID: String, role: Role, isAnonymous: Bool) {
        self.userID = userID
        self.loginID = loginID
        self.role = role
        self.isAnonymous = isAnonymous
    }
}

/// Account roles, in increasing power.
public enum Role: String, Sendable, Codable, CaseIterable, Comparable {
    case user
    case moderator
    case admin

    private var rank: Int {
        switch self {
        case .user: 0
        case .moderator: 1
        case .admin: 2
        }
    }

    public static func < (lhs: Role, rhs: Role) -> Bool { lhs.rank < rhs.rank }
}

/// Per-request data the generated handlers cannot receive as arguments (they get only the
/// operation's input), carried in a task local set by the middleware chain.
public struct RequestInfo: Sendable {
    /// The request's current information, if inside a request.
    @TaskLocal public static var current: RequestInfo?

    /// `X-Request-Id`, also on every log line of the request.
    public var requestID: String
    /// The client's address (the peer, or `X-Forwarded-For` when proxies are trusted).
    public var clientAddress: String
    /// The verified caller, if a token was sent.
    public var principal: Principal?
    /// The client's `User-Agent`, if sent.
    public var userAgent: String?
    /// The request's logger.
    public var logger: Logger
    /// Whether the client has closed its side of the connection, so nobody will read the answer
    /// (see ``ClientDepartures``); always false outside a real connection.
    public var clientGone: @Sendable () -> Bool = { false }

    /// Creates request info.
    public init(
        requestID: String, clientAddress: String, userAgent: String? = nil, principal: Principal? = nil,
        logger: Logger
    ) {
        self.requestID = requestID
        self.clientAddress = clientAddress
        self.userAgent = userAgent
        self.principal = principal
        self.logger = logger
    }
}

extension RequestInfo {
    /// The caller, or a 401 if none.
    static func requireCaller() throws -> Principal {
        guard let principal = current?.principal else { throw APIError.unauthorized() }
        return principal
    }

    /// The caller if it is an account (not an anonymous device): 401 without a token, 403 for devices.
    static func requireMember() throws -> Principal {
        let principal = try requireCaller()
        if principal.isAnonymous { throw APIError.anonymousReadOnly }
        return principal
    }

    /// The caller if it is an admin: 401 without a token, 403 otherwise.
    static func requireAdmin() throws -> Principal {
        let principal = try requireMember()
        guard principal.role >= .admin else {
            throw APIError.forbidden("Only admins can do this.", code: .adminsOnly)
        }
        return principal
    }

    /// The caller if it is a moderator or admin: 401 without a token, 403 otherwise.
    static func requireModerator() throws -> Principal {
        let principal = try requireMember()
        guard principal.role >= .moderator else {
            throw APIError.forbidden("Only moderators and admins can do this.", code: .moderatorsOnly)
        }
        return principal
    }
}
