/// A parsed pattern. Groups keep no captures: only whole-match yes/no matters.
indirect enum RegexNode: Sendable, Equatable {
    /// Matches the empty string.
    case empty
    /// One character.
    case literal(Character)
    /// `.`: any character except a line break.
    case anyExceptNewline
    /// A bracket class or a `\d`-style escape.
    case set(CharacterClass)
    /// `^`.
    case startAnchor
    /// `$`.
    case endAnchor
    /// Each node in turn.
    case concatenation([RegexNode])
    /// Any one of the nodes.
    case alternation([RegexNode])
    /// The node `min` to `max` times (`max == nil`: unbounded).
    case repetition(RegexNode, min: Int, max: Int?)
}

/// A recursive-descent parser over the pattern's characters.
struct RegexParser {
    private let characters: [Character]
    private var index = 0
    private var depth = 0

    /// Parses `pattern`, refusing unsupported syntax with a located error.
    static func parse(_ pattern: String) throws(BoundedRegex.Error) -> RegexNode {
        var parser = RegexParser(characters: Array(pattern))
        let node = try parser.parseAlternation()
        if parser.index < parser.characters.count {
            // parseAlternation only stops early at a ')'.
            throw .unmatchedClosingParenthesis(offset: parser.index)
        }
        return node
    }

    private init(characters: [Character]) {
        self.characters = characters
    }

    private func peek(_ ahead: Int = 0) -> Character? {
        let position = index + ahead
        return position < characters.count ? characters[position] : nil
    }

    private static func isQuantifierStart(_ character: Character?) -> Bool {
        character == "*" || character == "+" || character == "?" || character == "{"
    }

