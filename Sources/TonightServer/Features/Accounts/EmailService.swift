import Foundation
import Logging
import TonightCore

/// Email verification, change of address and password reset by mailed links.
///
/// A link carries a single-use token (``EmailLinks``); its mail is queued in the same
/// transaction as the token (``MailJob``). A newer link of the same kind replaces the older one.
/// Mail is written in the account's language, else the request's `Accept-Language`, else English.
struct EmailService: Sendable {
    let accounts: AccountService
    let tokens: EmailTokenRepository
    let links: EmailLinks
    let logger: Logger

    /// How long each kind of link works.
    static let lifetime: [EmailTokenPurpose: Int64] = [
        .verify: 7 * 86_400_000, .change: 86_400_000, .reset: 30 * 60_000,
    ]

    private var users: UserRepository { accounts.users }
    private var config: AppConfig { accounts.config }

    /// Mails `user` a link to verify its address (after sign-up, or asked again). 409
    /// `already_verified` when it is; 429 past the account's hourly mail limit.
    func sendVerification(to user: UserRecord, acceptLanguage: String?) async throws {
        guard let email = user.email, !user.isAnonymous else {
            throw APIError.forbidden("Sign up with an email address first.")
        }
        guard user.emailVerifiedAt == nil else {
            throw APIError.conflict("This email address is already verified.", code: .alreadyVerified)
        }
        try await accounts.limiter.check(
            "mail-account:\(user.id)", capacity: config.mailsPerHourPerAccount, period: 3600)
        try await issue(.verify, template: .verifyEmail, to: email, user: user, acceptLanguage: acceptLanguage)
    }

    /// The verification mail of a new account. A failure here does not undo the sign-up: the
    /// member can ask again from settings.
    func welcome(_ user: UserRecord, acceptLanguage: String?) async {
        do {
            try await sendVerification(to: user, acceptLanguage: acceptLanguage)
        } catch {
            logger.warning("verification mail not queued", metadata: LoggedError.metadata(error))
        }
    }

    /// Mails a reset link if an account has `email`, and answers the same either way: 429 only
    /// for the caller's address (`rate.password.reset.per.hour`), while the account's own limit
    /// (`rate.mail.per.hour`) silently sends nothing more.
    func requestPasswordReset(email raw: String, clientAddress: String, acceptLanguage: String?) async throws {
        try await accounts.limiter.check(
            "password-reset-ip:\(clientAddress)", capacity: config.passwordResetsPerHourPerIP, period: 3600)
        let key: String
        switch AccountRules.email(raw) {
        case .success(let value): key = value
        case .failure(let issue): throw APIError.validation([issue])
        }
        guard let user = try await users.find(emailKey: key), !user.isAnonymous, let email = user.email else { return }
        do {
            try await accounts.limiter.check(
                "mail-account:\(user.id)", capacity: config.mailsPerHourPerAccount, period: 3600)
        } catch let error as APIError where error.status == .tooManyRequests {
            return
        }
        // A link still unused and unexpired is mailed again rather than replaced: a stranger asking
        // for the owner's address must not be able to keep the owner's own link from working.
        let now = Clock.millis()
        if let live = try await tokens.live(.reset, userID: user.id, now: now) {
            let language = MailLanguage(rawValue: user.language ?? "") ?? .en
            try await tokens.resend(
                try Self.job(
                    MailJob(
                        template: .passwordReset, to: email, name: Self.name(user), language: language,
                        tokenID: live.id, detail: email)), now: now)
            return
        }
        try await issue(
            .reset, template: .passwordReset, to: email, user: user, acceptLanguage: acceptLanguage, adopt: false)
    }

    /// Sets a new password with a reset link's token; every login ends.
    func resetPassword(token: String, newPassword: String, clientAddress: String) async throws {
        let record = try await redeemable(token, purpose: [.reset], clientAddress: clientAddress)
        guard let user = try await users.find(id: record.userID) else { throw Self.invalidLink }
        if let issue = AccountRules.password(newPassword, username: user.username ?? "", field: "newPassword") {
            throw APIError.validation([issue])
        }
        let hash = try await accounts.hasher.hash(newPassword)
        let outcome = try await tokens.redeem(
            record, emailKey: try Self.key(record.email), passwordHash: hash, now: Clock.millis())
        guard case .done = outcome else { throw Self.invalidLink }
    }

