import Logging
import TonightCore

/// Song search for posts: Spotify when configured and answering, else the songs Tonight's own
/// posts already use.
struct SongSearch: Sendable {
    let spotify: SpotifyClient?
    let posts: PostRepository
    let logger: Logger

    /// Songs matching `query` and where they came from (`spotify` or `tonight`).
    func search(_ query: String, limit: Int) async throws -> (songs: [SongHit], source: String) {
        if let spotify {
            do {
                return (try await spotify.search(query, limit: limit), "spotify")
            } catch {
                logger.info("song search: Spotify failed, answering from posts", metadata: LoggedError.metadata(error))
            }
        }
        return (try await posts.songs(matching: query, limit: limit), "tonight")
    }
}
