import AsyncHTTPClient
import Foundation
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

/// The Tonight SDK: a curated client over the generated API client.
///
/// It signs in, stores and refreshes tokens transparently (one refresh at a time; refresh tokens
/// rotate on every use), maps problem+json answers to ``TonightError``, opens the live socket
/// (``live(_:)``), and queues writes made offline with their idempotency keys
/// (``PendingWrites``, what the seeds got from Parse's `saveEventually`).
///
/// ```swift
/// let tonight = TonightClient(serverURL: URL(string: "http://127.0.0.1:8080")!)
/// try await tonight.signUp(username: "alice", email: "alice@example.com", password: "…")
/// let me = try await tonight.me()
/// ```
public final class TonightClient: Sendable {
    /// The server's base URL.
    public let serverURL: URL
    let api: Client
    let session: AuthSession
    let httpClient: HTTPClient
    /// Writes queued for later (``enqueueWrite(method:path:json:)``).
    public let pendingWrites: PendingWrites

    /// Creates a client.
    /// - Parameters:
    ///   - serverURL: e.g. `http://127.0.0.1:8080`.
    ///   - tokenStore: Where tokens persist between launches (memory by default).
    ///   - httpClient: The AsyncHTTPClient to use (the shared one by default).
    ///   - pendingWrites: Where offline writes wait (in memory by default).
    public init(
        serverURL: URL, tokenStore: any TokenStore = InMemoryTokenStore(), httpClient: HTTPClient = .shared,
        pendingWrites: PendingWrites = PendingWrites()
    ) {
        self.serverURL = serverURL
        self.httpClient = httpClient
        self.pendingWrites = pendingWrites
        let transport = AsyncHTTPClientTransport(configuration: .init(client: httpClient, timeout: .seconds(30)))
        let publicAPI = Client(serverURL: serverURL, transport: transport, middlewares: [ProblemMiddleware()])
        let session = AuthSession(store: tokenStore) { refreshToken in
            try await Self.unwrap {
                let output = try await publicAPI.refreshTokens(body: .json(.init(refreshToken: refreshToken)))
                guard case .ok(let ok) = output, case .json(let tokens) = ok.body else {
                    throw TonightError.unexpectedResponse(status: 0)
                }
                return StoredTokens(tokens)
            }
        }
        self.session = session
        self.api = Client(
            serverURL: serverURL, transport: transport,
            middlewares: [AuthMiddleware(session: session), ProblemMiddleware()])
    }

    // MARK: Session

    /// The current tokens, if signed in (or continuing anonymously).
    public var tokens: StoredTokens? {
        get async { await session.current() }
    }

    /// Whether a user or device is signed in.
    public var isSignedIn: Bool {
        get async { await session.current() != nil }
    }

    /// Creates an account and signs in. Called while continuing anonymously, it upgrades the device
    /// to the account, keeping what it did. The server mails a link to verify `email`
    /// (``verifyEmail(token:)``; ``Me`` `emailVerified` says whether it was opened).
    @discardableResult
    public func signUp(username: String, email: String, password: String, displayName: String? = nil) async throws
        -> Me
    {
        try await signIn {
            let output = try await api.signUp(
                headers: .init(acceptLanguage: Self.acceptLanguage),
                body: .json(.init(username: username, email: email, password: password, displayName: displayName)))
            guard case .created(let created) = output, case .json(let tokens) = created.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return tokens
        }
    }

    /// Signs in with a username (or email) and password.
    @discardableResult
    public func logIn(username: String, password: String) async throws -> Me {
        try await signIn {
            let output = try await api.logIn(body: .json(.init(username: username, password: password)))
            guard case .ok(let ok) = output, case .json(let tokens) = ok.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return tokens
        }
    }

    /// Continues without an account: a read-only device token.
    @discardableResult
    public func continueAnonymously() async throws -> Me {
        try await signIn {
            let output = try await api.signInAnonymously()
            guard case .created(let created) = output, case .json(let tokens) = created.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return tokens
        }
    }

