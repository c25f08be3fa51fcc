import Foundation
import Testing

@testable import TonightCore

/// Builds small random patterns within the supported syntax over a tiny alphabet.
struct PatternGenerator {
    var random: SplitMix64

    private static let atoms = [
        "a", "b", "A", "B", ".", "[ab]", "[^a]", "[a-b]", "[^bA]", "[B-a]", "\\d", "\\w", "\\s", "\\W", "\\.",
    ]
    private static let quantifiers = ["*", "+", "?", "{2}", "{0,}", "{1,}", "{0,2}", "{1,3}", "{2,2}"]

    mutating func pick(_ options: [String]) -> String {
        options[Int.random(in: 0..<options.count, using: &random)]
    }

    mutating func pattern(depth: Int = 3) -> String {
        let choice = depth == 0 ? 0 : Int.random(in: 0..<7, using: &random)
        switch choice {
        case 0, 1: return pick(Self.atoms)
        case 2: return pattern(depth: depth - 1) + pattern(depth: depth - 1)
        case 3: return pattern(depth: depth - 1) + "|" + pattern(depth: depth - 1)
        case 4: return pick(["(", "(?:"]) + pattern(depth: depth - 1) + ")"
        case 5:
            let body =
                Bool.random(using: &random)
                ? pick(Self.atoms) : pick(["(", "(?:"]) + pattern(depth: depth - 1) + ")"
            return body + pick(Self.quantifiers) + (Int.random(in: 0..<4, using: &random) == 0 ? "?" : "")
        default:
            return pick(["^", "$", ""]) + pattern(depth: depth - 1) + pick(["$", ""])
        }
    }

    mutating func input() -> String {
        let length = Int.random(in: 0...6, using: &random)
        return String((0..<length).map { _ in Character(pick(["a", "b", "A", "B", "1", " ", "."])) })
    }
}

@Suite("BoundedRegex agrees with NSRegularExpression")
struct RegexOracleTests {
    @Test("200 seeded random patterns × 25 inputs")
    func agreesWithFoundation() throws {
        var generator = PatternGenerator(random: SplitMix64(seed: 0x70_6E_69_67_68_74))
        var agreed = (matched: 0, unmatched: 0)
        for _ in 0..<200 {
            let pattern = generator.pattern()
            let ours = try BoundedRegex(pattern)
            let oracle = try NSRegularExpression(pattern: "^(?:\(pattern))$", options: [.caseInsensitive])
            let inputs = ["", "a", "ab", "AB1"] + (0..<21).map { _ in generator.input() }
            for input in inputs {
                let range = NSRange(location: 0, length: input.utf16.count)
                let expected = oracle.firstMatch(in: input, options: [], range: range) != nil
                let actual = ours.matches(input)
                #expect(actual == expected, "/\(pattern)/ on \"\(input)\"")
                if actual == expected {
                    if expected { agreed.matched += 1 } else { agreed.unmatched += 1 }
                }
            }
        }
        // The table must exercise both answers substantially, or it proves little.
        #expect(agreed.matched >= 500)
        #expect(agreed.unmatched >= 500)
    }
}
