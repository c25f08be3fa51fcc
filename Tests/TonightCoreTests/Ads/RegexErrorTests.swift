import Testing

@testable import TonightCore

/// A refused pattern, its expected error, and a phrase the message must contain.
struct RefusalCase: Sendable, CustomTestStringConvertible {
    let pattern: String
    let error: BoundedRegex.Error
    let phrase: String

    init(_ pattern: String, _ error: BoundedRegex.Error, _ phrase: String) {
        self.pattern = pattern
        self.error = error
        self.phrase = phrase
    }

    var testDescription: String { "/\(pattern)/" }
}

private func nested(_ depth: Int) -> String {
    String(repeating: "(", count: depth) + "a" + String(repeating: ")", count: depth)
}

@Suite("BoundedRegex refusals")
struct RegexErrorTests {
    @Test(
        "each refusal gives the right error and a clear message",
        arguments: [
            RefusalCase("a\\1", .backreference(offset: 1), "backreference"),
            RefusalCase("(a)\\k<x>", .backreference(offset: 3), "backreference"),
            RefusalCase("(?=a)", .lookaround(offset: 0), "lookahead or lookbehind"),
            RefusalCase("(?!a)b", .lookaround(offset: 0), "lookahead"),
            RefusalCase("a(?<=b)", .lookaround(offset: 1), "lookbehind"),
            RefusalCase("(?<!b)a", .lookaround(offset: 0), "lookbehind"),
            RefusalCase("(?<name>a)", .namedGroup(offset: 0), "named group"),
            RefusalCase("x(?P<n>a)", .namedGroup(offset: 1), "named group"),
            RefusalCase("(?'n'a)", .namedGroup(offset: 0), "named group"),
            RefusalCase("(?i)a", .unsupportedGroup(offset: 0), "only '(?:...)'"),
            RefusalCase("(?>a)", .unsupportedGroup(offset: 0), "not supported"),
            RefusalCase("(ab", .unmatchedOpeningParenthesis(offset: 0), "never closed"),
            RefusalCase("a(b(c)", .unmatchedOpeningParenthesis(offset: 1), "never closed"),
            RefusalCase("ab)", .unmatchedClosingParenthesis(offset: 2), "no matching '('"),
            RefusalCase(")", .unmatchedClosingParenthesis(offset: 0), "no matching"),
            RefusalCase("[ab", .unterminatedBracket(offset: 0), "never closed"),
            RefusalCase("x[^", .unterminatedBracket(offset: 1), "never closed"),
            RefusalCase("[a-", .unterminatedBracket(offset: 0), "'['"),
            RefusalCase("[]", .emptyBracket(offset: 0), "empty character class"),
            RefusalCase("[^]", .emptyBracket(offset: 0), "empty"),
            RefusalCase("[[a]]", .nestedBracket(offset: 1), "inside a character class"),
            RefusalCase("[[:alpha:]]", .nestedBracket(offset: 1), "'\\['"),
            RefusalCase("[z-a]", .invalidRange(offset: 1), "increasing order"),
            RefusalCase("[\\d-z]", .invalidRange(offset: 1), "invalid range"),
            RefusalCase("*a", .danglingQuantifier(offset: 0), "nothing to repeat"),
            RefusalCase("a|*b", .danglingQuantifier(offset: 2), "nothing to repeat"),
            RefusalCase("(+a)", .danglingQuantifier(offset: 1), "nothing to repeat"),
            RefusalCase("{2}", .danglingQuantifier(offset: 0), "nothing to repeat"),
            RefusalCase("^*", .danglingQuantifier(offset: 1), "nothing to repeat"),
            RefusalCase("a$+", .danglingQuantifier(offset: 2), "nothing to repeat"),
            RefusalCase("a**", .nestedQuantifier(offset: 2), "follows another quantifier"),
            RefusalCase("a*+", .nestedQuantifier(offset: 2), "follows another quantifier"),
            RefusalCase("a{2}{3}", .nestedQuantifier(offset: 4), "another quantifier"),
            RefusalCase("a???", .nestedQuantifier(offset: 3), "another quantifier"),
            RefusalCase("a{", .malformedRepetition(offset: 1), "{m,n}"),
            RefusalCase("a{x}", .malformedRepetition(offset: 1), "'\\{'"),
            RefusalCase("a{,3}", .malformedRepetition(offset: 1), "malformed"),
            RefusalCase("a{2,3", .malformedRepetition(offset: 1), "malformed"),
            RefusalCase("a{3,2}", .reversedRepetition(offset: 1, min: 3, max: 2), "{3,2}"),
            RefusalCase("a{1001}", .repetitionTooLarge(offset: 1, limit: 1_000), "limit of 1000"),
            RefusalCase("a{1,1001}", .repetitionTooLarge(offset: 1, limit: 1_000), "exceeds"),
            RefusalCase("a{99999999999999999999999}", .repetitionTooLarge(offset: 1, limit: 1_000), "exceeds"),
            RefusalCase("\\b", .unsupportedEscape(offset: 0, escape: "b"), "'\\b'"),
            RefusalCase("a\\p{L}", .unsupportedEscape(offset: 1, escape: "p"), "not supported"),
            RefusalCase("\\0", .unsupportedEscape(offset: 0, escape: "0"), "'\\0'"),
            RefusalCase("[\\b]", .unsupportedEscape(offset: 1, escape: "b"), "escape"),
            RefusalCase("abc\\", .trailingBackslash(offset: 3), "unfinished escape"),
            RefusalCase(
                String(repeating: "a", count: 1_001), .patternTooLong(length: 1_001, limit: 1_000), "limit is 1000"),
            RefusalCase("(a{1000}){1000}", .programTooLarge(limit: 20_000), "more than 20000 instructions"),
            RefusalCase("((a{1000}){1000}){1000}", .programTooLarge(limit: 20_000), "simplify"),
            RefusalCase("(a{100}){200}", .programTooLarge(limit: 20_000), "instructions"),
            RefusalCase(nested(101), .nestingTooDeep(offset: 100, limit: 100), "nested more than 100"),
        ])
    func refusal(_ item: RefusalCase) {
        do {
            let regex = try BoundedRegex(item.pattern)
            Issue.record("accepted \(regex.pattern)")
        } catch {
            #expect(error == item.error)
            #expect(error.description.contains(item.phrase), "\(error)")
            if let offset = error.offset {
                #expect(error.description.contains("offset \(offset)") || error.description.contains("\(offset)"))
            }
        }
    }

    @Test(
        "limits are inclusive",
        arguments: [
            "a{1000}", "a{0,1000}", String(repeating: "a", count: 1_000), "(a{100}){199}", nested(100), "",
        ])
    func atTheLimit(_ pattern: String) throws {
        let regex = try BoundedRegex(pattern)
        #expect(regex.programSize <= BoundedRegex.maxProgramSize)
    }

    @Test("offsets count characters, not bytes")
    func characterOffsets() {
        #expect(throws: BoundedRegex.Error.backreference(offset: 3)) { try BoundedRegex("é🎉é\\2") }
    }
}
