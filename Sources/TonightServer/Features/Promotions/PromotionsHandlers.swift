import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct PromotionsHandlers: Sendable {
    let config: AppConfig
    let places: PlaceRepository
    /// Where ad creatives are stored, and how their addresses are signed (the posts' own store).
    let blobs: any BlobStore
    let urls: MediaURLs
    let promotions: PromotionRepository
    let adPlacer: AdPlacer

    func setPromotion(_ input: Operations.SetPromotion.Input) async throws -> Operations.SetPromotion.Output {
        _ = try RequestInfo.requireAdmin()
        let body = input.body.json
        guard try await places.find(id: input.path.placeId) != nil else {
            throw APIError.notFound("No such place.")
        }
        var issues: [FieldIssue] = []
        if !(0...100).contains(body.tier) {
            issues.append(.init(field: "tier", code: "out_of_range", message: "Use a tier from 0 to 100."))
        }
        let tagline = body.tagline?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let tagline, tagline.count > 140 || !TextRules.isClean(tagline) {
            issues.append(.init(field: "tagline", code: "invalid", message: "Use up to 140 plain characters."))
        }
        if let start = body.startsAt, let end = body.endsAt, end <= start {
            issues.append(.init(field: "endsAt", code: "before_start", message: "End after the start."))
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
        let promotion = PromotionRecord(
            placeID: input.path.placeId, tier: body.tier, tagline: tagline.flatMap { $0.isEmpty ? nil : $0 },
            startsAt: body.startsAt.map(Clock.millis), endsAt: body.endsAt.map(Clock.millis))
        try await promotions.setPromotion(promotion, now: Clock.millis())
        return .ok(.init(body: .json(.init(promotion))))
    }

    func deletePromotion(_ input: Operations.DeletePromotion.Input) async throws -> Operations.DeletePromotion.Output {
        _ = try RequestInfo.requireAdmin()
        try await promotions.deletePromotion(placeID: input.path.placeId)
        return .noContent(.init())
    }

    func cityHub(_ input: Operations.CityHub.Input) async throws -> Operations.CityHub.Output {
        var issues: [FieldIssue] = []
        let (near, _) = Paging.near(input.query.near, radius: nil, issues: &issues)
        guard issues.isEmpty else { throw APIError.validation(issues) }
        let limit = try Paging.limit(input.query.limit)
        let offset = try Paging.offset(input.query.cursor)
        let city = input.path.cityKey
        let now = Clock.millis()
        let group = input.query.group.flatMap { PlaceGroup(rawValue: $0.rawValue) }
        let venues = try await places.candidates(PlaceQuery(group: group, cityKey: city, cap: 5000))
        let promoted = try await promotions.promotions(city: city).filter { $0.value.isActive(at: now) }
        let live = try await promotions.liveness(
            city: city, since: now - Int64(config.placeFeedWindowHours) * 3_600_000)
        func liveness(_ id: String) -> Int64 { live[id].map { Int64($0.clips) + $0.votes } ?? 0 }
        let ranked = venues.sorted { a, b in
            let (ta, tb) = (promoted[a.id]?.tier ?? 0, promoted[b.id]?.tier ?? 0)
            if ta != tb { return ta > tb }
            let (la, lb) = (liveness(a.id), liveness(b.id))
            if la != lb { return la > lb }
            return a.name.localizedCaseInsensitiveCompare(b.name) == .orderedAscending
        }
        let (page, next) = Paging.page(ranked, offset: offset, limit: limit)
        let items = page.map { place in
            let tier = promoted[place.id]?.tier ?? 0
            let stats = live[place.id]
            return Components.Schemas.HubPlace(
                place: .init(place, distance: near.map { place.location.distance(to: $0) }, now: Date()),
                tier: tier,
                highlighted: tier > 0, tagline: promoted[place.id]?.tagline, clips: stats?.clips ?? 0,
                votes: stats?.votes ?? 0,
                latestPosterUrl: stats?.latestPoster.map { urls.url(for: $0) },
                latestPostAt: stats?.latestAt.map(Clock.date))
        }
        return .ok(.init(body: .json(.init(items: items, nextCursor: next))))
    }

    func listAds(_ input: Operations.ListAds.Input) async throws -> Operations.ListAds.Output {
        _ = try RequestInfo.requireAdmin()
        let items = try await promotions.ads().map { Components.Schemas.Ad($0, urls: urls) }
        return .ok(.init(body: .json(.init(items: items))))
    }

    func createAd(_ input: Operations.CreateAd.Input) async throws -> Operations.CreateAd.Output {
        _ = try RequestInfo.requireAdmin()
        let body = input.body.json
        var issues: [FieldIssue] = []
        if !AreaKey.isRegion(body.area) {
            issues.append(.init(field: "area", code: "invalid", message: "Use a region key: region$country."))
        }
        if URL(string: body.mediaUrl).map({ $0.scheme == "https" && $0.host != nil }) != true {
            issues.append(.init(field: "mediaUrl", code: "invalid", message: "Use an https URL."))
        }
        if body.feeds.isEmpty {
            issues.append(.init(field: "feeds", code: "required", message: "Give at least one feed pattern."))
        }
        for (index, text) in body.feeds.enumerated() {
            do { _ = try FeedPattern(text) } catch {
                issues.append(.init(field: "feeds[\(index)]", code: "invalid_pattern", message: "\(error)"))
            }
        }
        if body.pages.isEmpty || body.pages.contains(where: { !(1...1000).contains($0) }) {
            issues.append(.init(field: "pages", code: "invalid", message: "Give page numbers from 1 to 1000."))
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
        let ad = AdRecord(
            id: Identifier.make(), area: body.area, mediaURL: body.mediaUrl, feeds: body.feeds,
            pages: Array(Set(body.pages)).sorted(), style: body.style.rawValue, createdAt: Clock.millis())
        try await promotions.addAd(ad)
        return .created(.init(body: .json(.init(ad, urls: urls))))
    }

    func deleteAd(_ input: Operations.DeleteAd.Input) async throws -> Operations.DeleteAd.Output {
        _ = try RequestInfo.requireAdmin()
        try await promotions.deleteAd(id: input.path.adId)
        if BlobKey.isValidPrefix("ads/\(input.path.adId)/") {
            for key in try await blobs.list(prefix: "ads/\(input.path.adId)/") {
                try await blobs.delete(key: key)
            }
        }
        return .noContent(.init())
    }

    func uploadAdCreative(_ input: Operations.UploadAdCreative.Input) async throws
        -> Operations.UploadAdCreative.Output
    {
        _ = try RequestInfo.requireAdmin()
        guard let ad = try await promotions.ad(id: input.path.adId) else { throw APIError.notFound("No such ad.") }
        guard case .multipartForm(let form) = input.body else {
            throw APIError.badRequest("Send multipart/form-data.")
        }
        var bytes: [UInt8]?
        do {
            for try await part in form {
                if case .file(let file) = part {
                    bytes = Array(
                        try await file.payload.body.collect(upTo: config.bodyLimit, using: .init())
                            .readableBytesView)
                }
            }
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.badRequest("The upload could not be read: \(error)", code: .invalidUpload)
        }
        guard let bytes, !bytes.isEmpty else {
            throw APIError.validation([
                .init(field: "file", code: "required", message: "Attach the ad's image or page.")
            ])
        }
        let (ext, type): (String, String)
        switch ContainerSniffer.sniff(Array(bytes.prefix(64))) {
        case .jpeg: (ext, type) = ("jpg", "image/jpeg")
        case .png: (ext, type) = ("png", "image/png")
        default:
            guard Self.looksLikeHTML(bytes) else {
                throw APIError(
                    status: 415, code: .unsupportedMedia, detail: "Upload a JPEG or PNG image, or an HTML page.")
            }
            (ext, type) = ("html", "text/html; charset=utf-8")
        }
        let key = "ads/\(ad.id)/creative-\(Identifier.make()).\(ext)"
        let file = config.uploadDirectory + "/" + Identifier.make() + ".ad"
        try FileManager.default.createDirectory(atPath: config.uploadDirectory, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: file, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let old = try await blobs.list(prefix: "ads/\(ad.id)/")
        try await blobs.put(key: key, from: file, contentType: type, storageClass: nil)
        // Stored unsigned; signed whenever it is handed out.
        try await promotions.setAdMedia(id: ad.id, url: MediaURLs.prefix + key)
        for stale in old { try? await blobs.delete(key: stale) }
        guard let stored = try await promotions.ad(id: ad.id) else { throw APIError.notFound("No such ad.") }
        return .ok(.init(body: .json(.init(stored, urls: urls))))
    }

    /// Whether bytes are a UTF-8 HTML page: valid UTF-8 whose first non-space character is `<`.
    static func looksLikeHTML(_ bytes: [UInt8]) -> Bool {
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        return text.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" }).first == "<"
            && TextRules.isClean(text, multiline: true)
    }

}

extension Components.Schemas.Promotion {
    init(_ p: PromotionRecord) {
        self.init(
            placeId: p.placeID, tier: p.tier, tagline: p.tagline, startsAt: p.startsAt.map(Clock.date),
            endsAt: p.endsAt.map(Clock.date))
    }
}

extension Components.Schemas.Ad {
    init(_ ad: AdRecord, urls: MediaURLs) {
        self.init(
            id: ad.id, area: ad.area, mediaUrl: urls.resolve(ad.mediaURL), feeds: ad.feeds, pages: ad.pages,
            style: ad.style,
            createdAt: Clock.date(ad.createdAt))
    }
}
