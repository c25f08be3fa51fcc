import Foundation
import Logging
import TonightCore

/// Tokens issued to a client, with the account they belong to.
struct IssuedTokens: Sendable {
    var accessToken: String
    var refreshToken: String
    var expiresIn: Int
    var user: UserRecord
}

/// Sign-up, sign-in, tokens and password changes. Throws ``APIError`` for client mistakes.
struct AccountService: Sendable {
    let users: UserRepository
    let logins: LoginRepository
    let identities: IdentityRepository
    let tokens: TokenService
    let hasher: PasswordHasher
    let limiter: RateLimiter
    /// A banned member gets no new tokens (sign-in, refresh).
    let bans: BanList
    let config: AppConfig

    /// Creates an account, or turns the calling anonymous device into one.
    func signUp(
        username rawUsername: String, email rawEmail: String, password: String, displayName: String?,
        caller: Principal?, clientAddress: String, userAgent: String?
    ) async throws -> IssuedTokens {
        try await limiter.check("signup-ip:\(clientAddress)", capacity: config.signupsPerHourPerIP, period: 3600)
        let display = displayName?.trimmingCharacters(in: .whitespacesAndNewlines)
        var extra: [FieldIssue] = []
        if let display, display.count > 100 {
            extra.append(.init(field: "displayName", code: "too_long", message: "At most 100 characters."))
        } else if let display, !TextRules.isClean(display) {
            extra.append(
                .init(field: "displayName", code: "invalid_characters", message: "No control characters, please."))
        }
        let (username, emailKey) = try Self.validateNewAccount(
            username: rawUsername, email: rawEmail, password: password, extraIssues: extra)

        var conflicts: [FieldIssue] = []
        if try await users.usernameTaken(username.key) {
            conflicts.append(.init(field: "username", code: "taken", message: "This username is taken."))
        }
        if try await users.emailTaken(emailKey) {
            conflicts.append(.init(field: "email", code: "taken", message: "An account with this email exists."))
        }
        guard conflicts.isEmpty else { throw Self.takenError(conflicts) }

        let hash = try await hasher.hash(password)
        let now = Clock.millis()
        var user = UserRecord(
            id: Identifier.make(), isAnonymous: false, username: username.display, usernameKey: username.key,
            email: rawEmail.trimmingCharacters(in: .whitespaces), emailKey: emailKey, passwordHash: hash,
            role: .user, displayName: display?.isEmpty == false ? display : nil, showNameOnPosts: true,
            gender: nil, birthDate: nil, bio: nil, homeCity: nil, preferences: "{}", createdAt: now, updatedAt: now)
        do {
            if let caller, caller.isAnonymous, let device = try await users.find(id: caller.userID),
                device.isAnonymous
            {
                user.id = device.id
                user.createdAt = device.createdAt
                guard try await users.upgrade(user) else { throw Self.takenError([]) }
                try await logins.revokeAll(userID: device.id, except: nil, now: now)
            } else {
                try await users.insert(user)
            }
        } catch  where Database.isUniqueViolation(error) {
            throw Self.takenError([])
        }
        return try await issue(for: user, userAgent: userAgent)
    }

    /// Signs in with a username or an email. Unknown accounts and wrong passwords get the same
    /// answer after the same work.
    func logIn(login: String, password: String, clientAddress: String, userAgent: String?) async throws
        -> IssuedTokens
    {
        let key = AccountRules.usernameKey(login)
        try await limiter.check("login-ip:\(clientAddress)", capacity: config.loginsPerMinutePerIP, period: 60)
        // Keys that no account can have are not looked up (nor sent to a database that refuses NUL).
        let lookup = key.utf8.count <= 254 && TextRules.isClean(key)
        let user = lookup ? try await users.find(loginKey: key) : nil
        // A username and its email are one account, with one limit.
        let valid = try await checkPassword(
            password, hash: user?.passwordHash, account: user?.id ?? "login:\(key)", clientAddress: clientAddress)
        guard valid, let user, !user.isAnonymous else {
            throw APIError.unauthorized("Wrong username or password.", code: .invalidCredentials)
        }
        return try await issue(for: user, userAgent: userAgent)
    }

