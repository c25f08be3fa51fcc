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
        if let ascii = foldASCII(text) { return ascii }
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

    /// The same folding for pure-ASCII text without Foundation (most names): lower-cased letters and
    /// digits, every run of anything else one space. Nil when `text` has a non-ASCII byte.
    static func foldASCII(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for byte in text.utf8 {
            guard byte < 0x80 else { return nil }
            let lower = (byte >= 65 && byte <= 90) ? byte + 32 : byte
            if (lower >= 97 && lower <= 122) || (lower >= 48 && lower <= 57) {
                if pendingSpace, !bytes.isEmpty { bytes.append(32) }
                pendingSpace = false
                bytes.append(lower)
            } else {
                pendingSpace = true
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
