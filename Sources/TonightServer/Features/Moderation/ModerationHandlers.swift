import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct ModerationHandlers: Sendable {
    let users: UserRepository
    let notifier: Notifier
    let postService: PostService
    let posts: PostRepository
    let bans: BanList
    let fanout: any LiveFanout
    let logins: LoginRepository
    let notifications: NotificationRepository
    let config: AppConfig
    let reader: PostReader

    func setPostRetention(_ input: Operations.SetPostRetention.Input) async throws
        -> Operations.SetPostRetention.Output
    {
        let caller = try RequestInfo.requireModerator()
        let body = input.body.json
        let post = try await reader.visible(input.path.postId, viewer: caller)
        let retention = body.retention.rawValue
        let expiresAt =
            retention == "media" ? post.createdAt + Int64(config.mediaRetentionDays) * 86_400_000 : nil
        try await posts.setRetention(
            id: post.id, retention: retention, expiresAt: expiresAt, now: Clock.millis())
        return .ok(.init(body: .json(try await assembledPost(post.id, viewer: caller.userID))))
    }

    func moderationQueue(_ input: Operations.ModerationQueue.Input) async throws -> Operations.ModerationQueue.Output {
        _ = try RequestInfo.requireModerator()
        let page = try await reader.feedPage(.hidden, cursor: input.query.cursor, limit: input.query.limit)
        return .ok(.init(body: .json(page)))
    }

    func restorePost(_ input: Operations.RestorePost.Input) async throws -> Operations.RestorePost.Output {
        let caller = try RequestInfo.requireModerator()
        let post = try await reader.visible(input.path.postId, viewer: caller)
        try await posts.restore(id: post.id, now: Clock.millis())
        try await tellAuthor(of: post, "Your post was reviewed and is visible again.")
        return .ok(.init(body: .json(try await assembledPost(post.id, viewer: caller.userID))))
    }

    func removePost(_ input: Operations.RemovePost.Input) async throws -> Operations.RemovePost.Output {
        let caller = try RequestInfo.requireModerator()
        let post = try await reader.visible(input.path.postId, viewer: caller)
        try await postService.delete(post)
        try await tellAuthor(of: post, "Your post was removed after review.")
        return .noContent(.init())
    }

    func banUser(_ input: Operations.BanUser.Input) async throws -> Operations.BanUser.Output {
        let caller = try RequestInfo.requireModerator()
        guard let user = try await users.find(id: input.path.userId) else {
            throw APIError.notFound("No such user.")
        }
        guard user.id != caller.userID else { throw APIError.forbidden("You cannot ban yourself.", code: ._self) }
        if user.role >= .moderator, caller.role < .admin {
            throw APIError.forbidden("Only admins can ban moderators and admins.", code: .adminsOnly)
        }
        let now = Clock.millis()
        try await bans.ban(user.id, by: caller.userID, now: now)
        try await logins.revokeAll(userID: user.id, except: nil, now: now)
        await bans.revoke(user.id, .banned, fanout: fanout)
        return .noContent(.init())
    }

    /// Lifts a ban; as banning them does, lifting a moderator's or admin's ban takes an admin.
    func unbanUser(_ input: Operations.UnbanUser.Input) async throws -> Operations.UnbanUser.Output {
        let caller = try RequestInfo.requireModerator()
        if let user = try await users.find(id: input.path.userId), user.role >= .moderator,
            caller.role < .admin
        {
            throw APIError.forbidden("Only admins can lift the ban of moderators and admins.", code: .adminsOnly)
        }
        try await bans.unban(input.path.userId)
        await bans.reinstate(input.path.userId, fanout: fanout)
        return .noContent(.init())
    }

    /// A `moderation` notification to the post's author, if it has one.
    private func tellAuthor(of post: PostRecord, _ text: String) async throws {
        guard let author = post.authorID else { return }
        let written = try await notifications.write(
            [NotificationDraft(userID: author, kind: .moderation, text: text, postID: post.id)], now: Clock.millis())
        await notifier.publish(written)
    }

    /// A post as stored now, as the API shows it to `viewer`.
    private func assembledPost(_ id: String, viewer: String) async throws -> Components.Schemas.Post {
        guard let post = try await posts.find(id: id) else { throw APIError.notFound("No such post.") }
        return try await reader.assemble([post], viewer: viewer)[0]
    }
}