    /// Checks a password for `account` from `clientAddress` under the failure limits shared by
    /// sign-in, password change and account deletion:
    ///
    /// - an address gets `rate.login.account.per.minute` failures per account a minute (429 after);
    /// - all addresses together get as many per account; once they are spent, only addresses
    ///   that failed on the account recently are refused. An address with no failures (the owner,
    ///   at home) is still let in, so an attacker slows the account down without locking its
    ///   owner out.
    ///
    /// Only failures count; a correct password draws nothing.
    func checkPassword(_ password: String, hash: String?, account: String, clientAddress: String) async throws
        -> Bool
    {
        let capacity = config.loginsPerMinutePerAccount
        let pair = "password-fail:\(clientAddress)|\(account)"
        let everywhere = "password-fail:\(account)"
        try await limiter.ensureAvailable(pair, capacity: capacity, period: 60)
        if try await limiter.isDrawn(pair, capacity: capacity, period: 60) {
            try await limiter.ensureAvailable(everywhere, capacity: capacity, period: 60)
        }
        guard try await hasher.verify(password, hash: hash) else {
            try await limiter.spend(pair, capacity: capacity, period: 60)
            try await limiter.spend(everywhere, capacity: capacity, period: 60)
            return false
        }
        return true
    }

    /// A new anonymous device with read-only tokens.
    func createAnonymous(clientAddress: String, userAgent: String?) async throws -> IssuedTokens {
        try await limiter.check("signup-ip:\(clientAddress)", capacity: config.signupsPerHourPerIP * 5, period: 3600)
        let now = Clock.millis()
        let device = UserRecord(
            id: Identifier.make(), isAnonymous: true, role: .user, showNameOnPosts: false,
            preferences: "{}", createdAt: now, updatedAt: now)
        try await users.insert(device)
        return try await issue(for: device, userAgent: userAgent)
    }

    /// Rotates a refresh token. Presenting one that was already used revokes its whole login.
    func refresh(token: String) async throws -> IssuedTokens {
        let invalid = APIError.unauthorized("The refresh token is invalid or expired.", code: .invalidRefreshToken)
        let now = Clock.millis()
        guard TokenService.looksLikeRefreshToken(token),
            let record = try await logins.findToken(hash: TokenService.hash(token))
        else {
            throw invalid
        }
        // A ban also ended the login; say why.
        if bans.contains(record.userId) { throw APIError.accountSuspended }
        guard record.revokedAt == nil else { throw invalid }
        if record.usedAt != nil {
            try await logins.revoke(loginID: record.loginId, now: now)
            throw APIError.unauthorized(
                "This refresh token was already used; the login has been ended for safety.",
                code: .refreshTokenReused)
        }
        guard record.expiresAt > now, let user = try await users.find(id: record.userId) else { throw invalid }
        let next = TokenService.makeRefreshToken()
        let rotated = try await logins.rotate(
            oldHash: record.tokenHash, newHash: next.hash, loginID: record.loginId,
            expiresAt: now + Int64(config.refreshTokenTTL) * 1000, now: now)
        guard rotated else {
            try await logins.revoke(loginID: record.loginId, now: now)
            throw APIError.unauthorized(
                "This refresh token was already used; the login has been ended for safety.",
                code: .refreshTokenReused)
        }
        let access = try await tokens.accessToken(for: principal(user, loginID: record.loginId))
        return IssuedTokens(
            accessToken: access, refreshToken: next.token, expiresIn: tokens.accessTTL, user: user)
    }

    /// Ends one login.
    func logOut(_ caller: Principal) async throws {
        try await logins.revoke(loginID: caller.loginID, now: Clock.millis())
    }

