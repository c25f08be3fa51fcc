/// How well an event matches search words: a word equal to a word of the event's name counts most,
/// then a prefix of a name word, then a performer's name, then the place's name.
public enum EventRelevance {
    /// The score of an event for folded `words` (see ``SearchText``).
    public static func score(words: [Substring], name: String, placeName: String, performers: [String]) -> Int {
        let nameWords = SearchText.words(name)
        let performerWords = performers.flatMap { SearchText.words($0) }
        let placeWords = SearchText.words(placeName)
        var score = 0
        for word in words {
            if nameWords.contains(word) {
                score += 6
            } else if nameWords.contains(where: { $0.hasPrefix(word) }) {
                score += 4
            }
            if performerWords.contains(word) {
                score += 5
            } else if performerWords.contains(where: { $0.hasPrefix(word) }) {
                score += 3
            }
            if placeWords.contains(where: { $0.hasPrefix(word) }) { score += 1 }
        }
        return score
    }
}
