import Foundation
import SQLKit
import TonightCore

/// An artist's upcoming shows: how many, and when the soonest starts (when the count next drops).
struct UpcomingShows: Sendable, Equatable {
    var count: Int
    var soonest: Int64
}

/// A row of `categories`.
struct CategoryRecord: Sendable, Equatable {
    var id: String
    var name: String
    var parentID: String?
}

/// A row of `artists`.
struct ArtistRecord: Sendable, Equatable {
    var id: String
    var name: String
    var categoryID: String?
    var imageURL: String?
    var url: String?
    /// Performances known to Tonight (set by imports): the popularity signal for search.
    var popularity: Int64 = 0
    var favoritesCount: Int64 = 0
    var source: String?
    var sourceID: String?
    var createdAt: Int64
    var updatedAt: Int64
}

/// Storage of categories, artists, affinity and favourite artists.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct CatalogRepository: Sendable {
    let db: any SQLDatabase
    let database: Database
    let cache: CategoryCache

    init(db: any SQLDatabase, database: Database, cache: CategoryCache = CategoryCache()) {
        self.db = db
        self.database = database
        self.cache = cache
    }

    static let columns =
        "a.id, a.name, a.category_id, a.image_url, a.url, a.popularity, a.favorites_count, a.source, a.source_id, a.created_at, a.updated_at"

    /// A cheap fingerprint of the artists table (count, last update, total popularity): it differs
    /// after any import that changed artists, in this process or another.
    func artistsFingerprint() async throws -> String {
        let row = try await db.raw(
            """
            SELECT COUNT(*) AS n, COALESCE(MAX(updated_at), 0) AS u,
                CAST(COALESCE(SUM(popularity), 0) AS BIGINT) AS p FROM artists
            """
        ).first()
        return try row.map {
            "\(try $0.decode(column: "n", as: Int64.self)):\(try $0.decode(column: "u", as: Int64.self)):"
                + "\(try $0.decode(column: "p", as: Int64.self))"
        } ?? ""
    }

    /// A fingerprint of performers and event changes (the upcoming-show counts of suggestions), on
    /// SQLite, where a re-inserted performer row gets a new rowid.
    func showsFingerprint() async throws -> String {
        let row = try await db.raw(
            """
            SELECT (SELECT COUNT(*) FROM event_performers) AS n,
                (SELECT COALESCE(MAX(rowid), 0) FROM event_performers) AS r,
                (SELECT COALESCE(MAX(rowid), 0) FROM event_changes) AS c
            """
        ).first()
        return try row.map {
            "\(try $0.decode(column: "n", as: Int64.self)):\(try $0.decode(column: "r", as: Int64.self)):"
                + "\(try $0.decode(column: "c", as: Int64.self))"
        } ?? ""
    }

    /// Every artist's id and name, most popular first (the order of search results).
    func artistNamesByPopularity() async throws -> (ids: [String], names: [String]) {
        let rows = try await db.raw(
            "SELECT id, name FROM artists ORDER BY popularity DESC, favorites_count DESC, name_folded, id"
        ).all()
        var ids: [String] = []
        var names: [String] = []
        ids.reserveCapacity(rows.count)
        names.reserveCapacity(rows.count)
        for row in rows {
            ids.append(try row.decode(column: "id", as: String.self))
            names.append(try row.decode(column: "name", as: String.self))
        }
        return (ids, names)
    }

    /// This catalogue reading categories afresh every time: for answers kept under a version
    /// (``RecommendationCache``), which must not be made from categories older than it.
    var uncached: CatalogRepository { CatalogRepository(db: db, database: database, cache: CategoryCache(lifetime: 0)) }

    /// Every category (kept in memory for a few seconds: nearly every event and artist answer names some).
    func categories() async throws -> [CategoryRecord] {
        if let cached = cache.current() { return cached }
        let fresh = try await db.raw("SELECT id, name, parent_id FROM categories ORDER BY name, id").all().map { row in
            CategoryRecord(
                id: try row.decode(column: "id", as: String.self),
                name: try row.decode(column: "name", as: String.self),
                parentID: try row.decode(column: "parent_id", as: String?.self))
        }
        cache.store(fresh)
        return fresh
    }

    /// Forgets what is kept in memory (after an import in this process).
    func forgetCached() { cache.forget() }

    func artist(id: String) async throws -> ArtistRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM artists a WHERE a.id = \(bind: id)").first()
            .map(Self.decode)
    }

    func artists(ids: [String]) async throws -> [String: ArtistRecord] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await db.raw(
            "SELECT \(unsafeRaw: Self.columns) FROM artists a WHERE a.id IN (\(binds: Array(Set(ids))))"
        ).all()
        return Dictionary(uniqueKeysWithValues: try rows.map(Self.decode).map { ($0.id, $0) })
    }

    func artists(inCategories categories: [String], offset: Int, limit: Int) async throws -> [ArtistRecord] {
        try await db.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM artists a WHERE a.category_id IN (\(binds: categories))
            ORDER BY a.popularity DESC, a.name, a.id LIMIT \(literal: limit) OFFSET \(literal: offset)
            """
        ).all().map(Self.decode)
    }

    func similar(to artistID: String, limit: Int) async throws -> [(artistID: String, score: Double)] {
        try await db.raw(
            """
            SELECT similar_id, score FROM affinity WHERE artist_id = \(bind: artistID)
            ORDER BY score DESC, similar_id LIMIT \(literal: limit)
            """
        ).all().map {
            (try $0.decode(column: "similar_id", as: String.self), try $0.decode(column: "score", as: Double.self))
        }
    }

    /// Every affinity edge leaving these artists (one query).
    func affinity(from artistIDs: [String]) async throws -> [AffinityEdge] {
        guard !artistIDs.isEmpty else { return [] }
        return try await db.raw(
            "SELECT artist_id, similar_id, score FROM affinity WHERE artist_id IN (\(binds: artistIDs))"
        ).all().map {
            AffinityEdge(
                from: try $0.decode(column: "artist_id", as: String.self),
                to: try $0.decode(column: "similar_id", as: String.self),
                score: try $0.decode(column: "score", as: Double.self))
        }
    }

    /// How many shows of each artist start at or after `from`, and when the soonest does.
    func upcomingCounts(_ artistIDs: [String], from: Int64) async throws -> [String: UpcomingShows] {
        guard !artistIDs.isEmpty else { return [:] }
        let rows = try await db.raw(
            """
            SELECT ep.artist_id, COUNT(*) AS n, MIN(e.start_at) AS soonest
            FROM event_performers ep JOIN events e ON e.id = ep.event_id
            WHERE ep.artist_id IN (\(binds: artistIDs)) AND e.start_at >= \(bind: from) GROUP BY ep.artist_id
            """
        ).all()
        var result: [String: UpcomingShows] = [:]
        for row in rows {
            result[try row.decode(column: "artist_id", as: String.self)] = UpcomingShows(
                count: try row.decode(column: "n", as: Int.self),
                soonest: try row.decode(column: "soonest", as: Int64.self))
        }
        return result
    }

    func addFavorite(userID: String, artistID: String, now: Int64) async throws {
        try await database.transaction { db in
            let inserted = try await db.raw(
                """
                INSERT INTO favorite_artists (user_id, artist_id, created_at)
                VALUES (\(bind: userID), \(bind: artistID), \(bind: now))
                ON CONFLICT (user_id, artist_id) DO NOTHING RETURNING artist_id
                """
            ).first()
            if inserted != nil {
                try await db.raw(
                    "UPDATE artists SET favorites_count = favorites_count + 1 WHERE id = \(bind: artistID)"
                ).run()
            }
        }
    }

    /// Before an account is deleted, with its favourites by cascade: takes them out of the
    /// artists' counts, so that the counts keep matching the rows.
    static func withdrawFavorites(of userID: String, on tx: any SQLDatabase) async throws {
        try await tx.raw(
            """
            UPDATE artists SET favorites_count = favorites_count - 1
            WHERE id IN (SELECT artist_id FROM favorite_artists WHERE user_id = \(bind: userID))
            """
        ).run()
    }

    func removeFavorite(userID: String, artistID: String) async throws {
        try await database.transaction { db in
            let deleted = try await db.raw(
                """
                DELETE FROM favorite_artists WHERE user_id = \(bind: userID) AND artist_id = \(bind: artistID)
                RETURNING artist_id
                """
            ).first()
            if deleted != nil {
                try await db.raw(
                    "UPDATE artists SET favorites_count = favorites_count - 1 WHERE id = \(bind: artistID)"
                ).run()
            }
        }
    }

    func favorites(userID: String, offset: Int, limit: Int) async throws -> [ArtistRecord] {
        try await db.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM favorite_artists f JOIN artists a ON a.id = f.artist_id
            WHERE f.user_id = \(bind: userID) ORDER BY f.created_at DESC, a.id LIMIT \(literal: limit) OFFSET \(literal: offset)
            """
        ).all().map(Self.decode)
    }

    func favoriteIDs(userID: String, among ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        let rows = try await db.raw(
            "SELECT artist_id FROM favorite_artists WHERE user_id = \(bind: userID) AND artist_id IN (\(binds: ids))"
        ).all()
        return Set(try rows.map { try $0.decode(column: "artist_id", as: String.self) })
    }

    static func decode(_ row: any SQLRow) throws -> ArtistRecord {
        ArtistRecord(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            categoryID: try row.decode(column: "category_id", as: String?.self),
            imageURL: try row.decode(column: "image_url", as: String?.self),
            url: try row.decode(column: "url", as: String?.self),
            popularity: try row.decode(column: "popularity", as: Int64.self),
            favoritesCount: try row.decode(column: "favorites_count", as: Int64.self),
            source: try row.decode(column: "source", as: String?.self),
            sourceID: try row.decode(column: "source_id", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self))
    }
}

