import Foundation

/// Holds the current tokens, refreshes them before they expire, and makes sure only one refresh
/// runs at a time (the server ends a login whose refresh token is presented twice).
actor AuthSession {
    private var tokens: StoredTokens?
    private let store: any TokenStore
    private var loaded = false
    private var refreshing: Task<StoredTokens, any Error>?
    private let refresher: @Sendable (String) async throws -> StoredTokens

    init(store: any TokenStore, refresher: @escaping @Sendable (String) async throws -> StoredTokens) {
        self.store = store
        self.refresher = refresher
    }

    /// The stored tokens (loaded from the store on first use).
    func current() async -> StoredTokens? {
        if !loaded {
            tokens = await store.load()
            loaded = true
        }
        return tokens
    }

    /// Replaces the tokens (after sign-in) or clears them (sign-out).
    func set(_ new: StoredTokens?) async {
        tokens = new
        loaded = true
        refreshing = nil
        await store.save(new)
    }

    /// An access token valid for at least another 30 seconds, refreshing first if needed;
    /// `nil` when signed out.
    func accessToken(now: Date = Date()) async throws -> String? {
        guard let tokens = await current() else { return nil }
        if tokens.accessExpiresAt.timeIntervalSince(now) > 30 { return tokens.accessToken }
        return try await refresh(after: tokens.accessToken)?.accessToken
    }

    /// Refreshes unless someone already replaced `staleAccessToken`. Signs out when the server
    /// refuses the refresh token.
    func refresh(after staleAccessToken: String?) async throws -> StoredTokens? {
        guard let tokens = await current() else { return nil }
        if let staleAccessToken, tokens.accessToken != staleAccessToken { return tokens }
        if let refreshing { return try await refreshing.value }
        let refresher = self.refresher
        let refreshToken = tokens.refreshToken
        let task = Task { try await refresher(refreshToken) }
        refreshing = task
        do {
            let fresh = try await task.value
            await set(fresh)
            return fresh
        } catch let error as TonightError where error.status == 401 {
            await set(nil)
            throw error
        } catch {
            refreshing = nil
            throw error
        }
    }
}
