import Foundation
import TonightAPI
import TonightCore

extension APIHandlers {
    func placeFeed(_ input: Operations.PlaceFeed.Input) async throws -> Operations.PlaceFeed.Output {
        try await answer {
            guard let place = try await places.find(id: input.path.placeId) else {
                throw APIError.notFound("No such place.")
            }
            let since = Clock.millis() - Int64(config.placeFeedWindowHours) * 3_600_000
            var page = try await feedPage(
                .place(input.path.placeId, since: since), cursor: input.query.cursor, limit: input.query.limit)
            if let city = place.cityKey {
                page.ads = try await ads(kind: .place, name: place.name, cityKey: city, page: page.page)
            }
            return .ok(.init(body: .json(page)))
        }
    }

    func cityFeed(_ input: Operations.CityFeed.Input) async throws -> Operations.CityFeed.Output {
        try await answer {
            let pregame = input.query.scope == .pregame
            var page = try await feedPage(
                .city(input.path.cityKey, pregame: pregame), cursor: input.query.cursor, limit: input.query.limit)
            let cityName = AreaKey.cityName(input.path.cityKey) ?? ""
            page.ads = try await ads(
                kind: pregame ? .pregame : .all, name: cityName, cityKey: input.path.cityKey, page: page.page)
            return .ok(.init(body: .json(page)))
        }
    }

    func tagFeed(_ input: Operations.TagFeed.Input) async throws -> Operations.TagFeed.Output {
        try await answer {
            guard let tag = PostRules.normalizedTag(input.path.tag) else {
                throw APIError.validation([
                    .init(field: "tag", code: "invalid", message: "Tags use letters, digits and _.")
                ])
            }
            let page = try await feedPage(.tag(tag), cursor: input.query.cursor, limit: input.query.limit)
            return .ok(.init(body: .json(page)))
        }
    }

    func followingFeed(_ input: Operations.FollowingFeed.Input) async throws -> Operations.FollowingFeed.Output {
        try await answer {
            let caller = try RequestInfo.requireMember()
            let page = try await feedPage(
                .following(caller.userID), cursor: input.query.cursor, limit: input.query.limit)
            return .ok(.init(body: .json(page)))
        }
    }

    func listBookmarks(_ input: Operations.ListBookmarks.Input) async throws -> Operations.ListBookmarks.Output {
        try await answer {
            let caller = try RequestInfo.requireMember()
            let page = try await feedPage(
                .bookmarks(caller.userID), cursor: input.query.cursor, limit: input.query.limit)
            return .ok(.init(body: .json(page)))
        }
    }

    func listUserPosts(_ input: Operations.ListUserPosts.Input) async throws -> Operations.ListUserPosts.Output {
        try await answer {
            let user = try await profileUser(input.path.username)
            let page = try await feedPage(.author(user.id), cursor: input.query.cursor, limit: input.query.limit)
            return .ok(.init(body: .json(page)))
        }
    }

