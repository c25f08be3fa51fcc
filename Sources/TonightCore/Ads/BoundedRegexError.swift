extension BoundedRegex {
    /// Why a pattern was refused. Offsets are 0-based character offsets into the pattern.
    public enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// The pattern is longer than ``BoundedRegex/maxPatternLength``.
        case patternTooLong(length: Int, limit: Int)
        /// A `(` is never closed.
        case unmatchedOpeningParenthesis(offset: Int)
        /// A `)` closes nothing.
        case unmatchedClosingParenthesis(offset: Int)
        /// A `[` is never closed.
        case unterminatedBracket(offset: Int)
        /// `[]` or `[^]`: a class with no members.
        case emptyBracket(offset: Int)
        /// A `[` inside a character class (nested classes, set operations, POSIX classes).
        case nestedBracket(offset: Int)
        /// A class range whose bounds are not single characters in increasing order.
        case invalidRange(offset: Int)
        /// A quantifier with nothing before it to repeat (`*a`, `(+)`, `^*`).
        case danglingQuantifier(offset: Int)
        /// A quantifier right after another one (`a**`, possessive `a*+`).
        case nestedQuantifier(offset: Int)
        /// A `{` that does not form `{m}`, `{m,}` or `{m,n}`.
        case malformedRepetition(offset: Int)
        /// `{m,n}` with `m > n`.
        case reversedRepetition(offset: Int, min: Int, max: Int)
        /// A repetition count above ``BoundedRegex/maxRepetitionCount``.
        case repetitionTooLarge(offset: Int, limit: Int)
        /// A backreference such as `\1` or `\k<name>`.
        case backreference(offset: Int)
        /// A lookahead or lookbehind: `(?=`, `(?!`, `(?<=`, `(?<!`.
        case lookaround(offset: Int)
        /// A named group such as `(?<name>…)`, `(?P<name>…)` or `(?'name'…)`.
        case namedGroup(offset: Int)
        /// Any other `(?…` group: inline flags, atomic groups, comments.
        case unsupportedGroup(offset: Int)
        /// A letter or digit escape that is not supported, such as `\b` or `\p`.
        case unsupportedEscape(offset: Int, escape: Character)
        /// The pattern ends in a lone `\`.
        case trailingBackslash(offset: Int)
        /// Groups nested deeper than ``BoundedRegex/maxGroupDepth``.
        case nestingTooDeep(offset: Int, limit: Int)
        /// The compiled program would exceed ``BoundedRegex/maxProgramSize`` instructions.
        case programTooLarge(limit: Int)

        /// Where in the pattern the problem is, when it has a single place.
        public var offset: Int? {
            switch self {
            case .patternTooLong(_, let limit): limit
            case .unmatchedOpeningParenthesis(let offset), .unmatchedClosingParenthesis(let offset),
                .unterminatedBracket(let offset), .emptyBracket(let offset), .nestedBracket(let offset),
                .invalidRange(let offset), .danglingQuantifier(let offset), .nestedQuantifier(let offset),
                .malformedRepetition(let offset), .reversedRepetition(let offset, _, _),
                .repetitionTooLarge(let offset, _), .backreference(let offset), .lookaround(let offset),
                .namedGroup(let offset), .unsupportedGroup(let offset), .unsupportedEscape(let offset, _),
                .trailingBackslash(let offset), .nestingTooDeep(let offset, _):
                offset
            case .programTooLarge: nil
            }
        }

        /// A human-readable explanation, naming the offset.
        public var description: String {
            switch self {
            case .patternTooLong(let length, let limit):
                "pattern is \(length) characters long; the limit is \(limit)"
            case .unmatchedOpeningParenthesis(let offset):
                "'(' at offset \(offset) is never closed"
            case .unmatchedClosingParenthesis(let offset):
                "')' at offset \(offset) has no matching '('"
            case .unterminatedBracket(let offset):
                "'[' at offset \(offset) is never closed"
            case .emptyBracket(let offset):
                "empty character class at offset \(offset); write '\\]' for a literal ']'"
            case .nestedBracket(let offset):
                "'[' inside a character class at offset \(offset) is not supported; write '\\[' for a literal '['"
            case .invalidRange(let offset):
                "invalid range in character class at offset \(offset); bounds must be single characters in increasing order"
            case .danglingQuantifier(let offset):
                "quantifier at offset \(offset) has nothing to repeat"
            case .nestedQuantifier(let offset):
                "quantifier at offset \(offset) follows another quantifier; put the first one in a group, e.g. '(a*)*'"
            case .malformedRepetition(let offset):
                "malformed repetition at offset \(offset); use {m}, {m,} or {m,n}, or write '\\{' for a literal '{'"
            case .reversedRepetition(let offset, let min, let max):
                "repetition {\(min),\(max)} at offset \(offset) has a minimum greater than its maximum"
            case .repetitionTooLarge(let offset, let limit):
                "repetition count at offset \(offset) exceeds the limit of \(limit)"
            case .backreference(let offset):
                "backreference at offset \(offset) is not supported"
            case .lookaround(let offset):
                "lookahead or lookbehind at offset \(offset) is not supported"
            case .namedGroup(let offset):
                "named group at offset \(offset) is not supported; use '(...)' or '(?:...)'"
            case .unsupportedGroup(let offset):
                "group syntax '(?' at offset \(offset) is not supported; only '(?:...)' is"
            case .unsupportedEscape(let offset, let escape):
                "escape '\\\(escape)' at offset \(offset) is not supported"
            case .trailingBackslash(let offset):
                "pattern ends with an unfinished escape '\\' at offset \(offset)"
            case .nestingTooDeep(let offset, let limit):
                "group at offset \(offset) is nested more than \(limit) deep"
            case .programTooLarge(let limit):
                "pattern expands to more than \(limit) instructions (repetition counts multiply); simplify it"
            }
        }
    }
}