/// The category list, shared by every request for `lifetime` seconds (imports in another process
/// show within that time; imports in this one forget it at once).
final class CategoryCache: @unchecked Sendable {
    private let lock = NSLock()
    private var value: (categories: [CategoryRecord], at: Date)?
    let lifetime: TimeInterval

    init(lifetime: TimeInterval = 2) {
        self.lifetime = lifetime
    }

    func current(now: Date = Date()) -> [CategoryRecord]? {
        lock.withLock {
            guard let value, now.timeIntervalSince(value.at) < lifetime else { return nil }
            return value.categories
        }
    }

    func store(_ categories: [CategoryRecord], now: Date = Date()) {
        lock.withLock { value = (categories, now) }
    }

    func forget() {
        lock.withLock { value = nil }
    }
}

/// Reads and writes of the affinity import.
extension CatalogRepository {
    /// The ids of the artists with each of these folded names.
    func artistIDs(byFoldedName names: [String]) async throws -> [String: [String]] {
        guard !names.isEmpty else { return [:] }
        var byName: [String: [String]] = [:]
        for row in try await db.raw("SELECT id, name_folded FROM artists WHERE name_folded IN (\(binds: names))").all()
        {
            byName[try row.decode(column: "name_folded", as: String.self), default: []]
                .append(try row.decode(column: "id", as: String.self))
        }
        return byName
    }

