import Foundation
import TonightAPI
import TonightCore

extension APIHandlers {
    func getUser(_ input: Operations.GetUser.Input) async throws -> Operations.GetUser.Output {
        try await answer {
            let key = AccountRules.usernameKey(input.path.username)
            // A name that breaks the username rules cannot exist; don't look it up.
            let valid = (try? AccountRules.username(input.path.username).get()) != nil
            guard valid, let user = try await users.find(usernameKey: key), let username = user.username else {
                throw APIError.notFound("No user is called \(input.path.username).")
            }
            let profile = Components.Schemas.PublicProfile(
                id: user.id, username: username, displayName: user.displayName, bio: user.bio,
                ageGroup: user.ageGroup(),
                homeCity: user.homeCity, createdAt: Clock.date(user.createdAt))
            return .ok(.init(body: .json(profile)))
        }
    }
}
