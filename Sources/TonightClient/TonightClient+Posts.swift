import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Which feed to read.
public enum Feed: Sendable, Equatable {
    /// A venue's recent clips.
    case place(String)
    /// A city's posts (`pregame`: those with no venue).
    case city(String, pregame: Bool = false)
    case tag(String)
    case following
    case trending(city: String? = nil)
    case user(String)
    case bookmarks
}

/// What a new post says besides its file.
public struct PostDraft: Sendable {
    public var placeID: String?
    public var cityKey: String?
    public var eventID: String?
    public var caption: String?
    public var tags: [String] = []
    public var songTitle: String?
    public var songArtist: String?
    public var songURI: String?

    /// A post at a venue, or (without `placeID`) in a city's pregame feed.
    public init(placeID: String? = nil, cityKey: String? = nil, caption: String? = nil) {
        self.placeID = placeID
        self.cityKey = cityKey
        self.caption = caption
    }
}

extension TonightClient {
    /// Uploads a clip or still from a file (streamed, not loaded whole); the post starts
    /// `processing` — read it again (or watch the feed) until it is `ready`.
    public func createPost(file: URL, draft: PostDraft) async throws -> Post {
        var parts: [Operations.CreatePost.Input.Body.MultipartFormPayload] = []
        func text(_ value: String?, _ make: (HTTPBody) -> Operations.CreatePost.Input.Body.MultipartFormPayload) {
            if let value, !value.isEmpty { parts.append(make(HTTPBody(value))) }
        }
        text(draft.placeID) { .placeId(.init(payload: .init(body: $0))) }
        text(draft.cityKey) { .city(.init(payload: .init(body: $0))) }
        text(draft.eventID) { .eventId(.init(payload: .init(body: $0))) }
        text(draft.caption) { .caption(.init(payload: .init(body: $0))) }
        text(draft.tags.joined(separator: ",")) { .tags(.init(payload: .init(body: $0))) }
        text(draft.songTitle) { .songTitle(.init(payload: .init(body: $0))) }
        text(draft.songArtist) { .songArtist(.init(payload: .init(body: $0))) }
        text(draft.songURI) { .songUri(.init(payload: .init(body: $0))) }
        let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value
        let data = try Data(contentsOf: file, options: .mappedIfSafe)
        parts.append(
            .media(
                .init(
                    payload: .init(body: HTTPBody(data, length: size.map { .known($0) } ?? .unknown)),
                    filename: file.lastPathComponent)))
        return try await call {
            try await api.createPost(body: .multipartForm(.init(parts))).created.body.json
        }
    }

    /// One post.
    public func post(_ id: String) async throws -> Post {
        try await call { try await api.getPost(path: .init(postId: id)).ok.body.json }
    }

    /// Deletes one's own post (moderators: any).
    public func deletePost(_ id: String) async throws {
        try await call { _ = try await api.deletePost(path: .init(postId: id)).noContent }
    }

    /// A page of a feed; pass the previous page's `nextCursor` for the next.
    public func feed(_ feed: Feed, cursor: String? = nil, limit: Int? = nil) async throws -> FeedPage {
        try await call {
            switch feed {
            case .place(let id):
                try await api.placeFeed(path: .init(placeId: id), query: .init(cursor: cursor, limit: limit)).ok.body
                    .json
            case .city(let key, let pregame):
                try await api.cityFeed(
                    path: .init(cityKey: key),
                    query: .init(scope: pregame ? .pregame : .all, cursor: cursor, limit: limit)
                ).ok.body.json
            case .tag(let tag):
                try await api.tagFeed(path: .init(tag: tag), query: .init(cursor: cursor, limit: limit)).ok.body.json
            case .following:
                try await api.followingFeed(query: .init(cursor: cursor, limit: limit)).ok.body.json
            case .trending(let city):
                try await api.trendingFeed(query: .init(city: city, cursor: cursor, limit: limit)).ok.body.json
            case .user(let username):
                try await api.listUserPosts(path: .init(username: username), query: .init(cursor: cursor, limit: limit))
                    .ok.body.json
            case .bookmarks:
                try await api.listBookmarks(query: .init(cursor: cursor, limit: limit)).ok.body.json
            }
        }
    }

