/// The kind of video feed an advertisement can target; the raw value is the
/// pattern's first character.
public enum FeedKind: String, Sendable, CaseIterable {
    /// A city's "all" feed.
    case all = "a"
    /// A city's "pregame" feed.
    case pregame = "p"
    /// A venue's (place's) feed.
    case place = "v"
}

/// A saved feed pattern such as `a:(Halifax|Sydney)`: a feed-kind character,
/// one optional `:` separator, then a ``BoundedRegex`` that must match the whole
/// feed name, case-insensitively.
///
/// The text is taken as saved: no whitespace is trimmed, and the kind character
/// is case-sensitive (`A` is refused).
public struct FeedPattern: Sendable, Equatable {
    /// The kind of feed this pattern applies to.
    public let kind: FeedKind
    /// The compiled expression for the feed name (the text after the kind and separator).
    public let regex: BoundedRegex
    /// The pattern text as saved.
    public let source: String

    /// Parses and validates a saved pattern.
    public init(_ text: String) throws(FeedPattern.Error) {
        guard let first = text.first else { throw .empty }
        guard let kind = FeedKind(rawValue: String(first)) else { throw .unknownKind(first) }
        var expression = text.dropFirst()
        if expression.first == ":" { expression = expression.dropFirst() }
        do {
            regex = try BoundedRegex(String(expression))
        } catch {
            throw .invalidRegex(error)
        }
        self.kind = kind
        self.source = text
    }

    /// Whether a feed of `kind` called `name` is targeted by this pattern.
    public func matches(kind: FeedKind, name: String) -> Bool {
        self.kind == kind && regex.matches(name)
    }

    /// Why a feed pattern was refused.
    public enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// The pattern is empty.
        case empty
        /// The first character is not a ``FeedKind`` raw value.
        case unknownKind(Character)
        /// The expression after the kind (and `:`) is invalid; its offsets count from
        /// the start of that expression.
        case invalidRegex(BoundedRegex.Error)

        /// A human-readable explanation.
        public var description: String {
            switch self {
            case .empty:
                return "feed pattern is empty; it must start with a feed kind (\(Self.validKinds))"
            case .unknownKind(let character):
                return "unknown feed kind '\(character)'; the first character must be one of \(Self.validKinds)"
            case .invalidRegex(let error):
                return "invalid regular expression after the feed kind: \(error)"
            }
        }

        private static var validKinds: String {
            FeedKind.allCases.map { "'\($0.rawValue)' (\($0))" }.joined(separator: ", ")
        }
    }
}