    func trendingFeed(_ input: Operations.TrendingFeed.Input) async throws -> Operations.TrendingFeed.Output {
        try await answer {
            let viewer = RequestInfo.current?.principal?.userID
            let limit = try Paging.limit(input.query.limit)
            let offset = try Paging.offset(input.query.cursor)
            let score = config.trending
            let now = Clock.millis()
            let candidates = try await postService.posts.recent(
                city: input.query.city, since: now - Int64(score.windowHours) * 3_600_000, viewer: viewer, limit: 2000)
            let ranked = candidates.map { post in
                (
                    post,
                    score.score(
                        up: post.upCount, down: post.downCount, comments: post.commentCount, views: post.viewCount,
                        ageHours: Double(now - post.createdAt) / 3_600_000)
                )
            }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0.id > $1.0.id }.map(\.0)
            let (items, next) = Paging.page(ranked, offset: offset, limit: limit)
            return .ok(
                .init(
                    body: .json(
                        .init(
                            items: try await assemblePosts(items, viewer: viewer), page: offset / limit + 1,
                            nextCursor: next))))
        }
    }

    func followUser(_ input: Operations.FollowUser.Input) async throws -> Operations.FollowUser.Output {
        try await answer {
            let caller = try RequestInfo.requireMember()
            let user = try await profileUser(input.path.username)
            guard user.id != caller.userID else {
                throw APIError.validation([
                    .init(field: "username", code: "self", message: "You cannot follow yourself.")
                ])
            }
            try await postService.posts.follow(caller.userID, user.id, now: Clock.millis())
            return .ok(.init(body: .json(try await followState(user.id, viewer: caller.userID))))
        }
    }

    func unfollowUser(_ input: Operations.UnfollowUser.Input) async throws -> Operations.UnfollowUser.Output {
        try await answer {
            let caller = try RequestInfo.requireMember()
            let user = try await profileUser(input.path.username)
            try await postService.posts.unfollow(caller.userID, user.id)
            return .ok(.init(body: .json(try await followState(user.id, viewer: caller.userID))))
        }
    }

    // MARK: - Helpers

    private func followState(_ user: String, viewer: String) async throws -> Components.Schemas.FollowState {
        let (count, following) = try await postService.posts.followers(of: user, viewer: viewer)
        return .init(userId: user, following: following, followers: count)
    }

    /// The account behind a username the caller may see: 404 for a name that breaks the username
    /// rules (not looked up), an unknown one, or a user blocked either way.
    func profileUser(_ username: String) async throws -> UserRecord {
        let valid = (try? AccountRules.username(username).get()) != nil
        guard valid, let user = try await users.find(usernameKey: AccountRules.usernameKey(username)),
            user.username != nil
        else { throw APIError.notFound("No user is called \(username).") }
        if let caller = RequestInfo.current?.principal, try await social.isBlocked(caller.userID, user.id) {
            throw APIError.notFound("No user is called \(username).")
        }
        return user
    }

    /// One page of a time-ordered feed. The cursor carries the page number and the keyset position.
    func feedPage(_ source: FeedSource, cursor: String?, limit: Int?) async throws -> Components.Schemas.FeedPage {
        let viewer = RequestInfo.current?.principal?.userID
        let limit = try Paging.limit(limit)
        let (page, position) = try Paging.feedPosition(cursor)
        let rows = try await postService.posts.feed(source, viewer: viewer, before: position, limit: limit + 1)
        let shown = Array(rows.prefix(limit))
        let next =
            rows.count > limit ? shown.last.map { Paging.feedCursor(page: page + 1, $0.position, $0.post.id) } : nil
        return .init(items: try await assemblePosts(shown.map(\.post), viewer: viewer), page: page, nextCursor: next)
    }

    /// Posts as the API shows them to `viewer` (with their vote, flag and bookmark).
    func assemblePosts(_ posts: [PostRecord], viewer: String?) async throws -> [Components.Schemas.Post] {
        var state: [String: ViewerState] = [:]
        if let viewer { state = try await postService.posts.viewerState(viewer, posts: posts.map(\.id)) }
        return posts.map {
            Components.Schemas.Post($0, urls: postService.urls, viewer: state[$0.id], signedIn: viewer != nil)
        }
    }
}

extension Components.Schemas.Post {
    /// A post with its media URLs; the author's names only when they show them on posts.
    init(_ p: PostRecord, urls: MediaURLs, viewer: ViewerState?, signedIn: Bool) {
        let author = p.authorID.map { id in
            p.authorShowsName
                ? Components.Schemas.PostAuthor(
                    id: id, username: p.authorUsername, displayName: p.authorDisplayName, avatarUrl: p.authorAvatar)
                : Components.Schemas.PostAuthor(id: id)
        }
        let song = p.songTitle.map {
            Components.Schemas.Song(
                title: $0, artist: p.songArtist, uri: p.songURI, url: p.songURI.flatMap(PostRules.spotifyURL))
        }
        let servedKey = p.videoKey ?? p.originalKey
        let media = Components.Schemas.PostMedia(
            kind: p.mediaKind == "video" ? .video : .image, url: urls.url(for: servedKey),
            contentType: p.videoType ?? p.originalType, posterUrl: p.posterKey.map { urls.url(for: $0) },
            width: p.width, height: p.height, durationSeconds: p.duration)
        let tempo = p.bpm.map { bpm in
            Components.Schemas.Tempo(
                bpm: bpm, beats: p.beats.flatMap { try? JSONDecoder().decode([Double].self, from: Data($0.utf8)) } ?? []
            )
        }
        self.init(
            id: p.id, status: .init(rawValue: p.status) ?? .processing, failureReason: p.failure, author: author,
            source: p.sourceName.map { .init(name: $0) }, placeId: p.placeID, placeName: p.placeName,
            cityKey: p.cityKey, eventId: p.eventID, caption: p.caption, song: song, tags: p.tags, media: media,
            tempo: tempo, up: p.upCount, down: p.downCount, comments: p.commentCount, views: p.viewCount,
            myVote: viewer?.vote, flaggedByMe: signedIn ? (viewer?.flagged ?? false) : nil,
            bookmarked: signedIn ? (viewer?.bookmarked ?? false) : nil,
            hidden: p.moderation == "hidden" ? true : nil, retention: .init(rawValue: p.retention) ?? .media,
            createdAt: Clock.date(p.createdAt))
    }
}
