import TonightAPI
import TonightCore

/// The advertisements placed on one page of a feed (by area, feed pattern and page).
struct AdPlacer: Sendable {
    let promotions: PromotionRepository

    /// The ads for page `page` of a venue, city or pregame feed in `cityKey`'s region.
    func ads(kind: FeedKind, name: String, cityKey: String, page: Int) async throws -> [Components.Schemas.FeedAd] {
        guard let region = AreaKey.region(ofCity: cityKey) else { return [] }
        let candidates = try await promotions.ads(area: region).map { ad in
            (
                ad,
                AdCandidate(
                    id: ad.id, patterns: ad.feeds.compactMap { try? FeedPattern($0) }, pages: Set(ad.pages),
                    style: ad.style)
            )
        }
        let placed = Set(
            AdPlacement.ads(for: FeedIdentity(kind: kind, name: name), page: page, from: candidates.map(\.1)).map(\.id))
        return candidates.filter { placed.contains($0.0.id) }.map {
            .init(id: $0.0.id, mediaUrl: $0.0.mediaURL, style: $0.0.style)
        }
    }
}