    private mutating func parseAlternation() throws(BoundedRegex.Error) -> RegexNode {
        var branches = [try parseConcatenation()]
        while peek() == "|" {
            index += 1
            branches.append(try parseConcatenation())
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    private mutating func parseConcatenation() throws(BoundedRegex.Error) -> RegexNode {
        var items: [RegexNode] = []
        while let next = peek(), next != "|", next != ")" {
            if Self.isQuantifierStart(next) { throw .danglingQuantifier(offset: index) }
            let atom = try parseAtom()
            items.append(try parseQuantifier(applyingTo: atom))
        }
        switch items.count {
        case 0: return .empty
        case 1: return items[0]
        default: return .concatenation(items)
        }
    }

    /// Wraps `atom` in the quantifier that follows it, if any.
    private mutating func parseQuantifier(applyingTo atom: RegexNode) throws(BoundedRegex.Error) -> RegexNode {
        guard let next = peek(), Self.isQuantifierStart(next) else { return atom }
        let start = index
        let bounds: (min: Int, max: Int?)
        switch next {
        case "*": bounds = (0, nil); index += 1
        case "+": bounds = (1, nil); index += 1
        case "?": bounds = (0, 1); index += 1
        default: bounds = try parseBraces()
        }
        if atom == .startAnchor || atom == .endAnchor { throw .danglingQuantifier(offset: start) }
        if peek() == "?" { index += 1 }  // lazy: same yes/no answer as greedy
        if Self.isQuantifierStart(peek()) { throw .nestedQuantifier(offset: index) }
        return .repetition(atom, min: bounds.min, max: bounds.max)
    }

    /// Parses `{m}`, `{m,}` or `{m,n}` starting at the `{`.
    private mutating func parseBraces() throws(BoundedRegex.Error) -> (min: Int, max: Int?) {
        let start = index
        index += 1
        guard let min = parseCount() else { throw .malformedRepetition(offset: start) }
        var max: Int? = min
        if peek() == "," {
            index += 1
            max = parseCount()
        }
        guard peek() == "}" else { throw .malformedRepetition(offset: start) }
        index += 1
        let limit = BoundedRegex.maxRepetitionCount
        if min > limit || (max ?? 0) > limit { throw .repetitionTooLarge(offset: start, limit: limit) }
        if let max, max < min { throw .reversedRepetition(offset: start, min: min, max: max) }
        return (min, max)
    }

    /// Reads ASCII digits; saturates just above the repetition limit.
    private mutating func parseCount() -> Int? {
        var value: Int?
        while let digit = peek(), digit.isASCII, let number = digit.wholeNumberValue {
            value = Swift.min((value ?? 0) * 10 + number, BoundedRegex.maxRepetitionCount + 1)
            index += 1
        }
        return value
    }

    private mutating func parseAtom() throws(BoundedRegex.Error) -> RegexNode {
        let start = index
        let character = characters[index]
        index += 1
        switch character {
        case "(": return try parseGroup(openedAt: start)
        case "[": return try parseBracket(openedAt: start)
        case ".": return .anyExceptNewline
        case "^": return .startAnchor
        case "$": return .endAnchor
        case "\\":
            switch try parseEscape(at: start) {
            case .character(let literal): return .literal(literal)
            case let item: return .set(CharacterClass(items: [item], negated: false))
            }
        default: return .literal(character)
        }
    }

    /// Parses a group after its `(`; only `(...)` and `(?:...)` are accepted.
    private mutating func parseGroup(openedAt start: Int) throws(BoundedRegex.Error) -> RegexNode {
        if peek() == "?" {
            switch peek(1) {
            case ":": index += 2
            case "=", "!": throw .lookaround(offset: start)
            case "<" where peek(2) == "=" || peek(2) == "!": throw .lookaround(offset: start)
            case "<", "P", "'": throw .namedGroup(offset: start)
            default: throw .unsupportedGroup(offset: start)
            }
        }
        guard depth < BoundedRegex.maxGroupDepth else {
            throw .nestingTooDeep(offset: start, limit: BoundedRegex.maxGroupDepth)
        }
        depth += 1
        let inner = try parseAlternation()
        depth -= 1
        guard peek() == ")" else { throw .unmatchedOpeningParenthesis(offset: start) }
        index += 1
        return inner
    }

    /// Parses a bracket class after its `[`.
    private mutating func parseBracket(openedAt start: Int) throws(BoundedRegex.Error) -> RegexNode {
        let negated = peek() == "^"
        if negated { index += 1 }
        var items: [CharacterClass.Item] = []
        while true {
            guard let next = peek() else { throw .unterminatedBracket(offset: start) }
            if next == "]" { break }
            let itemStart = index
            let lower = try parseBracketMember()
            guard peek() == "-", let afterDash = peek(1), afterDash != "]" else {
                items.append(lower)
                continue
            }
            index += 1
            let upper = try parseBracketMember()
            guard case .character(let low) = lower, case .character(let high) = upper, low <= high else {
                throw .invalidRange(offset: itemStart)
            }
            items.append(.range(low, high))
        }
        index += 1
        if items.isEmpty { throw .emptyBracket(offset: start) }
        return .set(CharacterClass(items: items, negated: negated))
    }

    /// One member of a bracket class: a character or an escape.
    private mutating func parseBracketMember() throws(BoundedRegex.Error) -> CharacterClass.Item {
        let start = index
        let character = characters[index]
        index += 1
        switch character {
        case "[": throw .nestedBracket(offset: start)
        case "\\": return try parseEscape(at: start)
        default: return .character(character)
        }
    }

    /// Parses the escape whose backslash is at `start` (the index is just past it).
    private mutating func parseEscape(at start: Int) throws(BoundedRegex.Error) -> CharacterClass.Item {
        guard let escaped = peek() else { throw .trailingBackslash(offset: start) }
        index += 1
        switch escaped {
        case "d": return .property(.digit, negated: false)
        case "D": return .property(.digit, negated: true)
        case "w": return .property(.word, negated: false)
        case "W": return .property(.word, negated: true)
        case "s": return .property(.space, negated: false)
        case "S": return .property(.space, negated: true)
        case "t": return .character("\t")
        case "n": return .character("\n")
        case "r": return .character("\r")
        case "f": return .character("\u{0C}")
        case "1"..."9", "k": throw .backreference(offset: start)
        default:
            if escaped.isLetter || escaped.isNumber { throw .unsupportedEscape(offset: start, escape: escaped) }
            return .character(escaped)
        }
    }
}
