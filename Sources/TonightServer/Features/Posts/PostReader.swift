import TonightAPI
import TonightCore

/// Posts as a viewer may see them: one post (hidden from others while processing, flagged,
/// removed, by a banned author or across a block), pages of a feed, and the API form of posts with
/// the viewer's own vote, flag and bookmark.
struct PostReader: Sendable {
    let posts: PostService
    let repository: PostRepository
    let social: SocialRepository
    let bans: BanList

    /// A post the viewer may see: ready and visible ones for everybody; its author and moderators
    /// also see it while processing, failed or hidden. Blocked authors are not there.
    func visible(_ id: String, viewer: Principal?) async throws -> PostRecord {
        guard let post = try await repository.find(id: id), post.moderation != .removed else {
            throw APIError.notFound("No such post.")
        }
        let privileged = viewer.map { $0.userID == post.authorID || $0.role >= .moderator } ?? false
        let banned = post.authorID.map(bans.contains) ?? false
        guard privileged || (post.status == .ready && post.moderation == .visible && !banned) else {
            throw APIError.notFound("No such post.")
        }
        if let viewer, let author = post.authorID, author != viewer.userID,
            try await social.isBlocked(viewer.userID, author)
        {
            throw APIError.notFound("No such post.")
        }
        return post
    }

    /// One page of a time-ordered feed. The cursor carries the page number and the keyset position.
    func feedPage(_ source: FeedSource, cursor: String?, limit: Int?) async throws -> Components.Schemas.FeedPage {
        let viewer = RequestInfo.current?.principal?.userID
        let limit = try Paging.limit(limit)
        let (page, position) = try Paging.feedPosition(cursor)
        let rows = try await repository.feed(source, viewer: viewer, before: position, limit: limit + 1)
        let shown = Array(rows.prefix(limit))
        let next =
            rows.count > limit ? shown.last.map { Paging.feedCursor(page: page + 1, $0.position, $0.post.id) } : nil
        return .init(items: try await assemble(shown.map(\.post), viewer: viewer), page: page, nextCursor: next)
    }

    /// Posts as the API shows them to `viewer` (with their vote, flag and bookmark).
    func assemble(_ records: [PostRecord], viewer: String?) async throws -> [Components.Schemas.Post] {
        var state: [String: ViewerState] = [:]
        if let viewer { state = try await repository.viewerState(viewer, posts: records.map(\.id)) }
        return records.map {
            Components.Schemas.Post($0, urls: posts.urls, viewer: state[$0.id], signedIn: viewer != nil)
        }
    }
}
