import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct UsersHandlers: Sendable {
    let users: UserRepository
    let people: People
    let reader: PostReader
    let posts: PostRepository

    func getUser(_ input: Operations.GetUser.Input) async throws -> Operations.GetUser.Output {
        let user = try await people.profile(input.path.username)
        var profile = Components.Schemas.PublicProfile(user)
        let followers = try await posts.followers(
            of: user.id, viewer: RequestInfo.current?.principal?.userID)
        profile.followers = Int(followers.count)
        profile.followedByMe = followers.followedByViewer
        return .ok(.init(body: .json(profile)))
    }
}

extension Components.Schemas.PublicProfile {
    /// The public side of an account (anonymous devices have no username and never show here).
    init(_ user: UserRecord) {
        self.init(
            id: user.id, username: user.username ?? "", displayName: user.displayName, bio: user.bio,
            ageGroup: user.ageGroup(), homeCity: user.homeCity, avatarUrl: ProfilePhotos.published(user.avatarUrl),
            createdAt: Clock.date(user.createdAt))
    }
}

extension UsersHandlers {
    func searchUsers(_ input: Operations.SearchUsers.Input) async throws -> Operations.SearchUsers.Output {
        let query = try Paging.searchText(input.query.q, hint: "Type the start of a name.")
        let found = try await users.search(
            query, viewer: RequestInfo.current?.principal?.userID, limit: try Paging.limit(input.query.limit))
        return .ok(.init(body: .json(.init(items: found.map(Components.Schemas.PublicProfile.init)))))
    }
}
