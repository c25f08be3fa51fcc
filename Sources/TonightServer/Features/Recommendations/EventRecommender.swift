import Foundation
import TonightAPI
import TonightCore

/// The explore cards of Tickets Tonight: events by artists similar to the user's favourites, or
/// the most attended events nearby tonight when there is nothing to go on (cold start).
struct EventRecommender: Sendable {
    let events: EventRepository
    let places: PlaceRepository
    let catalog: CatalogRepository

    /// How far ahead the cards look.
    static let horizon: Int64 = 30 * 86_400_000
    /// At most this many similar artists (the best) lead to events.
    static let artistCap = 1000

    struct Card: Sendable {
        var event: EventRecord
        var score: Double
        var similarTo: ArtistRecord?
    }

    /// Cards for `userID` around `center`, best first; `coldStart` when they are popular events.
    /// Events in `favoriteCategories` (or below them) rank higher.
    func cards(
        userID: String, center: GeoPoint, radius: Double, budget: Double?, favoriteCategories: [String] = [],
        limit: Int, now: Date, tonightOnly: Bool = false
    ) async throws -> (cards: [Card], coldStart: Bool) {
        var liked = Set<String>()
        if !favoriteCategories.isEmpty {
            let all = try await catalog.categories()
            liked = Set(favoriteCategories.flatMap { CategoryTree.descendants(of: $0, in: all) })
        }
        let inLiked = { (event: EventRecord) in event.categoryID.map(liked.contains) ?? false }
        let favorites = try await catalog.favorites(userID: userID, offset: 0, limit: 1000).map(\.id)
        let similar = ArtistAffinity.similarArtists(
            favorites: Set(favorites), edges: try await catalog.affinity(from: favorites))
        var query = EventQuery(from: Clock.millis(now))
        query.near = center
        query.radius = radius
        query.maxPrice = budget
        query.newTo = userID
        query.limit = 2000
        if tonightOnly {
            query.within(.tonight, now: now)
        } else {
            query.to = Clock.millis(now) + Self.horizon
        }
        let keep = { (record: EventRecord, place: PlaceRecord?) -> Bool in
            guard !record.status.isCalledOff, record.kind != .session,
                let place, place.location.distance(to: center) <= radius
            else { return false }
            return tonightOnly
                ? EventWindows.contains(record, when: .tonight, now: now) : EventWindows.isUpcoming(record, now: now)
        }
        if !similar.isEmpty {
            query.artistIDs = Array(
                similar.sorted { ($1.value.score, $0.key) < ($0.value.score, $1.key) }.prefix(Self.artistCap)
                    .map(\.key))
            let found = try await filtered(query, keep: keep)
            let performers = try await events.performers(of: found.map(\.id))
            let ranked = ArtistAffinity.rank(
                found.map { ($0.id, $0.startAt, performers[$0.id] ?? []) }, similar: similar,
                favoriteCategoryEvents: Set(found.filter(inLiked).map(\.id))
            ).prefix(limit)
            let byID = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let artists = try await catalog.artists(ids: ranked.map(\.similarTo))
            return (
                ranked.compactMap { entry in
                    byID[entry.id].map { Card(event: $0, score: entry.score, similarTo: artists[entry.similarTo]) }
                }, false
            )
        }
        // Cold start: the most attended events nearby tonight, ranked by the database. Its window
        // and circle are broad (every time zone, the circle's cells), so the exact checks may
        // leave fewer than a page: then a longer ranking is read, until it runs out.
        query.within(.tonight, now: now)
        query.kinds = Set(EventKind.allCases).subtracting([.session])
        query.notCalledOff = true
        query.limit = max(2 * limit, 40)
        while true {
            let ids = try await events.popular(query, favoring: liked)
            let rows = try await events.find(ids: ids)
            let placesByID = try await places.find(ids: rows.values.map(\.placeID))
            let tonight = ids.compactMap { rows[$0] }.filter { record in
                keep(record, placesByID[record.placeID]) && EventWindows.contains(record, when: .tonight, now: now)
            }
            if tonight.count >= limit || ids.count < query.limit {
                return (tonight.prefix(limit).map { Card(event: $0, score: 0, similarTo: nil) }, true)
            }
            query.limit *= 4
        }
    }

    private func filtered(_ query: EventQuery, keep: (EventRecord, PlaceRecord?) -> Bool) async throws
        -> [EventRecord]
    {
        let rows = try await events.search(query)
        let placesByID = try await places.find(ids: rows.map(\.placeID))
        return rows.filter { keep($0, placesByID[$0.placeID]) }
    }
}