    /// Ends every login of the caller.
    func logOutEverywhere(_ caller: Principal) async throws {
        try await logins.revokeAll(userID: caller.userID, except: nil, now: Clock.millis())
    }

    /// Changes the password after checking the current one; other logins end.
    func changePassword(_ caller: Principal, current: String, new: String, clientAddress: String) async throws {
        guard let user = try await users.find(id: caller.userID), !user.isAnonymous else {
            throw APIError.unauthorized("This account no longer exists.", code: .accountGone)
        }
        guard
            try await checkPassword(
                current, hash: user.passwordHash, account: user.id, clientAddress: clientAddress)
        else {
            throw APIError.forbidden("The current password is wrong.", code: .wrongPassword)
        }
        if let issue = AccountRules.password(new, username: user.username, field: "newPassword") {
            throw APIError.validation([issue])
        }
        let now = Clock.millis()
        try await users.setPassword(userID: user.id, hash: try await hasher.hash(new), now: now)
        try await logins.revokeAll(userID: user.id, except: caller.loginID, now: now)
    }

    /// Creates an account with a role, for `tonight admin create-user` (no rate limit, no token).
    func createUser(username rawUsername: String, email rawEmail: String, password: String, role: Role)
        async throws -> UserRecord
    {
        let (username, emailKey) = try Self.validateNewAccount(
            username: rawUsername, email: rawEmail, password: password)
        let now = Clock.millis()
        let user = UserRecord(
            id: Identifier.make(), isAnonymous: false, username: username.display, usernameKey: username.key,
            email: rawEmail.trimmingCharacters(in: .whitespaces), emailKey: emailKey,
            passwordHash: try await hasher.hash(password), role: role, showNameOnPosts: true,
            preferences: "{}", createdAt: now, updatedAt: now)
        do {
            try await users.insert(user)
        } catch  where Database.isUniqueViolation(error) {
            throw Self.takenError([])
        }
        return user
    }

    func issue(for user: UserRecord, userAgent: String?) async throws -> IssuedTokens {
        if bans.contains(user.id) { throw APIError.accountSuspended }
        let refresh = TokenService.makeRefreshToken()
        let now = Clock.millis()
        let loginID = try await logins.create(
            userID: user.id, userAgent: userAgent.map { String($0.prefix(300)) }, tokenHash: refresh.hash,
            expiresAt: now + Int64(config.refreshTokenTTL) * 1000, now: now)
        let access = try await tokens.accessToken(for: principal(user, loginID: loginID))
        return IssuedTokens(accessToken: access, refreshToken: refresh.token, expiresIn: tokens.accessTTL, user: user)
    }

    private func principal(_ user: UserRecord, loginID: String) -> Principal {
        Principal(
            userID: user.id, loginID: loginID, role: user.role,
            isAnonymous: user.isAnonymous)
    }

    /// Checks a new account's username, email and password together, so every invalid field is
    /// reported at once; returns the normalised username and the email key.
    private static func validateNewAccount(
        username rawUsername: String, email rawEmail: String, password: String, extraIssues: [FieldIssue] = []
    ) throws -> (AccountRules.Username, String) {
        var issues: [FieldIssue] = []
        var username: AccountRules.Username?
        switch AccountRules.username(rawUsername) {
        case .success(let value): username = value
        case .failure(let issue): issues.append(issue)
        }
        var emailKey: String?
        switch AccountRules.email(rawEmail) {
        case .success(let value): emailKey = value
        case .failure(let issue): issues.append(issue)
        }
        if let issue = AccountRules.password(password, username: rawUsername) { issues.append(issue) }
        issues += extraIssues
        guard issues.isEmpty, let username, let emailKey else { throw APIError.validation(issues) }
        return (username, emailKey)
    }

    private static func takenError(_ fields: [FieldIssue]) -> APIError {
        .conflict(
            fields.count == 1 ? fields[0].message : "This username or email is already in use.", code: .taken,
            fields: fields)
    }
}
