import Foundation
import OpenAPIRuntime
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct PostsHandlers: Sendable {
    let places: PlaceRepository
    let events: EventRepository
    let social: SocialRepository
    let notifier: Notifier
    let postService: PostService
    let posts: PostRepository
    let songSearch: SongSearch
    let bans: BanList
    let config: AppConfig
    let reader: PostReader
    let limiter: RateLimiter

    func createPost(_ input: Operations.CreatePost.Input) async throws -> Operations.CreatePost.Output {
        let caller = try RequestInfo.requireMember()
        guard case .multipartForm(let form) = input.body else {
            throw APIError.badRequest("Send multipart/form-data.")
        }
        try await limiter.check("upload:\(caller.userID)", capacity: config.uploadsPerHour, period: 3600)
        let upload = try UploadFile(directory: config.uploadDirectory, limit: config.mediaMaxBytes)
        defer { upload.discard() }
        let (fields, container) = try await PostForm.read(form, into: upload)
        let post = try await PostForm(places: places, events: events).validated(fields)
        let info = RequestInfo.current
        let record = try await postService.create(
            post, author: caller.userID, file: upload.path, container: container,
            clientGone: { info?.clientGone() ?? false })
        return .created(.init(body: .json(try await reader.assemble([record], viewer: caller.userID)[0])))
    }

    func getPost(_ input: Operations.GetPost.Input) async throws -> Operations.GetPost.Output {
        let viewer = RequestInfo.current?.principal
        let post = try await reader.visible(input.path.postId, viewer: viewer)
        return .ok(.init(body: .json(try await reader.assemble([post], viewer: viewer?.userID)[0])))
    }

    func deletePost(_ input: Operations.DeletePost.Input) async throws -> Operations.DeletePost.Output {
        let caller = try RequestInfo.requireMember()
        let post = try await reader.visible(input.path.postId, viewer: caller)
        guard post.authorID == caller.userID || caller.role >= .moderator else {
            throw APIError.forbidden("Only its author or a moderator can delete a post.", code: .notAuthor)
        }
        try await postService.delete(post)
        return .noContent(.init())
    }

    func votePost(_ input: Operations.VotePost.Input) async throws -> Operations.VotePost.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        guard (-1...1).contains(body.value) else {
            throw APIError.validation([.init(field: "value", code: "out_of_range", message: "Vote -1, 0 or 1.")])
        }
        let state = try await vote(
            .init(postID: input.path.postId, userID: caller.userID, action: .vote(body.value)))
        return .ok(.init(body: .json(state)))
    }

    func flagPost(_ input: Operations.FlagPost.Input) async throws -> Operations.FlagPost.Output {
        let caller = try RequestInfo.requireMember()
        let state = try await vote(.init(postID: input.path.postId, userID: caller.userID, action: .flag(true)))
        return .ok(.init(body: .json(state)))
    }

    func unflagPost(_ input: Operations.UnflagPost.Input) async throws -> Operations.UnflagPost.Output {
        let caller = try RequestInfo.requireMember()
        let state = try await vote(.init(postID: input.path.postId, userID: caller.userID, action: .flag(false)))
        return .ok(.init(body: .json(state)))
    }

    func listComments(_ input: Operations.ListComments.Input) async throws -> Operations.ListComments.Output {
        let viewer = RequestInfo.current?.principal
        let post = try await reader.visible(input.path.postId, viewer: viewer)
        let limit = try Paging.limit(input.query.limit)
        let rows = try await posts.comments(
            postID: post.id, viewer: viewer?.userID, after: try Paging.keyset(input.query.cursor), limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let next = rows.count > limit ? page.last.map { Paging.keysetCursor($0.createdAt, $0.id) } : nil
        return .ok(.init(body: .json(.init(items: page.map(Components.Schemas.Comment.init), nextCursor: next))))
    }

    func createComment(_ input: Operations.CreateComment.Input) async throws -> Operations.CreateComment.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        let text = try PostRules.comment(body.text).get()
        let post = try await reader.visible(input.path.postId, viewer: caller)
        let comment = CommentRecord(
            id: Identifier.make(), postID: post.id, authorID: caller.userID, text: text, createdAt: Clock.millis())
        let notice = post.authorID.flatMap { author in
            author == caller.userID
                ? nil
                : NotificationDraft(
                    userID: author, kind: .postComment, text: "New comment on your post: \(text.prefix(80))",
                    actorID: caller.userID, postID: post.id)
        }
        await notifier.publish(try await posts.addComment(comment, notice: notice))
        guard let stored = try await posts.comment(id: comment.id) else {
            throw APIError.notFound("No such post.")
        }
        return .created(.init(body: .json(.init(stored))))
    }

    func deleteComment(_ input: Operations.DeleteComment.Input) async throws -> Operations.DeleteComment.Output {
        let caller = try RequestInfo.requireMember()
        guard let comment = try await posts.comment(id: input.path.commentId),
            comment.postID == input.path.postId, let post = try await posts.find(id: comment.postID)
        else { throw APIError.notFound("No such comment.") }
        guard comment.authorID == caller.userID || post.authorID == caller.userID || caller.role >= .moderator
        else {
            throw APIError.forbidden(
                "Only its author, the post's author or a moderator can delete a comment.", code: .notAuthor)
        }
        _ = try await posts.deleteComment(id: comment.id, postID: post.id)
        return .noContent(.init())
    }

    func bookmarkPost(_ input: Operations.BookmarkPost.Input) async throws -> Operations.BookmarkPost.Output {
        let caller = try RequestInfo.requireMember()
        let post = try await reader.visible(input.path.postId, viewer: caller)
        try await posts.bookmark(user: caller.userID, post: post.id, now: Clock.millis())
        return .noContent(.init())
    }

    func unbookmarkPost(_ input: Operations.UnbookmarkPost.Input) async throws -> Operations.UnbookmarkPost.Output {
        let caller = try RequestInfo.requireMember()
        try await posts.unbookmark(user: caller.userID, post: input.path.postId)
        return .noContent(.init())
    }

    func recordViews(_ input: Operations.RecordViews.Input) async throws -> Operations.RecordViews.Output {
        let body = input.body.json
        guard body.postIds.count <= 100 else {
            throw APIError.validation([.init(field: "postIds", code: "too_many", message: "Send at most 100 ids.")])
        }
        await postService.views.count(Array(Set(body.postIds.filter { TextRules.isClean($0) })))
        return .noContent(.init())
    }

    // MARK: - Helpers

    /// Applies a vote change (grouped with concurrent ones; the group checks posts and blocks for
    /// all its votes at once) and answers its state.
    private func vote(_ change: VoteChange) async throws -> Components.Schemas.VoteState {
        switch try await postService.votes.submit(change) {
        case .applied(let value, let flagged, let up, let down):
            return .init(postId: change.postID, value: value, flagged: flagged, up: up, down: down)
        case .notFound, .blocked:
            throw APIError.notFound("No such post.")
        case .ownPost:
            throw APIError.forbidden("Authors cannot vote on or flag their own posts.", code: .ownPost)
        }
    }

}

extension Components.Schemas.Comment {
    /// A comment; its author's username always shows (the show-name setting is about posts).
    init(_ c: CommentRecord) {
        self.init(
            id: c.id, postId: c.postID,
            author: .init(
                id: c.authorID, username: c.authorUsername, displayName: c.authorDisplayName,
                avatarUrl: ProfilePhotos.published(c.authorAvatar)),
            text: c.text, createdAt: Clock.date(c.createdAt))
    }
}

extension PostsHandlers {
    func searchSongs(_ input: Operations.SearchSongs.Input) async throws -> Operations.SearchSongs.Output {
        let query = try Paging.searchText(input.query.q, hint: "Type part of a title or artist.")
        let (songs, source) = try await songSearch.search(query, limit: try Paging.limit(input.query.limit))
        let items = songs.map { song in
            Components.Schemas.SongResult(
                title: song.title, artist: song.artist, uri: song.uri, url: song.uri.flatMap(PostRules.spotifyURL),
                artworkUrl: song.artworkURL, previewUrl: song.previewURL)
        }
        return .ok(.init(body: .json(.init(items: items, source: source == "spotify" ? .spotify : .tonight))))
    }
}