    /// Refreshes the tokens now (normally automatic).
    public func refreshTokens() async throws {
        guard try await session.refresh(after: nil) != nil else { throw TonightError.notSignedIn }
    }

    /// Signs out on this device: the server ends this login; local tokens are cleared.
    public func logOut() async throws {
        defer { Task { await session.set(nil) } }
        guard await session.current() != nil else { return }
        _ = try await call { try await api.logOut() }
        await session.set(nil)
    }

    /// Ends every login of the account, on every device.
    public func logOutEverywhere() async throws {
        _ = try await call { try await api.logOutEverywhere() }
        await session.set(nil)
    }

    // MARK: Account

    /// The signed-in user.
    public func me() async throws -> Me {
        try await call {
            guard case .ok(let ok) = try await api.getMe(), case .json(let me) = ok.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return me
        }
    }

    /// Changes profile fields and preferences; fields left `nil` stay as they are.
    public func updateMe(_ change: ProfileChange) async throws -> Me {
        try await call {
            guard case .ok(let ok) = try await api.updateMe(body: .json(change)), case .json(let me) = ok.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return me
        }
    }

    /// Sets the profile photo from JPEG, PNG or HEIC bytes (at most 10 MB; the server reads the
    /// format from the bytes, `png` only labels them). The server crops it to a square, strips its
    /// metadata and serves it as ``Me`` `avatarUrl`; a server without libheif refuses HEIC (415).
    public func setProfilePhoto(_ data: Data, png: Bool = false) async throws -> Me {
        try await call {
            let body = HTTPBody(data)
            return try await api.uploadProfilePhoto(body: png ? .png(body) : .jpeg(body)).ok.body.json
        }
    }

    /// Removes the profile photo.
    public func removeProfilePhoto() async throws -> Me {
        try await call { try await api.deleteProfilePhoto().ok.body.json }
    }

    /// Changes the password; other devices are signed out.
    public func changePassword(current: String, new: String) async throws {
        _ = try await call {
            try await api.changePassword(body: .json(.init(currentPassword: current, newPassword: new)))
        }
    }

    /// Deletes the account and its personal data, confirmed with the current password, then
    /// signs out locally. A wrong password throws (403 `wrong_password`).
    public func deleteAccount(password: String) async throws {
        _ = try await call { try await api.deleteMe(body: .json(.init(password: password))) }
        await session.set(nil)
    }

    /// Deletes an account that has no password (made by signing in with Apple, Google…),
    /// confirmed with an ID token from a new sign-in with its provider (at most 10 minutes old).
    public func deleteAccount(idToken: String) async throws {
        _ = try await call { try await api.deleteMe(body: .json(.init(idToken: idToken))) }
        await session.set(nil)
    }

    /// A user's public profile.
    public func user(named username: String) async throws -> PublicProfile {
        try await call {
            guard case .ok(let ok) = try await api.getUser(path: .init(username: username)),
                case .json(let profile) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return profile
        }
    }

    /// The server's public client settings.
    public func config() async throws -> ClientConfig {
        try await call {
            guard case .ok(let ok) = try await api.getClientConfig(), case .json(let config) = ok.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return config
        }
    }

    // MARK: Helpers

    func signIn(_ body: () async throws -> Components.Schemas.AuthTokens) async throws -> Me {
        let tokens = try await call(body)
        await session.set(StoredTokens(tokens))
        return tokens.user
    }

    /// Runs a generated-client call, surfacing ``TonightError`` instead of the runtime's wrapper.
    func call<T>(_ body: () async throws -> T) async throws -> T {
        try await Self.unwrap(body)
    }

    static func unwrap<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ClientError {
            if let inner = error.underlyingError as? TonightError { throw inner }
            throw error
        }
    }
}

extension StoredTokens {
    init(_ tokens: Components.Schemas.AuthTokens, now: Date = Date()) {
        self.init(
            accessToken: tokens.accessToken, refreshToken: tokens.refreshToken,
            accessExpiresAt: now.addingTimeInterval(TimeInterval(tokens.expiresIn)), userID: tokens.user.id,
            isAnonymous: tokens.user.isAnonymous)
    }
}
