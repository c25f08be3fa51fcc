import Foundation

/// Text normalised for search: case-, diacritic- and width-insensitive, with the Latin letters that
/// Unicode does not decompose (ł, ø, æ, œ, đ, þ, ı, ĳ…) spelled out, punctuation turned into spaces
/// and runs of spaces collapsed. `SearchText.fold("Sigur Rós") == "sigur ros"`.
public enum SearchText {
    private static let letters: [Character: String] = [
        "ł": "l", "ø": "o", "æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "þ": "th", "ı": "i", "ĳ": "ij",
        "ŀ": "l", "ħ": "h", "ŧ": "t", "ß": "ss", "ſ": "s",
    ]

    /// The folded form of `text`.
    public static func fold(_ text: some StringProtocol) -> String {
        let basic = String(text).folding(
            options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var out = ""
        out.reserveCapacity(basic.utf8.count)
        var pendingSpace = false
        for character in basic {
            if character.isLetter || character.isNumber {
                if pendingSpace, !out.isEmpty { out.append(" ") }
                pendingSpace = false
                if let spelled = letters[character] { out += spelled } else { out.append(character) }
            } else {
                pendingSpace = true
            }
        }
        return out
    }

    /// The folded words of `text`, for prefix-of-any-word search.
    public static func words(_ text: some StringProtocol) -> [Substring] {
        fold(text).split(separator: " ")
    }
}
