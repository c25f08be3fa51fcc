/// A small regular-expression engine whose matching time is linear in the input.
///
/// Patterns are parsed (see `RegexParser`), compiled to a Thompson NFA program
/// (see `RegexCompiler`) and run by a Pike VM that advances every live thread in
/// lock-step over the input. Nothing ever backtracks, so catastrophic patterns
/// such as `(a+)+$` cost the same as any other pattern of their size.
///
/// Decisions:
/// - **Unit of matching**: the input and the pattern are read as `Character`s
///   (extended grapheme clusters), so `.` matches one user-perceived character
///   and `é` matches both its precomposed and decomposed spellings. Error offsets
///   are 0-based `Character` offsets into the pattern.
/// - **Whole-string**: ``matches(_:)`` succeeds only if the entire input matches,
///   as with NSPredicate `MATCHES`; no anchors are needed.
/// - **Anchors**: `^` and `$` are zero-width assertions for "at the start" and
///   "at the end" of the input. At the ends of the pattern they are no-ops; in the
///   middle (`a^b`) they can only succeed where that position is the start/end.
///   They cannot be quantified.
/// - **Lazy quantifiers** (`*?`, `+?`, `??`, `{m,n}?`) are accepted and behave
///   like the greedy ones: only the yes/no answer of a whole match matters.
///   A quantifier directly after another one (`a**`, possessive `a*+`) is refused.
/// - **Case-insensitivity** compares `Character.lowercased()` of the pattern and
///   the input (simple, per-character folding: `ZÜRICH` matches `zürich`, but `ß`
///   does not match `ss`). Classes also try the input's upper- and lower-case forms.
/// - **`.`** matches any character except a line break (`Character.isNewline`),
///   as in ICU. `\d` is a decimal digit, `\w` is alphabetic, mark, decimal digit,
///   connector punctuation or join control, `\s` is white space — each decided
///   by the character's first Unicode scalar.
/// - **Limits**: see ``maxPatternLength``, ``maxRepetitionCount``,
///   ``maxProgramSize`` and ``maxGroupDepth``.
public struct BoundedRegex: Sendable, Equatable {
    /// The longest pattern accepted, in characters.
    public static let maxPatternLength = 1_000
    /// The largest count accepted in `{m}`, `{m,}` and `{m,n}`.
    public static let maxRepetitionCount = 1_000
    /// The largest compiled program accepted, in VM instructions.
    public static let maxProgramSize = 20_000
    /// The deepest nesting of groups accepted.
    public static let maxGroupDepth = 100

    /// The pattern as given to the initializer.
    public let pattern: String
    /// Whether letters match regardless of case.
    public let caseInsensitive: Bool
    private let program: [Instruction]

    /// Parses and compiles `pattern`, refusing anything outside the supported syntax or limits.
    public init(_ pattern: String, caseInsensitive: Bool = true) throws(BoundedRegex.Error) {
        let length = pattern.count
        guard length <= Self.maxPatternLength else {
            throw .patternTooLong(length: length, limit: Self.maxPatternLength)
        }
        let tree = try RegexParser.parse(pattern)
        self.pattern = pattern
        self.caseInsensitive = caseInsensitive
        self.program = try RegexCompiler.compile(tree, caseInsensitive: caseInsensitive)
    }

    /// The number of instructions in the compiled program (including the final `match`).
    public var programSize: Int { program.count }

    /// The most VM steps a match against `length` input characters can take:
    /// `programSize × (length + 1)`.
    ///
    /// A step is one thread added to the thread list of one input position. Each
    /// instruction enters a position's list at most once and there are `length + 1`
    /// positions, so this bound always holds; the other work per step is constant
    /// (or proportional to the size of one character class).
    public func stepBound(forInputLength length: Int) -> Int {
        programSize * (length + 1)
    }

    /// Whether the whole of `text` matches the pattern.
    public func matches(_ text: String) -> Bool {
        matchWithSteps(text).matched
    }

    /// Whether the whole of `text` matches, and the number of VM steps taken
    /// (never more than ``stepBound(forInputLength:)`` of `text.count`).
    public func matchWithSteps(_ text: String) -> (matched: Bool, steps: Int) {
        var vm = PikeVM(program: program, caseInsensitive: caseInsensitive)
        let matched = vm.run(Array(text))
        return (matched, vm.steps)
    }
}

/// Runs a compiled program over the input, all threads in lock-step.
private struct PikeVM {
    let program: [Instruction]
    let caseInsensitive: Bool
    /// The number of threads added so far, over all positions.
    private(set) var steps = 0
    /// `marks[pc] == position` when `pc` is already in the list for `position`.
    private var marks: [Int]
    private var stack: [Int] = []

    init(program: [Instruction], caseInsensitive: Bool) {
        self.program = program
        self.caseInsensitive = caseInsensitive
        self.marks = Array(repeating: -1, count: program.count)
    }

    mutating func run(_ input: [Character]) -> Bool {
        let end = input.count
        var current: [Int] = []
        var next: [Int] = []
        addThread(0, at: 0, end: end, into: &current)
        for position in 0..<end {
            if current.isEmpty { return false }
            let symbol = InputSymbol(input[position], caseInsensitive: caseInsensitive)
            next.removeAll(keepingCapacity: true)
            for pc in current where program[pc].consumes(symbol) {
                addThread(pc + 1, at: position + 1, end: end, into: &next)
            }
            swap(&current, &next)
        }
        return current.contains { program[$0] == .match }
    }

    /// Adds `start` and everything reachable from it without consuming input.
    private mutating func addThread(_ start: Int, at position: Int, end: Int, into list: inout [Int]) {
        stack.append(start)
        while let pc = stack.popLast() {
            guard marks[pc] != position else { continue }
            marks[pc] = position
            steps += 1
            list.append(pc)
            switch program[pc] {
            case .jump(let target):
                stack.append(target)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .assertStart where position == 0, .assertEnd where position == end:
                stack.append(pc + 1)
            default:
                break
            }
        }
    }
}

/// One input character, prepared once per position for every thread.
struct InputSymbol {
    /// The character itself.
    let character: Character
    /// The comparison key: lowercased when case-insensitive.
    let key: String
    /// Single-character lower/upper-case forms, tried by character classes.
    let variants: [Character]

    init(_ character: Character, caseInsensitive: Bool) {
        self.character = character
        guard caseInsensitive else {
            key = String(character)
            variants = []
            return
        }
        let lower = character.lowercased()
        key = lower
        variants = [lower, character.uppercased()].compactMap { $0.count == 1 ? $0.first : nil }
    }
}
