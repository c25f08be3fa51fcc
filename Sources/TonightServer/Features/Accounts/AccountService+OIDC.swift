import Foundation
import TonightCore

extension AccountService {
    /// Signs in with a verified outside identity; `created` when a new account was made for it.
    ///
    /// Decisions: a linked identity signs in to its account; otherwise it is linked to the
    /// calling member, or becomes the calling anonymous device's account, or joins the account
    /// whose email the provider verified, or gets a new account without a password. An identity
    /// linked to one account cannot be linked to another (409).
    func signIn(with identity: OIDCIdentity, caller: Principal?, userAgent: String?) async throws
        -> (tokens: IssuedTokens, created: Bool)
    {
        let now = Clock.millis()
        if let linked = try await identities.userID(provider: identity.provider, subject: identity.subject),
            let user = try await users.find(id: linked)
        {
            if let caller, !caller.isAnonymous, caller.userID != user.id {
                throw APIError.conflict(
                    "This \(identity.provider) identity already signs in to another account.", code: .identityTaken)
            }
            return (try await issue(for: user, userAgent: userAgent), false)
        }
        let callerUser = try await caller.asyncMap { try await users.find(id: $0.userID) } ?? nil
        if let member = callerUser, !member.isAnonymous {
            try await link(identity, to: member, now: now)
            return (try await issue(for: member, userAgent: userAgent), false)
        }
        let verifiedEmail = identity.emailVerified ? identity.email.flatMap { try? AccountRules.email($0).get() } : nil
        // Only an account that proved the address joins: one signed up with someone else's address
        // (and a password of its maker's) must not take over its owner's first provider sign-in.
        if callerUser == nil, let verifiedEmail, let owner = try await users.find(loginKey: verifiedEmail),
            owner.emailKey == verifiedEmail, owner.emailVerifiedAt != nil
        {
            try await link(identity, to: owner, now: now)
            return (try await issue(for: owner, userAgent: userAgent), false)
        }
        let user = try await newAccount(for: identity, verifiedEmail: verifiedEmail, device: callerUser, now: now)
        do {
            try await link(identity, to: user, now: now)
        } catch let error as APIError where error.status == 409 && callerUser == nil {
            // Two first sign-ins with one identity raced: keep the account the other one made.
            try await users.delete(id: user.id)
            return try await signIn(with: identity, caller: nil, userAgent: userAgent)
        }
        return (try await issue(for: user, userAgent: userAgent), true)
    }

    /// How recent an ID token that confirms a sensitive action must be.
    static let confirmationWindow: TimeInterval = 600

    /// Accepts `identity` as proof that the caller owns account `userID`: it must be linked to that
    /// account and issued within ``confirmationWindow`` (a token from an old sign-in is not a
    /// fresh confirmation). 401 `invalid_id_token` otherwise.
    func confirm(_ identity: OIDCIdentity, owns userID: String, now: Date = Date()) async throws {
        let linked = try await identities.userID(provider: identity.provider, subject: identity.subject)
        guard linked == userID, let issued = identity.issuedAt,
            now.timeIntervalSince(issued) <= Self.confirmationWindow
        else {
            throw APIError.unauthorized(
                "Sign in with your provider again to confirm: the ID token must be for this account and at most "
                    + "10 minutes old.", code: .invalidIdToken)
        }
    }

    /// A new account (or the upgraded calling device) with a free username made from the identity.
    private func newAccount(for identity: OIDCIdentity, verifiedEmail: String?, device: UserRecord?, now: Int64)
        async throws -> UserRecord
    {
        let base = AccountRules.suggestedUsername(name: identity.name, email: identity.email)
        let email = try await verifiedEmail.asyncFilter { try await !users.emailTaken($0) }
        for attempt in 0..<20 {
            let candidate = attempt == 0 ? base : "\(base)\(Int.random(in: 10...99_999))"
            guard case .success(let username) = AccountRules.username(candidate),
                try await !users.usernameTaken(username.key)
            else { continue }
            var user = UserRecord(
                id: device?.id ?? Identifier.make(), isAnonymous: false, username: username.display,
                usernameKey: username.key, email: email.flatMap { _ in identity.email }, emailKey: email,
                passwordHash: nil, role: device?.role ?? .user,
                displayName: identity.name.map { String($0.prefix(100)) }, showNameOnPosts: true,
                preferences: "{}", createdAt: device?.createdAt ?? now, updatedAt: now,
                emailVerifiedAt: email == nil ? nil : now)
            do {
                if device != nil {
                    guard try await users.upgrade(user) else { continue }
                } else {
                    try await users.insert(user)
                }
                user.isAnonymous = false
                return user
            } catch  where Database.isUniqueViolation(error) {
                continue
            }
        }
        throw APIError.conflict("Could not find a free username; please try again.", code: .usernameUnavailable)
    }

    private func link(_ identity: OIDCIdentity, to user: UserRecord, now: Int64) async throws {
        do {
            try await identities.link(
                provider: identity.provider, subject: identity.subject, userID: user.id, email: identity.email, now: now
            )
        } catch  where Database.isUniqueViolation(error) {
            throw APIError.conflict(
                "This \(identity.provider) identity already signs in to another account.", code: .identityTaken)
        }
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }

    fileprivate func asyncFilter(_ keep: (Wrapped) async throws -> Bool) async rethrows -> Wrapped? {
        guard let self, try await keep(self) else { return nil }
        return self
    }
}
