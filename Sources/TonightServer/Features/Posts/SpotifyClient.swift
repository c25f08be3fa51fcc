import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A song as search results show it.
struct SongHit: Sendable, Equatable {
    var title: String
    var artist: String?
    var uri: String?
    var artworkURL: String?
    var previewURL: String?
}

/// The Spotify Web API's track search with the client-credentials flow.
///
/// The app token is fetched once and reused until a minute before it expires (concurrent callers
/// share one fetch); a 401 drops it and fetches a new one once. A 429 is honoured: with a
/// `Retry-After` of at most ``maxWait`` the search waits and tries once more; otherwise — and for
/// every later call until that time — it fails at once with ``SpotifyError/rateLimited``, so the
/// caller falls back instead of hammering Spotify.
actor SpotifyClient {
    struct Configuration: Sendable {
        var clientID: String
        var clientSecret: String
        /// `https://accounts.spotify.com`, or a test server.
        var accountsURL: String = "https://accounts.spotify.com"
        /// `https://api.spotify.com`, or a test server.
        var apiURL: String = "https://api.spotify.com"
    }

    enum SpotifyError: Error, Equatable {
        case rateLimited(until: Date)
        case http(status: Int)
        case malformed
    }

    let configuration: Configuration
    let httpClient: HTTPClient
    var maxWait: TimeInterval = 3
    private var token: (value: String, expires: Date)?
    private var fetching: Task<(value: String, expires: Date), any Error>?
    private var blockedUntil: Date?

    init(configuration: Configuration, httpClient: HTTPClient) {
        self.configuration = configuration
        self.httpClient = httpClient
    }

    /// Tracks matching `query`, at most `limit`.
    func search(_ query: String, limit: Int) async throws -> [SongHit] {
        if let blockedUntil, blockedUntil > Date() { throw SpotifyError.rateLimited(until: blockedUntil) }
        var retriedAuth = false
        var waited = false
        while true {
            let token = try await validToken()
            var components = URLComponents(string: configuration.apiURL + "/v1/search")
            components?.queryItems = [
                .init(name: "q", value: query), .init(name: "type", value: "track"),
                .init(name: "limit", value: "\(limit)"),
            ]
            guard let url = components?.url?.absoluteString else { throw SpotifyError.malformed }
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let response = try await httpClient.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 4 << 20)
            switch response.status.code {
            case 200:
                return try Self.tracks(from: body)
            case 401 where !retriedAuth:
                retriedAuth = true
                self.token = nil
            case 429:
                let seconds = response.headers.first(name: "Retry-After").flatMap(TimeInterval.init) ?? 1
                if !waited, seconds <= maxWait {
                    waited = true
                    try await Task.sleep(for: .seconds(seconds))
                } else {
                    let until = Date().addingTimeInterval(seconds)
                    blockedUntil = until
                    throw SpotifyError.rateLimited(until: until)
                }
            default:
                throw SpotifyError.http(status: Int(response.status.code))
            }
        }
    }

    private func validToken() async throws -> String {
        if let token, token.expires > Date() { return token.value }
        if let fetching { return try await fetching.value.value }
        let task = Task { try await self.fetchToken() }
        fetching = task
        defer { fetching = nil }
        let fresh = try await task.value
        token = fresh
        return fresh.value
    }

    private func fetchToken() async throws -> (value: String, expires: Date) {
        var request = HTTPClientRequest(url: configuration.accountsURL + "/api/token")
        request.method = .POST
        let credentials = Data("\(configuration.clientID):\(configuration.clientSecret)".utf8).base64EncodedString()
        request.headers.add(name: "Authorization", value: "Basic \(credentials)")
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "grant_type=client_credentials"))
        let response = try await httpClient.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw SpotifyError.http(status: Int(response.status.code)) }
        struct Token: Decodable {
            var access_token: String
            var expires_in: Int
        }
        guard let token = try? JSONDecoder().decode(Token.self, from: Data(buffer: body)) else {
            throw SpotifyError.malformed
        }
        // Renew a minute early.
        return (token.access_token, Date().addingTimeInterval(TimeInterval(max(0, token.expires_in - 60))))
    }

    /// Maps Spotify's search answer (`tracks.items`) to songs.
    static func tracks(from body: ByteBuffer) throws -> [SongHit] {
        struct Answer: Decodable {
            struct Tracks: Decodable { var items: [Track] }
            struct Track: Decodable {
                struct Artist: Decodable { var name: String }
                struct Album: Decodable {
                    struct Image: Decodable { var url: String }
                    var images: [Image]?
                }
                var name: String
                var uri: String
                var artists: [Artist]?
                var album: Album?
                var preview_url: String?
            }
            var tracks: Tracks
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(buffer: body)) else {
            throw SpotifyError.malformed
        }
        return answer.tracks.items.map { track in
            SongHit(
                title: track.name, artist: track.artists?.map(\.name).joined(separator: ", "), uri: track.uri,
                artworkURL: track.album?.images?.first?.url, previewURL: track.preview_url)
        }
    }
}
