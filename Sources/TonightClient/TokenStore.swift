import Foundation

/// The tokens of a signed-in user (or anonymous device).
public struct StoredTokens: Codable, Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String
    /// When the access token expires.
    public var accessExpiresAt: Date
    /// The account's id.
    public var userID: String
    /// Whether this is a read-only anonymous device.
    public var isAnonymous: Bool

    public init(accessToken: String, refreshToken: String, accessExpiresAt: Date, userID: String, isAnonymous: Bool) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.accessExpiresAt = accessExpiresAt
        self.userID = userID
        self.isAnonymous = isAnonymous
    }
}

/// Where the SDK keeps tokens between launches. Apps on Apple platforms typically implement
/// this over the Keychain.
public protocol TokenStore: Sendable {
    func load() async -> StoredTokens?
    func save(_ tokens: StoredTokens?) async
}

/// Keeps tokens in memory only.
public actor InMemoryTokenStore: TokenStore {
    private var tokens: StoredTokens?

    public init(_ tokens: StoredTokens? = nil) { self.tokens = tokens }
    public func load() -> StoredTokens? { tokens }
    public func save(_ tokens: StoredTokens?) { self.tokens = tokens }
}

/// Keeps tokens in a JSON file (created with owner-only permissions).
public actor FileTokenStore: TokenStore {
    private let url: URL

    public init(url: URL) { self.url = url }

    public func load() -> StoredTokens? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(StoredTokens.self, from: data)
    }

    public func save(_ tokens: StoredTokens?) {
        guard let tokens, let data = try? JSONEncoder().encode(tokens) else {
            try? FileManager.default.removeItem(at: url)
            return
        }
        FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600])
    }
}
