import Foundation
import TonightAPI

extension APIHandlers {
    func signUp(_ input: Operations.SignUp.Input) async throws -> Operations.SignUp.Output {
        try await answer {
            guard case .json(let body) = input.body else { throw APIError.badRequest("Send JSON.") }
            let info = RequestInfo.current
            let tokens = try await accounts.signUp(
                username: body.username, email: body.email, password: body.password, displayName: body.displayName,
                caller: info?.principal, clientAddress: info?.clientAddress ?? "unknown", userAgent: info?.userAgent)
            return .created(.init(body: .json(try .init(tokens))))
        }
    }

    func logIn(_ input: Operations.LogIn.Input) async throws -> Operations.LogIn.Output {
        try await answer {
            guard case .json(let body) = input.body else { throw APIError.badRequest("Send JSON.") }
            let info = RequestInfo.current
            let tokens = try await accounts.logIn(
                login: body.username, password: body.password, clientAddress: info?.clientAddress ?? "unknown",
                userAgent: info?.userAgent)
            return .ok(.init(body: .json(try .init(tokens))))
        }
    }

    func signInAnonymously(_ input: Operations.SignInAnonymously.Input) async throws
        -> Operations.SignInAnonymously.Output
    {
        try await answer {
            let info = RequestInfo.current
            let tokens = try await accounts.createAnonymous(
                clientAddress: info?.clientAddress ?? "unknown", userAgent: info?.userAgent)
            return .created(.init(body: .json(try .init(tokens))))
        }
    }

    func refreshTokens(_ input: Operations.RefreshTokens.Input) async throws -> Operations.RefreshTokens.Output {
        try await answer {
            guard case .json(let body) = input.body else { throw APIError.badRequest("Send JSON.") }
            let tokens = try await accounts.refresh(token: body.refreshToken)
            return .ok(.init(body: .json(try .init(tokens))))
        }
    }

    func logOut(_ input: Operations.LogOut.Input) async throws -> Operations.LogOut.Output {
        try await answer {
            try await accounts.logOut(try RequestInfo.requireCaller())
            return .noContent(.init())
        }
    }

    func logOutEverywhere(_ input: Operations.LogOutEverywhere.Input) async throws
        -> Operations.LogOutEverywhere.Output
    {
        try await answer {
            try await accounts.logOutEverywhere(try RequestInfo.requireCaller())
            return .noContent(.init())
        }
    }
}

extension Components.Schemas.AuthTokens {
    init(_ tokens: IssuedTokens) throws {
        self.init(
            accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn,
            user: try .init(tokens.user))
    }
}
