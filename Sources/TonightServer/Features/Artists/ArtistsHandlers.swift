import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct ArtistsHandlers: Sendable {
    let catalog: CatalogRepository
    let suggester: ArtistSuggester
    let eventService: EventService

    func suggestArtists(_ input: Operations.SuggestArtists.Input) async throws -> Operations.SuggestArtists.Output {
        let limit = try Paging.limit(input.query.limit)
        guard TextRules.isClean(input.query.q) else {
            throw APIError.validation([.init(field: "q", code: "invalid", message: "No control characters.")])
        }
        guard !SearchText.words(input.query.q).isEmpty else {
            throw APIError.validation([.init(field: "q", code: "invalid", message: "Type a letter or a digit.")])
        }
        let ids = try await suggester.search(input.query.q, limit: limit)
        let byID = try await catalog.artists(ids: ids)
        let found = ids.compactMap { byID[$0] }
        let counts = try await catalog.upcomingCounts(found.map(\.id), from: Clock.millis())
        // Anonymous answers may be kept (see PageCache) until a show they count starts.
        AnswerLifetime.current?.keep(until: counts.values.map { $0.soonest + 1 }.min() ?? Int64.max)
        return .ok(.init(body: .json(.init(items: try await artistItems(found, counts: counts)))))
    }

    func listArtists(_ input: Operations.ListArtists.Input) async throws -> Operations.ListArtists.Output {
        let limit = try Paging.limit(input.query.limit)
        let offset = try Paging.offset(input.query.cursor)
        let ids = CategoryTree.descendants(of: input.query.category, in: try await catalog.categories())
        let found = try await catalog.artists(inCategories: ids, offset: offset, limit: limit + 1)
        let items = try await artistItems(Array(found.prefix(limit)))
        let next = found.count > limit ? Paging.offsetCursor(offset + limit) : nil
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func getArtist(_ input: Operations.GetArtist.Input) async throws -> Operations.GetArtist.Output {
        guard let artist = try await catalog.artist(id: input.path.artistId) else {
            throw APIError.notFound("No such artist.")
        }
        let caller = RequestInfo.current?.principal?.userID
        let now = Date()
        var query = EventQuery(from: Clock.millis(now) - EventWindows.slack)
        query.artistIDs = [artist.id]
        let (records, _) = try await eventService.keysetPage(query, limit: 20) { EventWindows.isUpcoming($0, now: now) }
        let upcoming = try await eventService.assembler.assemble(records, callerID: caller)
        let similar = try await catalog.similar(to: artist.id, limit: 10)
        let similarArtists = try await catalog.artists(ids: similar.map(\.artistID))
        let detail = Components.Schemas.ArtistDetail(
            artist: try await artistItems([artist])[0], upcomingEvents: upcoming,
            similar: similar.compactMap { item in
                similarArtists[item.artistID].map {
                    .init(
                        artist: .init(
                            id: $0.id, name: $0.name,
                            imageURL: RemoteImages.link($0.imageURL, kind: .artists, id: $0.id)),
                        score: item.score)
                }
            })
        return .ok(.init(body: .json(detail)))
    }

    func listFavoriteArtists(_ input: Operations.ListFavoriteArtists.Input) async throws
        -> Operations.ListFavoriteArtists.Output
    {
        let caller = try RequestInfo.requireCaller()
        let limit = try Paging.limit(input.query.limit)
        let offset = try Paging.offset(input.query.cursor)
        let found = try await catalog.favorites(userID: caller.userID, offset: offset, limit: limit + 1)
        let items = try await artistItems(Array(found.prefix(limit)))
        let next = found.count > limit ? Paging.offsetCursor(offset + limit) : nil
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func addFavoriteArtist(_ input: Operations.AddFavoriteArtist.Input) async throws
        -> Operations.AddFavoriteArtist.Output
    {
        let caller = try RequestInfo.requireMember()
        guard try await catalog.artist(id: input.path.artistId) != nil else {
            throw APIError.notFound("No such artist.")
        }
        try await catalog.addFavorite(userID: caller.userID, artistID: input.path.artistId, now: Clock.millis())
        return .noContent(.init())
    }

    func removeFavoriteArtist(_ input: Operations.RemoveFavoriteArtist.Input) async throws
        -> Operations.RemoveFavoriteArtist.Output
    {
        let caller = try RequestInfo.requireMember()
        try await catalog.removeFavorite(userID: caller.userID, artistID: input.path.artistId)
        return .noContent(.init())
    }

    func favoritesFeed(_ input: Operations.FavoritesFeed.Input) async throws -> Operations.FavoritesFeed.Output {
        let caller = try RequestInfo.requireCaller()
        let limit = try Paging.limit(input.query.limit)
        let now = Date()
        var query = EventQuery(from: Clock.millis(now) - EventWindows.slack)
        query.after = try Paging.keyset(input.query.cursor).map { (startAt: $0.0, id: $0.1) }
        let favorites = try await catalog.favorites(userID: caller.userID, offset: 0, limit: 1000)
        guard !favorites.isEmpty else { return .ok(.init(body: .json(.init(items: [])))) }
        query.artistIDs = favorites.map(\.id)
        let (records, next) = try await eventService.keysetPage(query, limit: limit) {
            EventWindows.isUpcoming($0, now: now)
        }
        let items = try await eventService.assembler.assemble(records, callerID: caller.userID)
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    /// API artists with their upcoming counts and, for a signed-in caller, whether each is a favourite.
    func artistItems(_ artists: [ArtistRecord], counts known: [String: UpcomingShows]? = nil) async throws
        -> [Components.Schemas.Artist]
    {
        let ids = artists.map(\.id)
        let counts: [String: UpcomingShows]
        if let known { counts = known } else { counts = try await catalog.upcomingCounts(ids, from: Clock.millis()) }
        let categories = Dictionary(
            try await catalog.categories().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let caller = RequestInfo.current?.principal?.userID
        var favorites: Set<String>?
        if let caller { favorites = try await catalog.favoriteIDs(userID: caller, among: ids) }
        return artists.map { artist in
            .init(
                id: artist.id, name: artist.name,
                category: artist.categoryID.flatMap { categories[$0] }.map { .init(id: $0.id, name: $0.name) },
                imageURL: RemoteImages.link(artist.imageURL, kind: .artists, id: artist.id), url: artist.url,
                favoritesCount: Int(artist.favoritesCount),
                upcomingCount: counts[artist.id]?.count ?? 0, isFavorite: favorites.map { $0.contains(artist.id) })
        }
    }
}
