import Testing

@testable import TonightCore

/// One pattern/input pair and the expected whole-string answer.
struct MatchCase: Sendable, CustomTestStringConvertible {
    let pattern: String
    let input: String
    let expected: Bool

    init(_ pattern: String, _ input: String, _ expected: Bool) {
        self.pattern = pattern
        self.input = input
        self.expected = expected
    }

    var testDescription: String { "/\(pattern)/ on \"\(input)\" → \(expected)" }
}

private func check(_ cases: [MatchCase], caseInsensitive: Bool = true) throws {
    for item in cases {
        let regex = try BoundedRegex(item.pattern, caseInsensitive: caseInsensitive)
        #expect(regex.matches(item.input) == item.expected, "\(item.testDescription)")
    }
}

@Suite("BoundedRegex syntax")
struct RegexSyntaxTests {
    @Test(
        "literals and dot",
        arguments: [
            MatchCase("abc", "abc", true), MatchCase("abc", "abd", false),
            MatchCase("abc", "ab", false), MatchCase("abc", "abcd", false),
            MatchCase("a.c", "abc", true), MatchCase("a.c", "a-c", true), MatchCase("a.c", "ac", false),
            MatchCase("a.c", "a\nc", false), MatchCase(".", "é", true),
            MatchCase(".", "e\u{301}", true), MatchCase("..", "e\u{301}", false),
            MatchCase("a}", "a}", true), MatchCase("]", "]", true), MatchCase("", "", true), MatchCase("", "a", false),
        ])
    func literals(_ item: MatchCase) throws { try check([item]) }

    @Test(
        "bracket classes, ranges and negation",
        arguments: [
            MatchCase("[abc]", "b", true), MatchCase("[abc]", "d", false), MatchCase("[abc]", "ab", false),
            MatchCase("[a-z]+", "hello", true), MatchCase("[a-z]+", "hello1", false),
            MatchCase("[0-9a-f]{2}", "7e", true), MatchCase("[0-9a-f]{2}", "7g", false),
            MatchCase("[^abc]", "d", true), MatchCase("[^abc]", "a", false), MatchCase("[^abc]", "B", false),
            MatchCase("[^a-z]", "Q", false), MatchCase("[^a-z]", "5", true),
            MatchCase("[a-]", "-", true), MatchCase("[-a]", "-", true), MatchCase("[a-]", "b", false),
            MatchCase("[a\\-z]", "-", true), MatchCase("[a\\-z]", "m", false),
            MatchCase("[\\]\\[]+", "][", true), MatchCase("[\\\\]", "\\", true),
            MatchCase("[\\d_]+", "1_2", true), MatchCase("[\\d_]+", "1-2", false),
            MatchCase("[\\s\\t]", "\t", true), MatchCase("[.]", ".", true), MatchCase("[.]", "x", false),
            MatchCase("[*+?]+", "?*+", true), MatchCase("[^\\W]", "x", true), MatchCase("[^\\W]", "-", false),
        ])
    func classes(_ item: MatchCase) throws { try check([item]) }

    @Test(
        "escapes",
        arguments: [
            MatchCase("\\.", ".", true), MatchCase("\\.", "x", false), MatchCase("\\\\", "\\", true),
            MatchCase("\\(\\)", "()", true), MatchCase("\\*\\+\\?\\{\\}\\[\\]\\|\\^\\$", "*+?{}[]|^$", true),
            MatchCase("\\d+", "2024", true), MatchCase("\\d", "x", false), MatchCase("\\d", "٣", true),
            MatchCase("\\D", "x", true), MatchCase("\\D", "1", false),
            MatchCase("\\w+", "Café_1", true), MatchCase("\\w", "-", false),
            MatchCase("\\W", "-", true), MatchCase("\\W", "a", false),
            MatchCase("\\s", " ", true), MatchCase("\\s", "\t", true), MatchCase("\\s", "x", false),
            MatchCase("\\S", " ", false), MatchCase("\\S", "x", true),
            MatchCase("a\\tb", "a\tb", true), MatchCase("a\\tb", "a b", false), MatchCase("a\\nb", "a\nb", true),
            MatchCase("\\-\\ \\#", "- #", true),
        ])
    func escapes(_ item: MatchCase) throws { try check([item]) }

    @Test(
        "groups and alternation",
        arguments: [
            MatchCase("(ab)+", "ababab", true), MatchCase("(ab)+", "aba", false),
            MatchCase("(?:ab)+", "abab", true), MatchCase("(?:ab)+", "", false),
            MatchCase("()", "", true), MatchCase("(a|b)c", "bc", true), MatchCase("(a|b)c", "cc", false),
            MatchCase("cat|dog", "dog", true), MatchCase("cat|dog", "catdog", false),
            MatchCase("a|", "", true), MatchCase("|a", "a", true), MatchCase("a|b|c", "c", true),
            MatchCase("(Halifax|Sydney)", "Sydney", true), MatchCase("(Halifax|Sydney)", "Antigonish", false),
            MatchCase("((a|b)(c|d))+", "adbc", true), MatchCase("((a|b)(c|d))+", "adb", false),
        ])
    func groups(_ item: MatchCase) throws { try check([item]) }