    /// Confirms an address with a verification or change link's token; returns the address.
    func verify(token: String, clientAddress: String) async throws -> String {
        let record = try await redeemable(token, purpose: [.verify, .change], clientAddress: clientAddress)
        let outcome: EmailTokenRedemption
        do {
            outcome = try await tokens.redeem(
                record, emailKey: try Self.key(record.email),
                notice: { previous in
                    guard let old = previous.email else { return nil }
                    return try Self.job(
                        MailJob(
                            template: .emailChanged, to: old, name: Self.name(previous),
                            language: MailLanguage(rawValue: previous.language ?? "") ?? .en, tokenID: nil,
                            detail: record.email))
                }, now: Clock.millis())
        } catch  where Database.isUniqueViolation(error) {
            throw APIError.conflict("Another account uses this address now.", code: .taken)
        }
        guard case .done = outcome else { throw Self.invalidLink }
        return record.email
    }

    /// Mails a link to make `email` the caller's address; the caller has confirmed they own the
    /// account (``MeHandlers``).
    func requestChange(_ caller: Principal, email raw: String, acceptLanguage: String?) async throws {
        guard let user = try await users.find(id: caller.userID), !user.isAnonymous else {
            throw APIError.unauthorized("This account no longer exists.", code: .accountGone)
        }
        let key: String
        switch AccountRules.email(raw) {
        case .success(let value): key = value
        case .failure(let issue): throw APIError.validation([issue])
        }
        guard key != user.emailKey else {
            throw APIError.validation([
                FieldIssue(field: "email", code: "unchanged", message: "This is already your address.")
            ])
        }
        if try await users.emailTaken(key) {
            throw APIError.conflict(
                "An account with this email exists.", code: .taken,
                fields: [FieldIssue(field: "email", code: "taken", message: "An account with this email exists.")])
        }
        try await accounts.limiter.check(
            "mail-account:\(user.id)", capacity: config.mailsPerHourPerAccount, period: 3600)
        try await issue(
            .change, template: .confirmNewEmail, to: raw.trimmingCharacters(in: .whitespaces), user: user,
            acceptLanguage: acceptLanguage)
    }

    // MARK: Links

    private static let invalidLink = APIError.badRequest(
        "This link has already been used, or a newer one replaced it. Ask for a new one.", code: .invalidLink)

    /// The stored token of `token`, if it is unused, unexpired and for one of `purpose`.
    private func redeemable(_ token: String, purpose: Set<EmailTokenPurpose>, clientAddress: String) async throws
        -> EmailTokenRecord
    {
        try await accounts.limiter.check(
            "login-ip:\(clientAddress)", capacity: config.loginsPerMinutePerIP, period: 60)
        guard token.utf8.count == 43, token.unicodeScalars.allSatisfy({ $0.isASCII }),
            let record = try await tokens.find(hash: EmailLinks.hash(token)), purpose.contains(record.purpose),
            record.usedAt == nil
        else { throw Self.invalidLink }
        guard record.expiresAt > Clock.millis() else {
            throw APIError(status: .gone, code: .linkExpired, detail: "This link has expired. Ask for a new one.")
        }
        return record
    }

    /// Stores a new token for `user` and queues its mail to `to`.
    /// `adopt`: the request's language becomes the account's (not from a request anyone can make).
    private func issue(
        _ purpose: EmailTokenPurpose, template: MailTemplate, to: String, user: UserRecord, acceptLanguage: String?,
        adopt: Bool = true
    ) async throws {
        let language = try await language(of: user, acceptLanguage: acceptLanguage, adopt: adopt)
        let now = Clock.millis()
        let id = Identifier.make()
        let record = EmailTokenRecord(
            id: id, userID: user.id, purpose: purpose, email: to, tokenHash: EmailLinks.hash(links.token(id: id)),
            createdAt: now, expiresAt: now + (Self.lifetime[purpose] ?? 0), usedAt: nil)
        let mail = MailJob(
            template: template, to: to, name: Self.name(user), language: language, tokenID: id, detail: to)
        try await tokens.issue(record, mail: try Self.job(mail), now: now)
    }

    /// The account's language; the request's becomes the account's when it has none.
    private func language(of user: UserRecord, acceptLanguage: String?, adopt: Bool) async throws -> MailLanguage {
        if let stored = user.language.flatMap(MailLanguage.init(rawValue:)) { return stored }
        guard let asked = MailLanguage.preferred(acceptLanguage) else { return .en }
        if adopt { try await users.adoptLanguage(userID: user.id, language: asked.rawValue) }
        return asked
    }

    private static func name(_ user: UserRecord) -> String {
        user.displayName ?? user.username ?? "there"
    }

    private static func key(_ email: String) throws -> String {
        guard case .success(let key) = AccountRules.email(email) else { throw invalidLink }
        return key
    }

    private static func job(_ mail: MailJob) throws -> NewJob {
        NewJob(
            kind: MailJob.kind, payload: String(decoding: try JSONEncoder().encode(mail), as: UTF8.self),
            runAt: Clock.millis(), maxAttempts: MailJob.maxAttempts)
    }
}
