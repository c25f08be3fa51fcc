import Foundation
import TonightAPI

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct AuthHandlers: Sendable {
    let accounts: AccountService
    let oidc: OIDCVerifier
    let email: EmailService

    func signUp(_ input: Operations.SignUp.Input) async throws -> Operations.SignUp.Output {
        let body = input.body.json
        let info = RequestInfo.current
        let tokens = try await accounts.signUp(
            username: body.username, email: body.email, password: body.password, displayName: body.displayName,
            caller: info?.principal, clientAddress: info?.clientAddress ?? "unknown", userAgent: info?.userAgent)
        await email.welcome(tokens.user, acceptLanguage: input.headers.acceptLanguage)
        return .created(.init(body: .json(try .init(tokens))))
    }

    func signInWithOIDC(_ input: Operations.SignInWithOIDC.Input) async throws -> Operations.SignInWithOIDC.Output {
        let body = input.body.json
        let info = RequestInfo.current
        let identity = try await Self.verify(body.idToken, nonce: body.nonce, with: oidc)
        let (tokens, created) = try await accounts.signIn(
            with: identity, caller: info?.principal, userAgent: info?.userAgent)
        let answer = try Components.Schemas.AuthTokens(tokens)
        return created ? .created(.init(body: .json(answer))) : .ok(.init(body: .json(answer)))
    }

    /// The identity `idToken` proves, or its refusal as a problem (``problem(_:)``).
    static func verify(_ idToken: String, nonce: String?, with oidc: OIDCVerifier) async throws -> OIDCIdentity {
        do {
            return try await oidc.verify(idToken: idToken, nonce: nonce)
        } catch {
            throw problem(error)
        }
    }

    /// Why an ID token was refused, as a 401 (or a 503 when the provider's keys are unreachable).
    static func problem(_ error: OIDCError) -> APIError {
        let reason: String
        switch error {
        case .malformed: reason = "It is not a well-formed ID token."
        case .unknownIssuer: reason = "Its issuer is not a sign-in provider of this server."
        case .unsupportedAlgorithm: reason = "It is signed with an algorithm this server does not accept."
        case .unknownKey: reason = "It is signed with a key the provider does not publish."
        case .badSignature: reason = "Its signature does not verify."
        case .wrongAudience: reason = "It was issued for another app."
        case .expired: reason = "It has expired."
        case .notYetValid: reason = "It is not valid yet."
        case .nonceMismatch: reason = "Its nonce does not match."
        case .keysUnavailable:
            return APIError(
                status: 503, code: .providerUnavailable, detail: "The sign-in provider's keys could not be loaded.")
        }
        return APIError.unauthorized("The ID token was refused: \(reason)", code: .invalidIdToken)
    }

    func logIn(_ input: Operations.LogIn.Input) async throws -> Operations.LogIn.Output {
        let body = input.body.json
        let info = RequestInfo.current
        let tokens = try await accounts.logIn(
            login: body.username, password: body.password, clientAddress: info?.clientAddress ?? "unknown",
            userAgent: info?.userAgent)
        return .ok(.init(body: .json(try .init(tokens))))
    }

    func signInAnonymously(_ input: Operations.SignInAnonymously.Input) async throws
        -> Operations.SignInAnonymously.Output
    {
        let info = RequestInfo.current
        let tokens = try await accounts.createAnonymous(
            clientAddress: info?.clientAddress ?? "unknown", userAgent: info?.userAgent)
        return .created(.init(body: .json(try .init(tokens))))
    }

    func requestPasswordReset(_ input: Operations.RequestPasswordReset.Input) async throws
        -> Operations.RequestPasswordReset.Output
    {
        try await email.requestPasswordReset(
            email: input.body.json.email, clientAddress: RequestInfo.current?.clientAddress ?? "unknown",
            acceptLanguage: input.headers.acceptLanguage)
        return .accepted(.init())
    }

    func resetPassword(_ input: Operations.ResetPassword.Input) async throws -> Operations.ResetPassword.Output {
        let body = input.body.json
        try await email.resetPassword(
            token: body.token, newPassword: body.newPassword,
            clientAddress: RequestInfo.current?.clientAddress ?? "unknown")
        return .noContent(.init())
    }

    func verifyEmail(_ input: Operations.VerifyEmail.Input) async throws -> Operations.VerifyEmail.Output {
        let address = try await email.verify(
            token: input.body.json.token, clientAddress: RequestInfo.current?.clientAddress ?? "unknown")
        return .ok(.init(body: .json(.init(email: address))))
    }

    func refreshTokens(_ input: Operations.RefreshTokens.Input) async throws -> Operations.RefreshTokens.Output {
        let body = input.body.json
        let tokens = try await accounts.refresh(token: body.refreshToken)
        return .ok(.init(body: .json(try .init(tokens))))
    }

    func logOut(_ input: Operations.LogOut.Input) async throws -> Operations.LogOut.Output {
        try await accounts.logOut(try RequestInfo.requireCaller())
        return .noContent(.init())
    }

    func logOutEverywhere(_ input: Operations.LogOutEverywhere.Input) async throws
        -> Operations.LogOutEverywhere.Output
    {
        try await accounts.logOutEverywhere(try RequestInfo.requireCaller())
        return .noContent(.init())
    }
}

extension Components.Schemas.AuthTokens {
    init(_ tokens: IssuedTokens) throws {
        self.init(
            accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn,
            user: try .init(tokens.user))
    }
}