    @Test(
        "every quantifier form, greedy and lazy",
        arguments: [
            MatchCase("a*", "", true), MatchCase("a*", "aaa", true), MatchCase("a*", "aab", false),
            MatchCase("a+", "", false), MatchCase("a+", "aa", true),
            MatchCase("a?", "", true), MatchCase("a?", "a", true), MatchCase("a?", "aa", false),
            MatchCase("a{3}", "aaa", true), MatchCase("a{3}", "aa", false), MatchCase("a{3}", "aaaa", false),
            MatchCase("a{2,}", "aa", true), MatchCase("a{2,}", "a", false), MatchCase("a{2,}", "aaaaaa", true),
            MatchCase("a{0,}", "", true), MatchCase("a{1,}", "", false),
            MatchCase("a{2,3}", "aaa", true), MatchCase("a{2,3}", "a", false), MatchCase("a{2,3}", "aaaa", false),
            MatchCase("a{0}", "", true), MatchCase("a{0}", "a", false), MatchCase("a{0,1}b", "b", true),
            MatchCase("a*?", "aa", true), MatchCase("a+?", "", false), MatchCase("a??", "a", true),
            MatchCase("a{2,3}?", "aa", true), MatchCase("a{2}?", "aaa", false), MatchCase("a{1,}?b", "aab", true),
            MatchCase("(ab){2}c*", "ababcc", true), MatchCase("[ab]{2,3}", "bab", true),
            MatchCase("[ab]{2,3}", "babb", false),
        ])
    func quantifiers(_ item: MatchCase) throws { try check([item]) }

    @Test(
        "anchors are zero-width start/end assertions",
        arguments: [
            MatchCase("^abc$", "abc", true), MatchCase("^abc", "abc", true), MatchCase("abc$", "abcd", false),
            MatchCase("a^b", "ab", false), MatchCase("a$b", "ab", false),
            MatchCase("(^a|b)c", "ac", true), MatchCase("b(^a|b)c", "bac", false), MatchCase("b(^a|b)c", "bbc", true),
            MatchCase("a(b|$)", "a", true), MatchCase("a($|b)c", "ac", false),
        ])
    func anchors(_ item: MatchCase) throws { try check([item]) }

    @Test(
        "case-insensitive by default, including non-ASCII",
        arguments: [
            MatchCase("HALIFAX", "halifax", true), MatchCase("halifax", "HaLiFaX", true),
            MatchCase("Montréal", "MONTRÉAL", true), MatchCase("montréal", "Montréal", true),
            MatchCase("montréal", "Montreal", false), MatchCase("ZÜRICH", "zürich", true),
            MatchCase("zürich", "ZURICH", false), MatchCase("[a-z]+", "ABC", true), MatchCase("[A-Z]+", "abc", true),
            MatchCase("[é]", "É", true), MatchCase("[^é]", "É", false), MatchCase("ΣΟΦΙΑ", "σοφια", true),
            MatchCase("caf\u{e9}", "CAFE\u{301}", true),
        ])
    func caseInsensitive(_ item: MatchCase) throws { try check([item]) }

    @Test("case-sensitive when asked")
    func caseSensitive() throws {
        try check(
            [
                MatchCase("Halifax", "Halifax", true), MatchCase("Halifax", "halifax", false),
                MatchCase("[a-z]", "A", false), MatchCase("[^a-z]", "A", true), MatchCase("É", "é", false),
            ], caseInsensitive: false)
        #expect(try BoundedRegex("a").caseInsensitive)
        #expect(try !BoundedRegex("a", caseInsensitive: false).caseInsensitive)
    }

    @Test(
        "matching is whole-string, like NSPredicate MATCHES",
        arguments: [
            MatchCase("Halifax", "Halifax North", false), MatchCase("Halifax", "North Halifax", false),
            MatchCase("Hal.*", "Halifax North", true), MatchCase(".*North", "Halifax North", true),
            MatchCase("a|ab", "ab", true), MatchCase("ab|a", "a", true),
        ])
    func wholeString(_ item: MatchCase) throws { try check([item]) }

    @Test("program sizes follow the documented expansion")
    func programSizes() throws {
        let expected: [(String, Int)] = [
            ("", 1), ("abc", 4), ("a*", 4), ("a+", 3), ("a?", 3), ("a{3}", 4), ("a{2,4}", 7),
            ("a{2,}", 4), ("a|b|c", 8), ("(a{10}){10}", 101), ("(a{100}){199}", 19_901), ("^a$", 4),
        ]
        for (pattern, size) in expected {
            #expect(try BoundedRegex(pattern).programSize == size, "\(pattern)")
        }
    }

    @Test("value semantics: equal patterns and flags compare equal")
    func equality() throws {
        #expect(try BoundedRegex("a+") == BoundedRegex("a+"))
        #expect(try BoundedRegex("a+") != BoundedRegex("a*"))
        #expect(try BoundedRegex("a+") != BoundedRegex("a+", caseInsensitive: false))
        #expect(try BoundedRegex("a(b)").pattern == "a(b)")
    }
}
