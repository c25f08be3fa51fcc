import Foundation
import TonightAPI
import TonightCore

extension APIHandlers {
    func getUser(_ input: Operations.GetUser.Input) async throws -> Operations.GetUser.Output {
        try await answer {
            let key = AccountRules.usernameKey(input.path.username)
            // A name that breaks the username rules cannot exist; don't look it up.
            let valid = (try? AccountRules.username(input.path.username).get()) != nil
            guard valid, let user = try await users.find(usernameKey: key), user.username != nil else {
                throw APIError.notFound("No user is called \(input.path.username).")
            }
            // Blocked either way: the profile is not there for either of them.
            if let caller = RequestInfo.current?.principal, try await social.isBlocked(caller.userID, user.id) {
                throw APIError.notFound("No user is called \(input.path.username).")
            }
            return .ok(.init(body: .json(.init(user))))
        }
    }
}

extension Components.Schemas.PublicProfile {
    /// The public side of an account (anonymous devices have no username and never show here).
    init(_ user: UserRecord) {
        self.init(
            id: user.id, username: user.username ?? "", displayName: user.displayName, bio: user.bio,
            ageGroup: user.ageGroup(), homeCity: user.homeCity, avatarUrl: user.avatarUrl,
            createdAt: Clock.date(user.createdAt))
    }
}