    /// Votes +1 (like), 0 (meh) or −1 on a post.
    @discardableResult
    public func vote(_ value: Int, on postID: String) async throws -> VoteState {
        try await call {
            try await api.votePost(path: .init(postId: postID), body: .json(.init(value: value))).ok.body.json
        }
    }

    /// Reports a post as inappropriate (`false`: takes the report back).
    @discardableResult
    public func flag(_ postID: String, _ flagged: Bool = true) async throws -> VoteState {
        try await call {
            flagged
                ? try await api.flagPost(path: .init(postId: postID)).ok.body.json
                : try await api.unflagPost(path: .init(postId: postID)).ok.body.json
        }
    }

    /// Comments on a post, oldest first.
    public func comments(on postID: String, cursor: String? = nil) async throws -> Page<Comment> {
        try await call {
            let page = try await api.listComments(path: .init(postId: postID), query: .init(cursor: cursor)).ok.body
                .json
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Adds a comment.
    @discardableResult
    public func comment(on postID: String, _ text: String) async throws -> Comment {
        try await call {
            try await api.createComment(path: .init(postId: postID), body: .json(.init(text: text))).created.body.json
        }
    }

    /// Bookmarks a post (`false`: removes the bookmark).
    public func bookmark(_ postID: String, _ on: Bool = true) async throws {
        try await call {
            if on {
                _ = try await api.bookmarkPost(path: .init(postId: postID)).noContent
            } else {
                _ = try await api.unbookmarkPost(path: .init(postId: postID)).noContent
            }
        }
    }

    /// Follows a user (`false`: unfollows).
    @discardableResult
    public func follow(_ username: String, _ on: Bool = true) async throws -> FollowState {
        try await call {
            on
                ? try await api.followUser(path: .init(username: username)).ok.body.json
                : try await api.unfollowUser(path: .init(username: username)).ok.body.json
        }
    }

    /// Counts views of posts the app showed (cheap; batch them).
    public func recordViews(_ postIDs: [String]) async throws {
        try await call { _ = try await api.recordViews(body: .json(.init(postIds: postIDs))).noContent }
    }
}

extension TonightClient {
    /// Songs for a post (Spotify when the server has credentials, else songs used on Tonight).
    public func searchSongs(_ query: String, limit: Int? = nil) async throws -> [SongResult] {
        try await call { try await api.searchSongs(query: .init(q: query, limit: limit)).ok.body.json.items }
    }

    /// People whose username or display name starts with `query`.
    public func searchUsers(_ query: String, limit: Int? = nil) async throws -> [PublicProfile] {
        try await call { try await api.searchUsers(query: .init(q: query, limit: limit)).ok.body.json.items }
    }

    /// A city's venues for the hub: promoted first, then the liveliest; only `group`'s when given
    /// (a nightlife app asks for `.nightlife`).
    public func cityHub(
        _ cityKey: String, near: (lat: Double, lon: Double)? = nil, group: PlaceGroup? = nil, cursor: String? = nil
    )
        async throws -> Page<HubPlace>
    {
        try await call {
            let page = try await api.cityHub(
                path: .init(cityKey: cityKey),
                query: .init(near: near.map { "\($0.lat),\($0.lon)" }, group: group, cursor: cursor)
            ).ok.body.json
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }
}

extension TonightClient {
    /// Reports usage events (up to 100 at a time); returns how many were stored.
    @discardableResult
    public func recordAnalytics(_ events: [AnalyticsEvent]) async throws -> Int {
        try await call { try await api.recordAnalytics(body: .json(.init(events: events))).accepted.body.json.accepted }
    }

    /// Sends feedback about the app.
    public func sendFeedback(_ text: String, email: String? = nil, appVersion: String? = nil) async throws {
        try await call {
            _ = try await api.sendFeedback(body: .json(.init(text: text, email: email, appVersion: appVersion))).created
        }
    }
}
