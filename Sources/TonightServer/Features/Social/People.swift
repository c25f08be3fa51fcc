import TonightAPI
import TonightCore

/// Looks up the people a request names, as the caller may see them: itself, someone it may reach,
/// a profile by username. A block either way reads as "no such user", so it is never revealed.
struct People: Sendable {
    let users: UserRepository
    let social: SocialRepository

    /// The caller's account row (401 when it was deleted since the token was issued).
    func current(_ caller: Principal) async throws -> UserRecord {
        guard let user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        return user
    }

    /// Another account the caller may reach: it exists, is not an anonymous device, and neither
    /// blocked the other. Anything else is "no such user", so a block is not revealed.
    func reachable(_ id: String, from caller: Principal, field: String) async throws -> UserRecord {
        guard id != caller.userID else {
            throw APIError.validation([.init(field: field, code: "self", message: "Choose someone else.")])
        }
        guard let user = try await users.find(id: id), !user.isAnonymous,
            try await !social.isBlocked(caller.userID, id)
        else { throw APIError.notFound("No such user.") }
        return user
    }

    /// The account behind a username the caller may see: 404 for a name that breaks the username
    /// rules (not looked up), an unknown one, or a user blocked either way.
    func profile(_ username: String) async throws -> UserRecord {
        let valid = (try? AccountRules.username(username).get()) != nil
        guard valid, let user = try await users.find(usernameKey: AccountRules.usernameKey(username)),
            user.username != nil
        else { throw APIError.notFound("No user is called \(username).") }
        if let caller = RequestInfo.current?.principal, try await social.isBlocked(caller.userID, user.id) {
            throw APIError.notFound("No user is called \(username).")
        }
        return user
    }
}