    /// Which of these artist ids exist.
    func existingArtists(_ ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return Set(
            try await db.raw("SELECT id FROM artists WHERE id IN (\(binds: ids))").all().map {
                try $0.decode(column: "id", as: String.self)
            })
    }

    /// The stored affinity scores leaving these artists, keyed `artist + U+001F + similar`.
    func affinityScores(from artistIDs: [String]) async throws -> [String: Double] {
        guard !artistIDs.isEmpty else { return [:] }
        var scores: [String: Double] = [:]
        for row in try await db.raw(
            "SELECT artist_id, similar_id, score FROM affinity WHERE artist_id IN (\(binds: artistIDs))"
        ).all() {
            let key =
                try row.decode(column: "artist_id", as: String.self) + "\u{1F}"
                + row.decode(column: "similar_id", as: String.self)
            scores[key] = try row.decode(column: "score", as: Double.self)
        }
        return scores
    }

    /// Inserts or updates affinity rows `(artist_id, similar_id, score)` in one transaction.
    func upsertAffinity(_ rows: [[SQLValue]]) async throws {
        try await database.transaction { db in
            try await BulkWrite.upsert(
                "affinity", columns: ["artist_id", "similar_id", "score"], rows: rows,
                key: ["artist_id", "similar_id"], on: db)
            try await database.moveRecommendationVersion(on: db)
        }
    }
}
