import Foundation
import OpenAPIRuntime
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct MeHandlers: Sendable {
    let accounts: AccountService
    let users: UserRepository
    let sessions: SessionRepository
    let eventService: EventService
    let people: People
    let bans: BanList
    let fanout: any LiveFanout
    let oidc: OIDCVerifier
    let photos: ProfilePhotos
    let email: EmailService

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let caller = try RequestInfo.requireCaller()
        guard let (user, pending) = try await users.findWithPendingEmail(id: caller.userID, now: Clock.millis())
        else { throw APIError.accountGone }
        var me = try Components.Schemas.Me(user)
        me.pendingEmail = pending
        return .ok(.init(body: .json(me)))
    }

    func updateMe(_ input: Operations.UpdateMe.Input) async throws -> Operations.UpdateMe.Output {
        let caller = try RequestInfo.requireMember()
        let change = input.body.json
        guard var user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        let before = user
        try ProfileEdit.apply(
            change, to: &user, today: CalendarDate(date: Date()),
            sports: Set(try await eventService.assembler.sports().keys))
        user.updatedAt = Clock.millis()
        try await users.updateProfile(user)
        // Sessions keep their players' gender and birth date for recommendations.
        if before.gender != user.gender || before.birthDate != user.birthDate {
            try await sessions.refreshPlayers(ofUser: user.id, from: Clock.millis())
        }
        return .ok(.init(body: .json(try .init(user))))
    }

    func deleteMe(_ input: Operations.DeleteMe.Input) async throws -> Operations.DeleteMe.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        try await confirmOwner(caller, password: body.password, idToken: body.idToken)
        let playing = try await sessions.upcomingSessions(of: caller.userID, from: Clock.millis())
        try await users.delete(id: caller.userID)
        await bans.revoke(caller.userID, .gone, fanout: fanout)
        await photos.deleteFiles(of: caller.userID)
        try await sessions.refreshPlayers(of: playing)
        return .noContent(.init())
    }

    func uploadProfilePhoto(_ input: Operations.UploadProfilePhoto.Input) async throws
        -> Operations.UploadProfilePhoto.Output
    {
        let caller = try RequestInfo.requireMember()
        let body: HTTPBody
        switch input.body {
        case .jpeg(let bytes): body = bytes
        case .png(let bytes): body = bytes
        case .imageHeic(let bytes): body = bytes
        }
        return .ok(.init(body: .json(try .init(try await photos.set(caller.userID, from: body)))))
    }

    func deleteProfilePhoto(_ input: Operations.DeleteProfilePhoto.Input) async throws
        -> Operations.DeleteProfilePhoto.Output
    {
        let caller = try RequestInfo.requireMember()
        return .ok(.init(body: .json(try .init(try await photos.remove(caller.userID)))))
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        try await accounts.changePassword(
            caller, current: body.currentPassword, new: body.newPassword,
            clientAddress: RequestInfo.current?.clientAddress ?? "unknown")
        return .noContent(.init())
    }

    func changeEmail(_ input: Operations.ChangeEmail.Input) async throws -> Operations.ChangeEmail.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        try await confirmOwner(caller, password: body.password, idToken: body.idToken)
        try await email.requestChange(caller, email: body.email, acceptLanguage: input.headers.acceptLanguage)
        return .accepted(.init())
    }

    func sendEmailVerification(_ input: Operations.SendEmailVerification.Input) async throws
        -> Operations.SendEmailVerification.Output
    {
        let caller = try RequestInfo.requireMember()
        guard let user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        try await email.sendVerification(to: user, acceptLanguage: input.headers.acceptLanguage)
        return .accepted(.init())
    }

    /// Asks the caller to prove again that the account is theirs, for an action a stolen access
    /// token must not be enough for: the current password (under the sign-in failure limits), or,
    /// for an account without one, a fresh ID token from a provider linked to it.
    private func confirmOwner(_ caller: Principal, password: String?, idToken: String?) async throws {
        guard let user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        if let hash = user.passwordHash {
            guard let password else {
                throw APIError.validation([
                    FieldIssue(field: "password", code: "required", message: "Confirm with your current password.")
                ])
            }
            let address = RequestInfo.current?.clientAddress ?? "unknown"
            guard try await accounts.checkPassword(password, hash: hash, account: user.id, clientAddress: address)
            else {
                throw APIError.forbidden("The current password is wrong.", code: .wrongPassword)
            }
            return
        }
        guard let idToken else {
            throw APIError.validation([
                FieldIssue(
                    field: "idToken", code: "required",
                    message: "Sign in with your provider again to confirm, and send its ID token.")
            ])
        }
        let identity = try await AuthHandlers.verify(idToken, nonce: nil, with: oidc)
        try await accounts.confirm(identity, owns: user.id)
    }
}
