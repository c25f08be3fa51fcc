/// An edge of the affinity file: `from` is liked by people who like `to`… with `score` in [0,1].
public struct AffinityEdge: Sendable, Equatable {
    public var from: String
    public var to: String
    public var score: Double

    public init(from: String, to: String, score: Double) {
        self.from = from
        self.to = to
        self.score = score
    }
}

/// Why an artist is suggested: its best affinity score and the favourite it is similar to.
public struct SimilarArtist: Sendable, Equatable {
    public var score: Double
    public var similarTo: String
}

/// An event ranked for the explore cards.
public struct RankedEvent: Sendable, Equatable {
    public var id: String
    public var score: Double
    /// The favourite artist the event's best performer is similar to.
    public var similarTo: String
}

/// The explore cards' ranking (Tickets Tonight): favourite artists → affinity-similar artists →
/// their events, best score first.
public enum ArtistAffinity {
    /// Each artist similar to some favourite with its best score (ties: the favourite first by id).
    /// Favourites themselves are left out: their events have their own feed.
    public static func similarArtists(favorites: Set<String>, edges: [AffinityEdge]) -> [String: SimilarArtist] {
        var best: [String: SimilarArtist] = [:]
        for edge in edges where favorites.contains(edge.from) && !favorites.contains(edge.to) {
            guard edge.score.isFinite, edge.score > 0 else { continue }
            if let current = best[edge.to],
                !(edge.score > current.score || (edge.score == current.score && edge.from < current.similarTo))
            {
                continue
            }
            best[edge.to] = SimilarArtist(score: edge.score, similarTo: edge.from)
        }
        return best
    }

    /// What an event in one of the user's favourite categories adds to its score.
    public static let categoryBonus = 0.2

    /// Events scored by their best similar performer (plus ``categoryBonus`` for those in
    /// `favoriteCategoryEvents`), best first, then by start and id.
    public static func rank(
        _ events: [(id: String, startAt: Int64, performers: [String])], similar: [String: SimilarArtist],
        favoriteCategoryEvents: Set<String> = []
    ) -> [RankedEvent] {
        var ranked: [(RankedEvent, Int64)] = []
        for event in events {
            let best = event.performers.compactMap { similar[$0] }.max {
                ($0.score, $1.similarTo) < ($1.score, $0.similarTo)
            }
            guard let best else { continue }
            let bonus = favoriteCategoryEvents.contains(event.id) ? categoryBonus : 0
            ranked.append(
                (RankedEvent(id: event.id, score: best.score + bonus, similarTo: best.similarTo), event.startAt))
        }
        return ranked.sorted { ($1.0.score, $0.1, $0.0.id) < ($0.0.score, $1.1, $1.0.id) }.map(\.0)
    }
}
