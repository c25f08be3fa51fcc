import Foundation
import SQLKit
import TonightCore

/// A row of `promotions`.
struct PromotionRecord: Sendable, Equatable {
    var placeID: String
    var tier: Int
    var tagline: String?
    var startsAt: Int64?
    var endsAt: Int64?

    /// Whether it applies at `now`.
    func isActive(at now: Int64) -> Bool { (startsAt ?? .min) <= now && now < (endsAt ?? .max) }
}

/// A row of `ads`.
struct AdRecord: Sendable, Equatable {
    var id: String
    var area: String
    var mediaURL: String
    var feeds: [String]
    var pages: [Int]
    var style: Int
    var createdAt: Int64
}

/// What the hub knows about a venue's recent clips.
struct PlaceLiveness: Sendable, Equatable {
    var clips: Int
    var votes: Int64
    var latestPoster: String?
    var latestAt: Int64?
}

/// Promotions, advertisements and the hub's liveness figures.
///
/// Over SQLKit.
struct PromotionRepository: Sendable {
    let db: any SQLDatabase
    let database: Database

    func setPromotion(_ p: PromotionRecord, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO promotions (place_id, tier, tagline, starts_at, ends_at, updated_at)
                VALUES (\(bind: p.placeID), \(bind: p.tier), \(bind: p.tagline), \(bind: p.startsAt), \(bind: p.endsAt), \(bind: now))
                ON CONFLICT (place_id) DO UPDATE SET tier = excluded.tier, tagline = excluded.tagline,
                    starts_at = excluded.starts_at, ends_at = excluded.ends_at, updated_at = excluded.updated_at
                """
            ).run()
        }
    }

    func deletePromotion(placeID: String) async throws {
        try await database.write { db in
            try await db.raw("DELETE FROM promotions WHERE place_id = \(bind: placeID)").run()
        }
    }

    /// Promotions of places in a city, by place id.
    func promotions(city: String) async throws -> [String: PromotionRecord] {
        var result: [String: PromotionRecord] = [:]
        for row in try await db.raw(
            """
            SELECT pr.place_id, pr.tier, pr.tagline, pr.starts_at, pr.ends_at FROM promotions pr
            JOIN places p ON p.id = pr.place_id WHERE p.city_key = \(bind: city)
            """
        ).all() {
            let promotion = PromotionRecord(
                placeID: try row.decode(column: "place_id", as: String.self),
                tier: try row.decode(column: "tier", as: Int.self),
                tagline: try row.decode(column: "tagline", as: String?.self),
                startsAt: try row.decode(column: "starts_at", as: Int64?.self),
                endsAt: try row.decode(column: "ends_at", as: Int64?.self))
            result[promotion.placeID] = promotion
        }
        return result
    }

    /// Recent clips and their votes per place of a city since `since`.
    func liveness(city: String, since: Int64) async throws -> [String: PlaceLiveness] {
        var result: [String: PlaceLiveness] = [:]
        for row in try await db.raw(
            """
            SELECT place_id, COUNT(*) AS clips, CAST(COALESCE(SUM(up_count + down_count), 0) AS BIGINT) AS votes,
                MAX(created_at) AS latest
            FROM posts WHERE city_key = \(bind: city) AND place_id IS NOT NULL AND created_at >= \(bind: since)
                AND status = 'ready' AND moderation = 'visible'
            GROUP BY place_id
            """
        ).all() {
            result[try row.decode(column: "place_id", as: String.self)] = PlaceLiveness(
                clips: try row.decode(column: "clips", as: Int.self),
                votes: try row.decode(column: "votes", as: Int64.self),
                latestAt: try row.decode(column: "latest", as: Int64?.self))
        }
        // The newest clip's poster per place.
        for row in try await db.raw(
            """
            SELECT p.place_id, p.poster_key FROM posts p
            WHERE p.city_key = \(bind: city) AND p.place_id IS NOT NULL AND p.created_at >= \(bind: since)
                AND p.status = 'ready' AND p.moderation = 'visible' AND p.poster_key IS NOT NULL
                AND p.created_at = (SELECT MAX(q.created_at) FROM posts q WHERE q.place_id = p.place_id
                    AND q.status = 'ready' AND q.moderation = 'visible' AND q.poster_key IS NOT NULL)
            """
        ).all() {
            let place = try row.decode(column: "place_id", as: String.self)
            result[place]?.latestPoster = try row.decode(column: "poster_key", as: String?.self)
        }
        return result
    }

    func addAd(_ ad: AdRecord) async throws {
        let feeds = String(decoding: try JSONEncoder().encode(ad.feeds), as: UTF8.self)
        let pages = String(decoding: try JSONEncoder().encode(ad.pages), as: UTF8.self)
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO ads (id, area, media_url, feeds, pages, style, created_at)
                VALUES (\(bind: ad.id), \(bind: ad.area), \(bind: ad.mediaURL), \(bind: feeds), \(bind: pages), \(bind: ad.style), \(bind: ad.createdAt))
                """
            ).run()
        }
    }

    func deleteAd(id: String) async throws {
        try await database.write { db in try await db.raw("DELETE FROM ads WHERE id = \(bind: id)").run() }
    }

    func ad(id: String) async throws -> AdRecord? {
        try await db.raw("SELECT * FROM ads WHERE id = \(bind: id)").first().map(Self.decodeAd)
    }

    func setAdMedia(id: String, url: String) async throws {
        try await database.write { db in
            try await db.raw("UPDATE ads SET media_url = \(bind: url) WHERE id = \(bind: id)").run()
        }
    }

    func ads() async throws -> [AdRecord] {
        try await db.raw("SELECT * FROM ads ORDER BY created_at DESC, id DESC").all().map(Self.decodeAd)
    }

    /// The ads of one area (`region$country`).
    func ads(area: String) async throws -> [AdRecord] {
        try await db.raw("SELECT * FROM ads WHERE area = \(bind: area) ORDER BY id").all().map(Self.decodeAd)
    }

    static func decodeAd(_ row: any SQLRow) throws -> AdRecord {
        AdRecord(
            id: try row.decode(column: "id", as: String.self), area: try row.decode(column: "area", as: String.self),
            mediaURL: try row.decode(column: "media_url", as: String.self),
            feeds: (try? JSONDecoder().decode(
                [String].self, from: Data(try row.decode(column: "feeds", as: String.self).utf8))) ?? [],
            pages: (try? JSONDecoder().decode(
                [Int].self, from: Data(try row.decode(column: "pages", as: String.self).utf8))) ?? [],
            style: try row.decode(column: "style", as: Int.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self))
    }
}
