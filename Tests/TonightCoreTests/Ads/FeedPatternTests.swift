import Testing

@testable import TonightCore

@Suite("FeedPattern")
struct FeedPatternTests {
    @Test("a:(Halifax|Sydney) targets those all feeds only")
    func seedExample() throws {
        let pattern = try FeedPattern("a:(Halifax|Sydney)")
        #expect(pattern.kind == .all)
        #expect(pattern.source == "a:(Halifax|Sydney)")
        #expect(pattern.regex.pattern == "(Halifax|Sydney)")
        #expect(pattern.matches(kind: .all, name: "Halifax"))
        #expect(pattern.matches(kind: .all, name: "sydney"))
        #expect(!pattern.matches(kind: .all, name: "Antigonish"))
        #expect(!pattern.matches(kind: .all, name: "Halifax North"))
        #expect(!pattern.matches(kind: .pregame, name: "Halifax"))
        #expect(!pattern.matches(kind: .place, name: "Sydney"))
    }

    @Test("the ':' separator is optional and only one is skipped")
    func separator() throws {
        let bare = try FeedPattern("aHalifax")
        #expect(bare.kind == .all)
        #expect(bare.regex.pattern == "Halifax")
        #expect(bare.matches(kind: .all, name: "HALIFAX"))
        #expect(!bare.matches(kind: .all, name: ":Halifax"))
        let doubled = try FeedPattern("a::x")
        #expect(doubled.regex.pattern == ":x")
        #expect(doubled.matches(kind: .all, name: ":x"))
        #expect(!doubled.matches(kind: .all, name: "x"))
    }

    @Test("every kind character")
    func kinds() throws {
        let pregame = try FeedPattern("p.*")
        #expect(pregame.kind == .pregame)
        #expect(pregame.matches(kind: .pregame, name: "Anywhere at all"))
        #expect(!pregame.matches(kind: .all, name: "Halifax"))
        let venue = try FeedPattern("v:Club.*")
        #expect(venue.kind == .place)
        #expect(venue.matches(kind: .place, name: "Club Med"))
        #expect(venue.matches(kind: .place, name: "club"))
        #expect(!venue.matches(kind: .place, name: "The Club"))
        #expect(!venue.matches(kind: .pregame, name: "Club Med"))
        #expect(FeedKind.allCases.map(\.rawValue) == ["a", "p", "v"])
    }

    @Test("an empty expression matches only the empty name", arguments: ["a:", "a"])
    func emptyExpression(_ text: String) throws {
        let pattern = try FeedPattern(text)
        #expect(pattern.matches(kind: .all, name: ""))
        #expect(!pattern.matches(kind: .all, name: "Halifax"))
    }

    @Test(
        "refusals",
        arguments: [
            ("", FeedPattern.Error.empty, "empty"),
            ("x:foo", .unknownKind("x"), "'x'"),
            ("A:Halifax", .unknownKind("A"), "'a' (all), 'p' (pregame), 'v' (place)"),
            ("a:(Halifax", .invalidRegex(.unmatchedOpeningParenthesis(offset: 0)), "never closed"),
            ("v:Club\\1", .invalidRegex(.backreference(offset: 4)), "invalid regular expression"),
            ("p*", .invalidRegex(.danglingQuantifier(offset: 0)), "nothing to repeat"),
        ])
    func refusals(_ text: String, _ expected: FeedPattern.Error, _ phrase: String) {
        do {
            _ = try FeedPattern(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error == expected)
            #expect(error.description.contains(phrase), "\(error)")
        }
    }

    @Test("equality follows the saved text")
    func equality() throws {
        #expect(try FeedPattern("a:x") == FeedPattern("a:x"))
        #expect(try FeedPattern("a:x") != FeedPattern("a:y"))
        #expect(try FeedPattern("a:x") != FeedPattern("p:x"))
    }
}
