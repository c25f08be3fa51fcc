import Foundation
import OpenAPIRuntime
import TonightAPI

extension TonightClient {
    /// The device's languages as an `Accept-Language` header, so that mail the server sends on
    /// a request is written in one of them (where the server writes it; English otherwise).
    static var acceptLanguage: String {
        Locale.preferredLanguages.prefix(4).enumerated().map { index, tag in
            index == 0 ? tag : "\(tag);q=\(String(format: "%.1f", 1 - Double(index) * 0.2))"
        }.joined(separator: ", ")
    }

    /// Asks for a password-reset link by mail. The answer is the same whether or not an account
    /// has `email`; the link opens the web app's reset screen, or an app that handles
    /// `#/reset-password/<token>` and calls ``resetPassword(token:newPassword:)``.
    public func requestPasswordReset(email: String) async throws {
        _ = try await call {
            try await api.requestPasswordReset(
                headers: .init(acceptLanguage: Self.acceptLanguage), body: .json(.init(email: email)))
        }
    }

    /// Sets a new password with the token of a reset link (valid once, for 30 minutes). Every
    /// login of the account ends, this device's too: sign in with the new password. A used or
    /// replaced link throws 400 `invalid_link`, an expired one 410 `link_expired`.
    public func resetPassword(token: String, newPassword: String) async throws {
        _ = try await call {
            try await api.resetPassword(body: .json(.init(token: token, newPassword: newPassword)))
        }
        await session.set(nil)
    }

    /// Confirms an address with the token of a verification or change link; returns the address.
    @discardableResult
    public func verifyEmail(token: String) async throws -> String {
        try await call { try await api.verifyEmail(body: .json(.init(token: token))).ok.body.json.email }
    }

    /// Mails a new verification link to the account's address (409 `already_verified` when it is).
    public func sendEmailVerification() async throws {
        _ = try await call { try await api.sendEmailVerification(headers: .init(acceptLanguage: Self.acceptLanguage)) }
    }

    /// Asks to change the account's email, confirmed with the current password: nothing changes
    /// until the link mailed to `email` is opened (``Me`` `pendingEmail` meanwhile).
    public func changeEmail(to email: String, password: String) async throws {
        _ = try await call {
            try await api.changeEmail(
                headers: .init(acceptLanguage: Self.acceptLanguage),
                body: .json(.init(email: email, password: password)))
        }
    }

    /// ``changeEmail(to:password:)`` for an account without a password, confirmed with an ID
    /// token from a new sign-in with its provider (at most 10 minutes old).
    public func changeEmail(to email: String, idToken: String) async throws {
        _ = try await call {
            try await api.changeEmail(
                headers: .init(acceptLanguage: Self.acceptLanguage), body: .json(.init(email: email, idToken: idToken)))
        }
    }
}
