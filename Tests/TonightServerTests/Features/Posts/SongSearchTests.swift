import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import TonightServer

/// A local server that speaks Spotify's token and search endpoints, counting what it was asked.
final class FakeSpotify: Sendable {
    struct Counts { var tokens = 0, searches = 0, lastQuery = "", rateLimitedAt: Date?, retriedAt: Date? }
    let counts = Mutex(Counts())
    /// Answer the next search with 429 and this Retry-After.
    let rateLimitNext = Mutex<Int?>(nil)
    /// Answer every search with 500.
    let failing = Mutex(false)

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/api/token") { request, _ -> Response in
            let basic = "Basic " + Data("id:secret".utf8).base64EncodedString()
            var request = request
            let body = String(buffer: try await request.collectBody(upTo: 10_000))
            guard request.headers[.authorization] == basic, body == "grant_type=client_credentials" else {
                return Response(status: .unauthorized)
            }
            self.counts.withLock { $0.tokens += 1 }
            let json = #"{"access_token":"tok-\#(UUID().uuidString)","token_type":"Bearer","expires_in":3600}"#
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(string: json)))
        }
        router.get("/v1/search") { request, _ -> Response in
            guard request.headers[.authorization]?.hasPrefix("Bearer tok-") == true else {
                return Response(status: .unauthorized)
            }
            if self.failing.withLock({ $0 }) { return Response(status: .internalServerError) }
            if let seconds = self.rateLimitNext.withLock({ value -> Int? in
                defer { value = nil }
                return value
            }) {
                self.counts.withLock { $0.rateLimitedAt = Date() }
                return Response(status: .tooManyRequests, headers: [.retryAfter: "\(seconds)"])
            }
            let query = request.uri.queryParameters.get("q") ?? ""
            self.counts.withLock {
                $0.searches += 1
                $0.lastQuery = query
                if $0.rateLimitedAt != nil, $0.retriedAt == nil { $0.retriedAt = Date() }
            }
            let json = """
                {"tracks":{"href":"x","items":[{"name":"Blinding Lights","uri":"spotify:track:0VjIjW4GlUZAMYd2vXMi3b",
                "artists":[{"name":"The Weeknd"}],"album":{"images":[{"url":"https://i.scdn.co/image/a","height":640}]},
                "preview_url":"https://p.scdn.co/mp3-preview/x"}],"limit":20,"total":1}}
                """
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(string: json)))
        }
        return router
    }
}

@Suite("Song search")
struct SongSearchTests {
    /// Runs `body` with the fake Spotify on a real port and Tonight configured to use it.
    func withSpotify(
        _ body: @escaping @Sendable (FakeSpotify, AppServices, any TestClientProtocol) async throws -> Void
    )
        async throws
    {
        let fake = FakeSpotify()
        let spotify = Application(router: fake.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await spotify.test(.live) { spotifyClient in
            let base = "http://127.0.0.1:\(spotifyClient.port ?? 0)"
            try await withApp(
                .sqlite,
                configure: {
                    $0.spotifyClientID = "id"
                    $0.spotifyClientSecret = "secret"
                    $0.spotifyAccountsURL = base
                    $0.spotifyAPIURL = base
                }
            ) { services, client in try await body(fake, services, client) }
        }
    }

    @Test("Spotify answers with a cached client-credentials token, mapped to songs")
    func spotifyAnswers() async throws {
        try await withSpotify { fake, _, client in
            let first = try await client.send(.get, "/v1/songs/search?q=blinding%20lights").json
            #expect(first["source"] as? String == "spotify")
            let song = (first["items"] as? [JSON])?.first ?? [:]
            #expect(song["title"] as? String == "Blinding Lights")
            #expect(song["artist"] as? String == "The Weeknd")
            #expect(song["url"] as? String == "https://open.spotify.com/track/0VjIjW4GlUZAMYd2vXMi3b")
            #expect(song["artworkUrl"] as? String == "https://i.scdn.co/image/a")
            #expect(song["previewUrl"] as? String == "https://p.scdn.co/mp3-preview/x")
            _ = try await client.send(.get, "/v1/songs/search?q=weeknd")
            let counts = fake.counts.withLock { $0 }
            #expect(counts.tokens == 1 && counts.searches == 2 && counts.lastQuery == "weeknd")
        }
    }

    @Test("a 429 is honoured: the search waits Retry-After and tries again")
    func retryAfter() async throws {
        try await withSpotify { fake, _, client in
            fake.rateLimitNext.withLock { $0 = 1 }
            let answer = try await client.send(.get, "/v1/songs/search?q=x").json
            #expect(answer["source"] as? String == "spotify")
            let counts = fake.counts.withLock { $0 }
            let limited = try #require(counts.rateLimitedAt)
            let retried = try #require(counts.retriedAt)
            #expect(retried.timeIntervalSince(limited) >= 0.99)
        }
    }

    @Test("when Spotify fails, or a long Retry-After, the songs on posts answer")
    func fallback() async throws {
        try await withSpotify { fake, services, client in
            let author = try await client.member("author")
            let id = try await insertPost(services, author: author.id)
            try await services.database.sql.raw(
                "UPDATE posts SET song_title = 'Dancing Queen', song_artist = 'ABBA', song_uri = 'spotify:track:0GjEhVFGZW8afUYGChu3Rr' WHERE id = \(bind: id)"
            ).run()
            fake.failing.withLock { $0 = true }
            let answer = try await client.send(.get, "/v1/songs/search?q=abba").json
            #expect(answer["source"] as? String == "tonight")
            #expect((answer["items"] as? [JSON])?.compactMap { $0["title"] as? String } == ["Dancing Queen"])
            fake.failing.withLock { $0 = false }
            fake.rateLimitNext.withLock { $0 = 120 }
            #expect(try await client.send(.get, "/v1/songs/search?q=queen").json["source"] as? String == "tonight")
            // Within the Retry-After, Spotify is not asked again.
            let before = fake.counts.withLock { $0.searches }
            #expect(try await client.send(.get, "/v1/songs/search?q=queen").json["source"] as? String == "tonight")
            #expect(fake.counts.withLock { $0.searches } == before)
            let empty = try await client.send(.get, "/v1/songs/search?q=%20")
            #expect(empty.status == .badRequest)
        }
    }
}
