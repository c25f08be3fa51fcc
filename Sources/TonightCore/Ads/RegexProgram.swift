/// One instruction of a compiled Thompson NFA program.
enum Instruction: Sendable, Equatable {
    /// Consume one character whose comparison key equals this one.
    case character(String)
    /// Consume any character except a line break.
    case anyExceptNewline
    /// Consume one character of the class.
    case set(CharacterClass)
    /// Continue at both targets.
    case split(Int, Int)
    /// Continue at the target.
    case jump(Int)
    /// Continue only at the start of the input.
    case assertStart
    /// Continue only at the end of the input.
    case assertEnd
    /// The whole pattern has matched.
    case match

    /// Whether this instruction consumes `symbol` (non-consuming ones never do).
    func consumes(_ symbol: InputSymbol) -> Bool {
        switch self {
        case .character(let key): key == symbol.key
        case .anyExceptNewline: !symbol.character.isNewline
        case .set(let set): set.contains(symbol)
        case .split, .jump, .assertStart, .assertEnd, .match: false
        }
    }
}

/// A Unicode property class behind `\d`, `\w` and `\s`, decided by a character's first scalar.
enum PropertyClass: Sendable, Equatable {
    case digit, word, space

    func contains(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first else { return false }
        let properties = scalar.properties
        switch self {
        case .digit:
            return properties.generalCategory == .decimalNumber
        case .space:
            return properties.isWhitespace
        case .word:
            switch properties.generalCategory {
            case .decimalNumber, .connectorPunctuation, .nonspacingMark, .spacingMark, .enclosingMark:
                return true
            default:
                return properties.isAlphabetic || properties.isJoinControl
            }
        }
    }
}

/// A set of characters: a bracket class or a `\d`-style escape.
struct CharacterClass: Sendable, Equatable {
    /// One member of the class.
    enum Item: Sendable, Equatable {
        case character(Character)
        case range(Character, Character)
        case property(PropertyClass, negated: Bool)

        func contains(_ character: Character) -> Bool {
            switch self {
            case .character(let member): member == character
            case .range(let low, let high): low <= character && character <= high
            case .property(let property, let negated): property.contains(character) != negated
            }
        }
    }

    var items: [Item]
    var negated: Bool

    /// Membership of the symbol's character or, when case-insensitive, of one of its case variants.
    func contains(_ symbol: InputSymbol) -> Bool {
        let found = hasMember(symbol.character) || symbol.variants.contains(where: hasMember)
        return found != negated
    }

    private func hasMember(_ character: Character) -> Bool {
        items.contains { $0.contains(character) }
    }
}

/// Compiles a parsed pattern to a program, refusing programs that would be too large.
enum RegexCompiler {
    static func compile(_ node: RegexNode, caseInsensitive: Bool) throws(BoundedRegex.Error) -> [Instruction] {
        let limit = BoundedRegex.maxProgramSize
        // Size first (saturating), so huge repetitions are refused before any expansion.
        guard size(of: node, cap: limit) + 1 <= limit else { throw .programTooLarge(limit: limit) }
        var emitter = Emitter(caseInsensitive: caseInsensitive)
        emitter.emit(node)
        emitter.program.append(.match)
        return emitter.program
    }

    /// The number of instructions `emit` produces for `node`, or any value above `cap` if more.
    static func size(of node: RegexNode, cap: Int) -> Int {
        func bounded(_ value: Int) -> Int { min(value, cap + 1) }
        switch node {
        case .empty:
            return 0
        case .literal, .anyExceptNewline, .set, .startAnchor, .endAnchor:
            return 1
        case .concatenation(let nodes):
            return nodes.reduce(0) { bounded($0 + size(of: $1, cap: cap)) }
        case .alternation(let nodes):
            return nodes.reduce(2 * (nodes.count - 1)) { bounded($0 + size(of: $1, cap: cap)) }
        case .repetition(let body, let minimum, let maximum):
            let body = size(of: body, cap: cap)
            guard let maximum else {
                return minimum == 0 ? bounded(body + 2) : bounded(minimum * body + 1)
            }
            return bounded(minimum * body + (maximum - minimum) * (body + 1))
        }
    }

    private struct Emitter {
        let caseInsensitive: Bool
        var program: [Instruction] = []

        mutating func emit(_ node: RegexNode) {
            switch node {
            case .empty:
                break
            case .literal(let character):
                program.append(.character(caseInsensitive ? character.lowercased() : String(character)))
            case .anyExceptNewline:
                program.append(.anyExceptNewline)
            case .set(let set):
                program.append(.set(set))
            case .startAnchor:
                program.append(.assertStart)
            case .endAnchor:
                program.append(.assertEnd)
            case .concatenation(let nodes):
                for node in nodes { emit(node) }
            case .alternation(let nodes):
                emitAlternation(nodes)
            case .repetition(let body, let minimum, let maximum):
                emitRepetition(body, minimum: minimum, maximum: maximum)
            }
        }

        /// `split L1, L2; L1: a; jump end; L2: split …; last branch; end:`
        private mutating func emitAlternation(_ branches: [RegexNode]) {
            var jumps: [Int] = []
            for branch in branches.dropLast() {
                let split = program.count
                program.append(.split(split + 1, -1))
                emit(branch)
                jumps.append(program.count)
                program.append(.jump(-1))
                program[split] = .split(split + 1, program.count)
            }
            if let last = branches.last { emit(last) }
            for jump in jumps { program[jump] = .jump(program.count) }
        }

        /// `min` copies, then either a loop (`{m,}`) or `max - min` optional copies.
        private mutating func emitRepetition(_ body: RegexNode, minimum: Int, maximum: Int?) {
            guard let maximum else {
                if minimum == 0 {
                    // loop: split body, end; body; jump loop
                    let loop = program.count
                    program.append(.split(loop + 1, -1))
                    emit(body)
                    program.append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                } else {
                    // body{min-1}, then body+ as: loop: body; split loop, next
                    for _ in 1..<minimum { emit(body) }
                    let loop = program.count
                    emit(body)
                    program.append(.split(loop, program.count + 1))
                }
                return
            }
            for _ in 0..<minimum { emit(body) }
            var skips: [Int] = []
            for _ in minimum..<maximum {
                skips.append(program.count)
                program.append(.split(program.count + 1, -1))
                emit(body)
            }
            for skip in skips { program[skip] = .split(skip + 1, program.count) }
        }
    }
}
