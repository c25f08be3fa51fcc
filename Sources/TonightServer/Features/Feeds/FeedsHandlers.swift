import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct FeedsHandlers: Sendable {
    let config: AppConfig
    let places: PlaceRepository
    let posts: PostRepository
    let social: SocialRepository
    let users: UserRepository
    let people: People
    let reader: PostReader
    let adPlacer: AdPlacer

    func placeFeed(_ input: Operations.PlaceFeed.Input) async throws -> Operations.PlaceFeed.Output {
        guard let place = try await places.find(id: input.path.placeId) else {
            throw APIError.notFound("No such place.")
        }
        let since = Clock.millis() - Int64(config.placeFeedWindowHours) * 3_600_000
        var page = try await reader.feedPage(
            .place(input.path.placeId, since: since), cursor: input.query.cursor, limit: input.query.limit)
        if let city = place.cityKey {
            page.ads = try await adPlacer.ads(kind: .place, name: place.name, cityKey: city, page: page.page)
        }
        return .ok(.init(body: .json(page)))
    }

    func cityFeed(_ input: Operations.CityFeed.Input) async throws -> Operations.CityFeed.Output {
        let pregame = input.query.scope == .pregame
        var page = try await reader.feedPage(
            .city(input.path.cityKey, pregame: pregame), cursor: input.query.cursor, limit: input.query.limit)
        let cityName = AreaKey.cityName(input.path.cityKey) ?? ""
        page.ads = try await adPlacer.ads(
            kind: pregame ? .pregame : .all, name: cityName, cityKey: input.path.cityKey, page: page.page)
        return .ok(.init(body: .json(page)))
    }

    func tagFeed(_ input: Operations.TagFeed.Input) async throws -> Operations.TagFeed.Output {
        guard let tag = PostRules.normalizedTag(input.path.tag) else {
            throw APIError.validation([
                .init(field: "tag", code: "invalid", message: "Tags use letters, digits and _.")
            ])
        }
        let page = try await reader.feedPage(.tag(tag), cursor: input.query.cursor, limit: input.query.limit)
        return .ok(.init(body: .json(page)))
    }

    func followingFeed(_ input: Operations.FollowingFeed.Input) async throws -> Operations.FollowingFeed.Output {
        let caller = try RequestInfo.requireMember()
        let page = try await reader.feedPage(
            .following(caller.userID), cursor: input.query.cursor, limit: input.query.limit)
        return .ok(.init(body: .json(page)))
    }

    func listBookmarks(_ input: Operations.ListBookmarks.Input) async throws -> Operations.ListBookmarks.Output {
        let caller = try RequestInfo.requireMember()
        let page = try await reader.feedPage(
            .bookmarks(caller.userID), cursor: input.query.cursor, limit: input.query.limit)
        return .ok(.init(body: .json(page)))
    }

    func listUserPosts(_ input: Operations.ListUserPosts.Input) async throws -> Operations.ListUserPosts.Output {
        let user = try await people.profile(input.path.username)
        let page = try await reader.feedPage(.author(user.id), cursor: input.query.cursor, limit: input.query.limit)
        return .ok(.init(body: .json(page)))
    }

    func trendingFeed(_ input: Operations.TrendingFeed.Input) async throws -> Operations.TrendingFeed.Output {
        let viewer = RequestInfo.current?.principal?.userID
        let limit = try Paging.limit(input.query.limit)
        let offset = try Paging.offset(input.query.cursor)
        let score = config.trending
        let now = Clock.millis()
        let candidates = try await posts.recent(
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
                        items: try await reader.assemble(items, viewer: viewer), page: offset / limit + 1,
                        nextCursor: next))))
    }

    func followUser(_ input: Operations.FollowUser.Input) async throws -> Operations.FollowUser.Output {
        let caller = try RequestInfo.requireMember()
        let user = try await people.profile(input.path.username)
        guard user.id != caller.userID else {
            throw APIError.validation([
                .init(field: "username", code: "self", message: "You cannot follow yourself.")
            ])
        }
        try await posts.follow(caller.userID, user.id, now: Clock.millis())
        return .ok(.init(body: .json(try await followState(user.id, viewer: caller.userID))))
    }

    func unfollowUser(_ input: Operations.UnfollowUser.Input) async throws -> Operations.UnfollowUser.Output {
        let caller = try RequestInfo.requireMember()
        let user = try await people.profile(input.path.username)
        try await posts.unfollow(caller.userID, user.id)
        return .ok(.init(body: .json(try await followState(user.id, viewer: caller.userID))))
    }

    // MARK: - Helpers

    private func followState(_ user: String, viewer: String) async throws -> Components.Schemas.FollowState {
        let (count, following) = try await posts.followers(of: user, viewer: viewer)
        return .init(userId: user, following: following, followers: count)
    }

}

extension Components.Schemas.Post {
    /// A post with its media URLs; the author's names only when they show them on posts.
    init(_ p: PostRecord, urls: MediaURLs, viewer: ViewerState?, signedIn: Bool) {
        let author = p.authorID.map { id in
            p.authorShowsName
                ? Components.Schemas.PostAuthor(
                    id: id, username: p.authorUsername, displayName: p.authorDisplayName,
                    avatarUrl: ProfilePhotos.published(p.authorAvatar))
                : Components.Schemas.PostAuthor(id: id)
        }
        let song = p.songTitle.map {
            Components.Schemas.Song(
                title: $0, artist: p.songArtist, uri: p.songURI, url: p.songURI.flatMap(PostRules.spotifyURL))
        }
        let servedKey = p.videoKey ?? p.originalKey
        // Hidden from the public: only its author and moderators get the post, with review links.
        let link = p.moderation == .visible ? { urls.url(for: $0) } : { urls.reviewURL(for: $0) }
        let media = Components.Schemas.PostMedia(
            kind: p.mediaKind == .video ? .video : .image, url: link(servedKey),
            contentType: p.videoType ?? p.originalType, posterUrl: p.posterKey.map(link),
            width: p.width, height: p.height, durationSeconds: p.duration)
        let tempo = p.bpm.map { bpm in
            Components.Schemas.Tempo(
                bpm: bpm, beats: p.beats.flatMap { try? JSONDecoder().decode([Double].self, from: Data($0.utf8)) } ?? []
            )
        }
        self.init(
            id: p.id, status: .init(rawValue: p.status.rawValue) ?? .processing, failureReason: p.failure,
            author: author,
            source: p.sourceName.map { .init(name: $0) }, placeId: p.placeID, placeName: p.placeName,
            cityKey: p.cityKey, eventId: p.eventID, caption: p.caption, song: song, tags: p.tags, media: media,
            tempo: tempo, up: p.upCount, down: p.downCount, comments: p.commentCount, views: p.viewCount,
            myVote: viewer?.vote, flaggedByMe: signedIn ? (viewer?.flagged ?? false) : nil,
            bookmarked: signedIn ? (viewer?.bookmarked ?? false) : nil,
            hidden: p.moderation == .hidden ? true : nil, retention: .init(rawValue: p.retention) ?? .media,
            createdAt: Clock.date(p.createdAt))
    }
}
