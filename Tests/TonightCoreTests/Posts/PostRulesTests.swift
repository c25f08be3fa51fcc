import Foundation
import Testing

@testable import TonightCore

@Suite("Post rules, trending score and byte ranges")
struct PostRulesTests {
    @Test("hashtags come from the caption, normalised and deduplicated, with explicit tags after")
    func tags() throws {
        #expect(PostRules.hashtags(in: "Friday #Salsa at #café, #salsa again #2026 #") == ["salsa", "café", "2026"])
        #expect(
            try PostRules.tags(caption: "#a1 night", explicit: "Bachata, #house  a1").get() == [
                "a1", "bachata", "house",
            ])
        #expect(PostRules.tags(caption: "", explicit: "no-dashes").failureField == "tags")
        let many = (0..<21).map { "#t\($0)" }.joined(separator: " ")
        #expect(PostRules.tags(caption: many, explicit: nil).failureField == "tags")
        #expect(PostRules.normalizedTag("##Dance_Floor") == "dance_floor")
        #expect(PostRules.normalizedTag("#") == nil)
    }

    @Test("captions and comments are trimmed and limited")
    func text() throws {
        #expect(try PostRules.caption("  hi\nthere ").get() == "hi\nthere")
        #expect(PostRules.caption(String(repeating: "x", count: 501)).failureField == "caption")
        #expect(PostRules.caption("bell \u{7}").failureField == "caption")
        #expect(PostRules.comment("   ").failureField == "text")
        #expect(try PostRules.comment(" ok ").get() == "ok")
    }

    @Test("Spotify track URIs: 22 base-62 characters, with the open.spotify.com link")
    func spotify() {
        #expect(PostRules.isSpotifyTrackURI("spotify:track:4uLU6hMCjMI75M1A2tKUQC"))
        #expect(!PostRules.isSpotifyTrackURI("spotify:track:4uLU6hMCjMI75M1A2tKUQ"))
        #expect(!PostRules.isSpotifyTrackURI("spotify:album:4uLU6hMCjMI75M1A2tKUQC"))
        #expect(!PostRules.isSpotifyTrackURI("spotify:track:4uLU6hMCjMI75M1A2tKU-C"))
        #expect(
            PostRules.spotifyURL("spotify:track:4uLU6hMCjMI75M1A2tKUQC")
                == "https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC")
        #expect(PostRules.spotifyURL("nope") == nil)
    }

    @Test("the trending score rises with engagement and decays with age")
    func trending() {
        let score = TrendingScore()
        let fresh = score.score(up: 0, down: 0, comments: 0, views: 0, ageHours: 0)
        #expect(abs(fresh - 1 / pow(2, 1.5)) < 1e-12)
        #expect(
            score.score(up: 5, down: 0, comments: 0, views: 0, ageHours: 1)
                > score.score(up: 0, down: 0, comments: 0, views: 0, ageHours: 1))
        #expect(
            score.score(up: 5, down: 0, comments: 0, views: 0, ageHours: 10)
                < score.score(up: 5, down: 0, comments: 0, views: 0, ageHours: 1))
        #expect(score.score(up: 0, down: 3, comments: 0, views: 0, ageHours: 1) < 0)
        var heavy = score
        heavy.gravity = 3
        #expect(
            heavy.score(up: 1, down: 0, comments: 0, views: 0, ageHours: 5)
                < score.score(up: 1, down: 0, comments: 0, views: 0, ageHours: 5))
    }

    @Test("Range headers: first bytes, open end, suffix, clamping, unsatisfiable and ignored forms")
    func ranges() {
        #expect(ByteRange.parse("bytes=0-99", size: 1000) == .partial(lower: 0, upper: 99))
        #expect(ByteRange.parse("bytes=900-", size: 1000) == .partial(lower: 900, upper: 999))
        #expect(ByteRange.parse("bytes=-10", size: 1000) == .partial(lower: 990, upper: 999))
        #expect(ByteRange.parse("bytes=-5000", size: 1000) == .partial(lower: 0, upper: 999))
        #expect(ByteRange.parse("bytes=500-5000", size: 1000) == .partial(lower: 500, upper: 999))
        #expect(ByteRange.parse("bytes=1000-", size: 1000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", size: 1000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,5-6", size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=9-3", size: 1000) == .whole)
        #expect(ByteRange.parse("items=0-1", size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=x-1", size: 1000) == .whole)
        #expect(ByteRange.parse(nil, size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=0-", size: 0) == .unsatisfiable)
    }
}

extension Result {
    /// The field of a failed validation.
    fileprivate var failureField: String? {
        if case .failure(let error) = self { return (error as? FieldIssue)?.field }
        return nil
    }
}

@Suite("Area keys")
struct AreaKeyTests {
    @Test("city and region keys: three and two non-empty parts")
    func keys() {
        #expect(AreaKey.isCity("Halifax$Nova Scotia$CA"))
        #expect(!AreaKey.isCity("Halifax$$CA") && !AreaKey.isCity("Nova Scotia$CA"))
        #expect(AreaKey.isRegion("Nova Scotia$CA") && !AreaKey.isRegion("CA"))
        #expect(AreaKey.region(ofCity: "Halifax$Nova Scotia$CA") == "Nova Scotia$CA")
        #expect(AreaKey.cityName("Halifax$Nova Scotia$CA") == "Halifax")
        #expect(AreaKey.region(ofCity: "nope") == nil)
    }
}
