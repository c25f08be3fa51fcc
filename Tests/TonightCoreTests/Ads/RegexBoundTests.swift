import Testing

@testable import TonightCore

/// A catastrophic-backtracking pattern, an input, and the expected answer.
struct BoundCase: Sendable, CustomTestStringConvertible {
    let pattern: String
    let input: String
    let expected: Bool

    var testDescription: String { "/\(pattern)/ on \(input.count) characters → \(expected)" }
}

private let manyA = String(repeating: "a", count: 50_000)

@Suite("BoundedRegex linear step bound")
struct RegexBoundTests {
    @Test(
        "catastrophic patterns finish within programSize × (n + 1) steps",
        arguments: [
            BoundCase(pattern: "(a+)+$", input: String(repeating: "a", count: 20_000) + "!", expected: false),
            BoundCase(pattern: "(a+)+$", input: String(repeating: "a", count: 20_000), expected: true),
            BoundCase(pattern: "(a|aa)*b", input: manyA, expected: false),
            BoundCase(pattern: "(a|aa)*b", input: manyA + "b", expected: true),
            BoundCase(pattern: "(a*)*c", input: String(repeating: "a", count: 30_000), expected: false),
            BoundCase(pattern: "(.*a){20}", input: String(repeating: "a", count: 10_000), expected: true),
            BoundCase(pattern: "(.*a){20}", input: String(repeating: "ab", count: 5_000) + "c", expected: false),
            BoundCase(pattern: "(x+x+)+y", input: String(repeating: "x", count: 10_000), expected: false),
        ])
    func catastrophic(_ item: BoundCase) throws {
        let regex = try BoundedRegex(item.pattern)
        let result = regex.matchWithSteps(item.input)
        #expect(result.matched == item.expected)
        #expect(result.steps <= regex.stepBound(forInputLength: item.input.count))
        #expect(regex.stepBound(forInputLength: item.input.count) == regex.programSize * (item.input.count + 1))
    }

    @Test(
        "each extra input character costs the same number of steps",
        arguments: [
            "(a+)+$", "(a|aa)*b", "(a*)*c", "(.*a){20}",
        ])
    func linearGrowth(_ pattern: String) throws {
        let regex = try BoundedRegex(pattern)
        let steps = [1_000, 2_000, 3_000].map { regex.matchWithSteps(String(repeating: "a", count: $0)).steps }
        // After a short warm-up every position holds the same threads: exact linear growth.
        #expect(steps[2] - steps[1] == steps[1] - steps[0])
        #expect(steps[1] - steps[0] <= regex.programSize * 1_000)
        #expect(steps[0] > 1_000)
    }

    @Test("a step is one thread entering one position's list")
    func stepCounting() throws {
        // "abc": one thread per position 0...3, the last one at `match`.
        #expect(try BoundedRegex("abc").matchWithSteps("abc") == (matched: true, steps: 4))
        // No thread survives a wrong first character, so no further steps are taken.
        #expect(try BoundedRegex("abc").matchWithSteps("xbc") == (matched: false, steps: 1))
        // "a*" on "": the split, the "a" and the match enter position 0 once each.
        #expect(try BoundedRegex("a*").matchWithSteps("") == (matched: true, steps: 3))
    }
}
