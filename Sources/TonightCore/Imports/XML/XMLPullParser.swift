// One file on purpose (~890 lines): a streaming XML tokenizer is one state machine over one
// buffer; splitting its states across files would hide the transitions from each other. Passing
// an element by its raw bytes (`skipElement`) moves the same buffer and line count, so it is here too.
import Foundation

/// What ``XMLPullParser/next()`` read.
public enum XMLEvent: Hashable, Sendable {
    /// A start tag; its attributes are readable until the next call. `<a/>` gives a start and an end.
    case startElement(XMLName)
    /// An end tag (or the end of an empty-element tag).
    case endElement(XMLName)
    /// Character data between two tags: entity-decoded, CDATA included, comments and processing
    /// instructions left out, line ends normalised to `\n`. Readable until the next call.
    case text
    /// The end of the document (returned again on every later call).
    case endOfDocument
}

/// A streaming, byte-level XML pull parser for import files.
///
/// It reads UTF-8 input in chunks (a file is never loaded whole), checks well-formedness (one root,
/// matching end tags, legal names, characters and references) and refuses hostile input:
/// - any `<!…>` markup other than comments and CDATA (`<!DOCTYPE`, `<!ENTITY`, …) throws
///   ``ImportError/hostile(_:)`` as soon as it is seen, so no entity can ever be declared or expanded;
/// - a reference to an entity other than the five predefined ones is never expanded: it is left out
///   of the text and reported in ``referenceError`` for that event, so a caller can reject just that record;
/// - text, attributes, names, depth and the name table are bounded by ``Limits``; exceeding one, a syntax
///   error or bytes that are not UTF-8 throw ``ImportError/malformed(position:reason:)``.
///
/// Names are interned: ``XMLEvent/startElement(_:)`` carries an ``XMLName`` to compare with names
/// obtained once from ``name(_:)``. Strings are only built when asked for (``text``, ``attribute(_:)``).
public final class XMLPullParser {
    /// Bounds on what one document may make the parser hold.
    public struct Limits: Sendable {
        /// The most bytes of decoded text between two tags.
        public var maxTextBytes = 1 << 20
        /// The deepest element nesting.
        public var maxDepth = 256
        /// The most attributes on one element.
        public var maxAttributes = 128
        /// The most decoded attribute-value bytes on one element.
        public var maxAttributeBytes = 1 << 20
        /// The longest element, attribute or entity name in bytes.
        public var maxNameBytes = 256
        /// The most distinct element and attribute names in one document.
        public var maxDistinctNames = 16_384
        /// The default limits.
        public init() {}
    }

    /// The default read size: 256 KiB.
    public static let defaultChunkSize = 256 * 1024

    // Byte classes.
    private static let textSpecial: UInt8 = 1
    private static let attributeSpecial: UInt8 = 2
    private static let nameChar: UInt8 = 4
    private static let nameStart: UInt8 = 8
    private static let space: UInt8 = 16

    private let limits: Limits
    private let chunkSize: Int
    private let classes: UnsafeMutablePointer<UInt8>

    // The mutable state below is marked `@exclusivity(unchecked)`: a parser is used by one caller at a time and
    // never hands these properties out `inout`, and the dynamic exclusivity checks on a class's stored properties
    // otherwise cost about 40% of the parse time.

    // Input.
    @exclusivity(unchecked) private var fd: Int32 = -1
    private let path: String
    private let memory: [UInt8]
    @exclusivity(unchecked) private var memoryOffset = 0
    @exclusivity(unchecked) private var atEOF = false
    @exclusivity(unchecked) private var buf: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var end = 0
    @exclusivity(unchecked) private var pos = 0
    /// The input offset of `buf[0]`.
    @exclusivity(unchecked) private var base = 0

    // Output of the current event.
    @exclusivity(unchecked) private var textBuf: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var textCapacity = 4096
    @exclusivity(unchecked) private var textCount = 0
    @exclusivity(unchecked) private var attrBuf: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var attrCapacity = 4096
    @exclusivity(unchecked) private var attrCount = 0
    @exclusivity(unchecked) private var attrNames: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private var attrStarts: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var attrEnds: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var attrNumber = 0

    // Document state.
    @exclusivity(unchecked) private var names = XMLNameTable()
    @exclusivity(unchecked) private var stack: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private var stackCount = 0
    @exclusivity(unchecked) private var pendingEnd = false
    @exclusivity(unchecked) private var rootSeen = false
    @exclusivity(unchecked) private var finished = false
    @exclusivity(unchecked) private var line = 1
    private var started = false

    /// The line (1-based) where the current event began.
    @exclusivity(unchecked) public private(set) var eventLine = 1
    /// The input offset (in bytes) where the current tag's `<` is, for a start or end tag event.
    @exclusivity(unchecked) public private(set) var tagOffset = 0
    /// For a ``XMLEvent/text`` or ``XMLEvent/startElement(_:)`` event: the first reference to an unknown
    /// entity in its text or attribute values (e.g. `unknown entity &xxe;`), which was not expanded.
    @exclusivity(unchecked) public private(set) var referenceError: String?

    /// A parser reading the file at `path`, `chunkSize` bytes at a time.
    /// - Throws: ``ImportError/unreadable(_:)`` when the file cannot be opened.
    public convenience init(path: String, chunkSize: Int = defaultChunkSize, limits: Limits = Limits()) throws {
        self.init(source: [], path: path, chunkSize: chunkSize, limits: limits)
        fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw ImportError.unreadable("\(path): \(String(cString: strerror(errno)))") }
    }

    /// A parser reading `bytes`, handed over `chunkSize` bytes at a time like a file would be.
    public convenience init(bytes: [UInt8], chunkSize: Int = defaultChunkSize, limits: Limits = Limits()) {
        self.init(source: bytes, path: "", chunkSize: chunkSize, limits: limits)
    }

    private init(source: [UInt8], path: String, chunkSize: Int, limits: Limits) {
        self.memory = source
        self.path = path
        self.limits = limits
        self.chunkSize = min(max(1, chunkSize), 1 << 26)
        capacity = self.chunkSize + 4096
        buf = .allocate(capacity: capacity)
        // Capacities never exceed the limits, so every append past a limit goes through a grow that throws.
        textCapacity = max(1, min(textCapacity, limits.maxTextBytes))
        attrCapacity = max(1, min(attrCapacity, limits.maxAttributeBytes))
        textBuf = .allocate(capacity: textCapacity)
        attrBuf = .allocate(capacity: attrCapacity)
        let maxAttributes = max(1, limits.maxAttributes)
        attrNames = .allocate(capacity: maxAttributes)
        attrStarts = .allocate(capacity: maxAttributes)
        attrEnds = .allocate(capacity: maxAttributes)
        stack = .allocate(capacity: max(1, limits.maxDepth))
        classes = .allocate(capacity: 256)
        classes.initialize(repeating: 0, count: 256)
        for b in 0..<256 {
            var c: UInt8 = 0
            if b < 0x20 || b >= 0x80 || b == 0x3C || b == 0x26 { c |= Self.textSpecial | Self.attributeSpecial }
            if b == 0x22 || b == 0x27 { c |= Self.attributeSpecial }
            let letter = (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
            if letter || b == 0x5F || b == 0x3A || b >= 0x80 { c |= Self.nameStart | Self.nameChar }
            if (0x30...0x39).contains(b) || b == 0x2D || b == 0x2E { c |= Self.nameChar }
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { c |= Self.space }
            classes[b] = c
        }
    }

    deinit {
        if fd >= 0 { close(fd) }
        buf.deallocate()
        textBuf.deallocate()
        attrBuf.deallocate()
        attrNames.deallocate()
        attrStarts.deallocate()
        attrEnds.deallocate()
        stack.deallocate()
        classes.deallocate()
    }

    // MARK: Public accessors

    /// The interned name for `string`, to compare with the names in events.
    public func name(_ string: String) -> XMLName {
        let utf8 = Array(string.utf8) + [0]  // never empty, so it has a base address
        return utf8.withUnsafeBufferPointer { p in
            let base = p.baseAddress!, n = p.count - 1
            if let id = names.find(base, n) { return XMLName(id: id) }
            return XMLName(id: names.insert(base, n, string: string))
        }
    }

    /// The spelling of an interned name.
    public func string(for name: XMLName) -> String { names.strings[Int(name.id)] }

    /// The number of open elements (during a start event it includes the element just opened).
    public var depth: Int { stackCount }

    /// A position for messages: `line N` of the current event.
    public var position: String { "line \(eventLine)" }

    /// The decoded text of the current ``XMLEvent/text`` event.
    public var text: String {
        String(decoding: UnsafeBufferPointer(start: textBuf, count: textCount), as: UTF8.self)
    }

    /// Calls `body` with the UTF-8 bytes of the current text, valid only during the call.
    public func withTextBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: textBuf, count: textCount))
    }

    /// The number of attributes of the current ``XMLEvent/startElement(_:)``.
    public var attributeCount: Int { attrNumber }

    /// The decoded value of attribute `name` of the current start element, nil when absent.
    public func attribute(_ name: XMLName) -> String? {
        withAttributeBytes(name) { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// Calls `body` with the UTF-8 bytes of attribute `name` (nil when absent), valid only during the call.
    public func withAttributeBytes<R>(_ name: XMLName, _ body: (UnsafeBufferPointer<UInt8>?) throws -> R) rethrows -> R
    {
        for k in 0..<attrNumber where attrNames[k] == name.id {
            return try body(UnsafeBufferPointer(start: attrBuf + attrStarts[k], count: attrEnds[k] - attrStarts[k]))
        }
        return try body(nil)
    }

    /// Attribute `index` (0..<``attributeCount``) of the current start element as name and value.
    public func attribute(at index: Int) -> (name: XMLName, value: String) {
        precondition(index >= 0 && index < attrNumber, "attribute index out of range")
        let bytes = UnsafeBufferPointer(start: attrBuf + attrStarts[index], count: attrEnds[index] - attrStarts[index])
        return (XMLName(id: attrNames[index]), String(decoding: bytes, as: UTF8.self))
    }

    // MARK: Raw bytes

    /// The input offset (in bytes) of the next byte to read: after an end tag event, just past its `>`.
    public var offset: Int { base + pos }

    /// The ``ByteHash`` of the input from offset `start` up to ``offset``, or nil when those bytes
    /// are no longer in the buffer (the parser keeps what it has not read, and the rest of its chunk).
    public func hashOfBytes(from start: Int) -> Int64? {
        guard start >= base, start <= base + pos else { return nil }
        return ByteHash.of(UnsafeBufferPointer(start: buf + (start - base), count: base + pos - start))
    }

    /// Passes over the next element without parsing it when its bytes, from `open` (say `<event>`)
    /// to the first `close` after it (`</event>`), are in the buffer (read ahead once if need be)
    /// and `known` says their ``ByteHash`` is one already read: it returns that hash and those bytes,
    /// and the parser goes on after them (whitespace before them included). Otherwise it returns nil
    /// and nothing is consumed.
    ///
    /// Call it between events, at the depth where the element would start. The bytes are not
    /// checked: only `known` vouches for them (bytes already parsed whole, by this parser or an
    /// earlier one, with the same ``ByteHash``). Bytes with a carriage return are never passed, so
    /// line numbers stay right.
    public func skipElement(open: StaticString, close: StaticString, known: (Int64) -> Bool) throws -> (
        hash: Int64, bytes: [UInt8]
    )? {
        guard started, !pendingEnd, !finished, stackCount > 0, referenceError == nil else { return nil }
        var readAhead = false
        while true {
            var i = pos, lines = 0
            while i < end && classes[Int(buf[i])] & Self.space != 0 {
                if buf[i] == 0x0D { return nil }
                if buf[i] == 0x0A { lines += 1 }
                i += 1
            }
            let openCount = open.utf8CodeUnitCount, closeCount = close.utf8CodeUnitCount
            if end - i >= openCount + closeCount {
                guard memcmp(buf + i, open.utf8Start, openCount) == 0 else { return nil }
                if let found = find(close, from: i + openCount) {
                    let count = found + closeCount - i
                    let bytes = UnsafeBufferPointer(start: buf + i, count: count)
                    let hash = ByteHash.of(bytes)
                    guard known(hash), memchr(buf + i, 0x0D, count) == nil else { return nil }
                    for b in bytes where b == 0x0A { lines += 1 }
                    line += lines
                    pos = i + count
                    return (hash, Array(bytes))
                }
            }
            guard !readAhead, !atEOF else { return nil }
            readAhead = true
            if try !refill(keep: pos) { return nil }
        }
    }

    /// The index of the first `bytes` in the buffer at or after `from`, nil if none.
    private func find(_ bytes: StaticString, from: Int) -> Int? {
        let n = bytes.utf8CodeUnitCount, first = Int32(bytes.utf8Start[0])
        var i = from
        while end - i >= n, let p = memchr(buf + i, first, end - i - n + 1) {
            i = UnsafeRawPointer(buf).distance(to: UnsafeRawPointer(p))
            if memcmp(buf + i, bytes.utf8Start, n) == 0 { return i }
            i += 1
        }
        return nil
    }

    // MARK: Events

    /// Reads the next event.
    /// - Throws: ``ImportError/hostile(_:)``, ``ImportError/malformed(position:reason:)`` or
    ///   ``ImportError/unreadable(_:)``; after an error the parser must not be used again.
    public func next() throws -> XMLEvent {
        referenceError = nil
        attrNumber = 0
        if pendingEnd {
            pendingEnd = false
            stackCount -= 1
            return .endElement(XMLName(id: stack[stackCount]))
        }
        if finished { return .endOfDocument }
        if !started {
            started = true
            try skipByteOrderMark()
        }
        textCount = 0
        eventLine = line
        let atTag = try scanText()
        if textCount > 0 || referenceError != nil {
            if stackCount > 0 { return .text }
            if referenceError != nil || !textIsSpace() { throw malformed("text outside the root element") }
            textCount = 0
        }
        eventLine = line
        tagOffset = base + pos
        guard atTag else {
            if stackCount > 0 { throw malformed("unexpected end of file: <\(string(top))> is not closed") }
            if !rootSeen { throw malformed("no root element") }
            finished = true
            return .endOfDocument
        }
        return try scanTag()
    }

    private var top: XMLName { XMLName(id: stack[stackCount - 1]) }

    private func string(_ name: XMLName) -> String { string(for: name) }

    private func malformed(_ reason: String) -> ImportError {
        .malformed(position: "line \(line)", reason: reason)
    }

    private func textIsSpace() -> Bool {
        for k in 0..<textCount where classes[Int(textBuf[k])] & Self.space == 0 { return false }
        return true
    }

    // MARK: Input

    /// Skips a UTF-8 byte order mark at the start of the input.
    private func skipByteOrderMark() throws {
        var i = pos
        if try ensure(&i, 3), buf[i] == 0xEF, buf[i + 1] == 0xBB, buf[i + 2] == 0xBF { i += 3 }
        pos = i
    }

    /// Moves the bytes from `keep` on to the front of the buffer and reads more after them.
    /// Callers subtract `keep` from every index they hold. Returns false at the end of the input.
    private func refill(keep: Int) throws -> Bool {
        let kept = end - keep
        if keep > 0 && kept > 0 { memmove(buf, buf + keep, kept) }
        base += keep
        end = kept
        pos = 0
        if atEOF { return false }
        if capacity - end < chunkSize {
            let newCapacity = end + chunkSize + 4096
            let newBuf = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            newBuf.update(from: buf, count: end)
            buf.deallocate()
            buf = newBuf
            capacity = newCapacity
        }
        let n = try readInput(into: buf + end, count: chunkSize)
        if n == 0 {
            atEOF = true
            return false
        }
        end += n
        return true
    }

    private func readInput(into target: UnsafeMutablePointer<UInt8>, count: Int) throws -> Int {
        if fd < 0 {
            let n = min(count, memory.count - memoryOffset)
            if n > 0 {
                memory.withUnsafeBufferPointer { target.update(from: $0.baseAddress! + memoryOffset, count: n) }
                memoryOffset += n
            }
            return n
        }
        while true {
            let n = read(fd, target, count)
            if n >= 0 { return n }
            if errno != EINTR { throw ImportError.unreadable("\(path): \(String(cString: strerror(errno)))") }
        }
    }

    /// Makes `n` bytes available from `i` (discarding what is before `i`); false when the input ends first.
    @inline(__always)
    private func ensure(_ i: inout Int, _ n: Int) throws -> Bool {
        if end - i >= n { return true }
        while end - i < n {
            let more = try refill(keep: i)
            i = 0
            if !more { return end - i >= n }
        }
        return true
    }

    private func need(_ i: inout Int, _ n: Int, _ what: String) throws {
        if try !ensure(&i, n) { throw malformed("unexpected end of file in \(what)") }
    }

    // MARK: Output buffers

    @inline(__always)
    private func appendText(_ p: UnsafePointer<UInt8>, _ n: Int) throws {
        if textCount + n > textCapacity { try growText(textCount + n) }
        (textBuf + textCount).update(from: p, count: n)
        textCount += n
    }

    @inline(__always)
    private func appendTextByte(_ b: UInt8) throws {
        if textCount == textCapacity { try growText(textCount + 1) }
        textBuf[textCount] = b
        textCount += 1
    }

    private func growText(_ needed: Int) throws {
        if needed > limits.maxTextBytes { throw malformed("text longer than \(limits.maxTextBytes) bytes") }
        let newCapacity = min(max(needed, textCapacity * 2), limits.maxTextBytes)
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        p.update(from: textBuf, count: textCount)
        textBuf.deallocate()
        textBuf = p
        textCapacity = newCapacity
    }

    @inline(__always)
    private func appendAttribute(_ p: UnsafePointer<UInt8>, _ n: Int) throws {
        if attrCount + n > attrCapacity { try growAttributes(attrCount + n) }
        (attrBuf + attrCount).update(from: p, count: n)
        attrCount += n
    }

    @inline(__always)
    private func appendAttributeByte(_ b: UInt8) throws {
        if attrCount == attrCapacity { try growAttributes(attrCount + 1) }
        attrBuf[attrCount] = b
        attrCount += 1
    }

    private func growAttributes(_ needed: Int) throws {
        if needed > limits.maxAttributeBytes {
            throw malformed("attribute values longer than \(limits.maxAttributeBytes) bytes")
        }
        let newCapacity = min(max(needed, attrCapacity * 2), limits.maxAttributeBytes)
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        p.update(from: attrBuf, count: attrCount)
        attrBuf.deallocate()
        attrBuf = p
        attrCapacity = newCapacity
    }

    /// Appends a scalar as UTF-8 to the text or attribute buffer.
    private func appendScalar(_ v: UInt32, toAttribute: Bool) throws {
        var bytes: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        let n: Int
        switch v {
        case ..<0x80:
            bytes.0 = UInt8(v)
            n = 1
        case ..<0x800:
            bytes = (UInt8(0xC0 | v >> 6), UInt8(0x80 | v & 0x3F), 0, 0)
            n = 2
        case ..<0x10000:
            bytes = (UInt8(0xE0 | v >> 12), UInt8(0x80 | v >> 6 & 0x3F), UInt8(0x80 | v & 0x3F), 0)
            n = 3
        default:
            bytes = (
                UInt8(0xF0 | v >> 18), UInt8(0x80 | v >> 12 & 0x3F), UInt8(0x80 | v >> 6 & 0x3F),
                UInt8(0x80 | v & 0x3F)
            )
            n = 4
        }
        try withUnsafeBytes(of: &bytes) { raw in
            let p = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            if toAttribute { try appendAttribute(p, n) } else { try appendText(p, n) }
        }
    }

    // MARK: Scanners

    /// The length of the valid UTF-8 sequence at `i` (a byte ≥ 0x80), else throws.
    private func utf8Length(_ i: inout Int) throws -> Int {
        _ = try ensure(&i, 4)
        let b0 = buf[i]
        let available = end - i
        @inline(__always) func cont(_ k: Int) -> Bool { k < available && buf[i + k] & 0xC0 == 0x80 }
        switch b0 {
        case 0xC2...0xDF:
            if cont(1) { return 2 }
        case 0xE0...0xEF:
            guard cont(1), cont(2) else { break }
            let b1 = buf[i + 1]
            if b0 == 0xE0 && b1 < 0xA0 { break }  // overlong
            if b0 == 0xED && b1 >= 0xA0 { break }  // surrogate
            if b0 == 0xEF && b1 == 0xBF && buf[i + 2] >= 0xBE { break }  // U+FFFE, U+FFFF
            return 3
        case 0xF0...0xF4:
            guard cont(1), cont(2), cont(3) else { break }
            let b1 = buf[i + 1]
            if b0 == 0xF0 && b1 < 0x90 { break }  // overlong
            if b0 == 0xF4 && b1 >= 0x90 { break }  // above U+10FFFF
            return 4
        default:
            break
        }
        throw malformed("invalid UTF-8")
    }

    /// Reads character data up to the next start or end tag, into the text buffer. CDATA, comments,
    /// processing instructions and references are handled on the way. Returns true at a tag (at `pos`),
    /// false at the end of the input.
    private func scanText() throws -> Bool {
        var i = pos
        while true {
            let b = buf, e = end, cls = classes
            var j = i
            while j < e && cls[Int(b[j])] & Self.textSpecial == 0 { j += 1 }
            if j > i { try appendText(b + i, j - i) }
            i = j
            if i == e {
                if try !refill(keep: i) { return false }
                i = 0
                continue
            }
            let c = b[i]
            switch c {
            case 0x3C:  // <
                try need(&i, 2, "markup")
                let c1 = buf[i + 1]
                if c1 == 0x21 {  // !
                    try scanBang(&i)
                } else if c1 == 0x3F {  // ?
                    try scanProcessingInstruction(&i)
                } else {
                    pos = i
                    return true
                }
            case 0x26:  // &
                if let v = try scanReference(&i) { try appendScalar(v, toAttribute: false) }
            case 0x0A:
                line += 1
                try appendTextByte(c)
                i += 1
            case 0x09:
                try appendTextByte(c)
                i += 1
            case 0x0D:
                let more = try ensure(&i, 2)
                i += more && buf[i + 1] == 0x0A ? 2 : 1
                line += 1
                try appendTextByte(0x0A)
            case 0x80...:
                let n = try utf8Length(&i)
                try appendText(buf + i, n)
                i += n
            default:
                throw malformed("control character 0x\(String(c, radix: 16)) in text")
            }
        }
    }

    /// `<!` at `i`: a comment, a CDATA section (appended to the text), or hostile markup.
    private func scanBang(_ i: inout Int) throws {
        _ = try ensure(&i, 9)
        let available = end - i
        func matches(_ s: StaticString) -> Bool {
            available >= s.utf8CodeUnitCount && memcmp(buf + i, s.utf8Start, s.utf8CodeUnitCount) == 0
        }
        if matches("<!--") {
            i += 4
            try scanUntil(&i, "comment", terminator: (0x2D, 0x2D, 0x3E), copy: false)
        } else if matches("<![CDATA[") {
            if stackCount == 0 { throw malformed("CDATA section outside the root element") }
            i += 9
            try scanUntil(&i, "CDATA section", terminator: (0x5D, 0x5D, 0x3E), copy: true)
        } else {
            var word = ""
            for k in 2..<min(available, 10) {
                let b = buf[i + k]
                guard b >= 0x41 && b <= 0x5A || b >= 0x61 && b <= 0x7A else { break }
                word.append(Character(Unicode.Scalar(b)))
            }
            let what = word.isEmpty ? "<!" : "<!\(word)"
            throw ImportError.hostile("\(what) markup at line \(line) (DTDs and entity declarations are not accepted)")
        }
    }

    /// Skips (or copies into the text) everything up to a three-byte terminator (`-->` or `]]>`).
    /// In comments `--` may only come right before `>`.
    private func scanUntil(_ i: inout Int, _ what: String, terminator t: (UInt8, UInt8, UInt8), copy: Bool) throws {
        while true {
            try need(&i, 1, what)
            let c = buf[i]
            if c == t.0 {
                try need(&i, 3, what)
                if buf[i + 1] == t.1 {
                    if buf[i + 2] == t.2 {
                        i += 3
                        pos = i
                        return
                    }
                    if !copy { throw malformed("'--' inside a comment") }
                }
                if copy { try appendTextByte(c) }
                i += 1
            } else if c >= 0x80 {
                let n = try utf8Length(&i)
                if copy { try appendText(buf + i, n) }
                i += n
            } else if c == 0x0A || c == 0x0D {
                line += 1
                if c == 0x0D, try ensure(&i, 2), buf[i + 1] == 0x0A { i += 1 }
                if copy { try appendTextByte(0x0A) }
                i += 1
            } else if c < 0x20 && c != 0x09 {
                throw malformed("control character 0x\(String(c, radix: 16)) in \(what)")
            } else {
                if copy { try appendTextByte(c) }
                i += 1
            }
        }
    }

    /// `<?` at `i`: skips a processing instruction. The XML declaration is only allowed before the root
    /// and must not declare an encoding other than UTF-8.
    private func scanProcessingInstruction(_ i: inout Int) throws {
        i += 2
        let start = try scanName(&i)
        let target = String(decoding: UnsafeBufferPointer(start: buf + start, count: i - start), as: UTF8.self)
        let isDeclaration = target.lowercased() == "xml"
        if isDeclaration && rootSeen { throw malformed("XML declaration after the root element began") }
        var declaration: [UInt8] = []
        while true {
            try need(&i, 1, "processing instruction")
            let c = buf[i]
            if c == 0x3F {
                try need(&i, 2, "processing instruction")
                if buf[i + 1] == 0x3E {
                    i += 2
                    break
                }
            }
            if c >= 0x80 {
                i += try utf8Length(&i)
                continue
            }
            if c == 0x0A { line += 1 }
            if c < 0x20 && c != 0x09 && c != 0x0A && c != 0x0D {
                throw malformed("control character 0x\(String(c, radix: 16)) in processing instruction")
            }
            if isDeclaration {
                if declaration.count > 1024 { throw malformed("XML declaration too long") }
                declaration.append(c)
            }
            i += 1
        }
        pos = i
        if isDeclaration, let encoding = Self.declaredEncoding(declaration),
            !["utf-8", "utf8", "us-ascii"].contains(encoding.lowercased())
        {
            throw malformed("unsupported encoding \(encoding) (only UTF-8 is read)")
        }
    }

    private static func declaredEncoding(_ declaration: [UInt8]) -> String? {
        let text = String(decoding: declaration, as: UTF8.self)
        guard let range = text.range(of: "encoding") else { return nil }
        let rest = text[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    /// Reads a name at `i`, leaving `i` after it; returns its start. Bytes `start..<i` stay valid until
    /// the next read from the input.
    private func scanName(_ i: inout Int) throws -> Int {
        try need(&i, 1, "name")
        if classes[Int(buf[i])] & Self.nameStart == 0 {
            let c = buf[i]
            throw malformed(c < 0x80 && c >= 0x20 ? "unexpected '\(Character(Unicode.Scalar(c)))'" : "expected a name")
        }
        var start = i
        var j = i + 1
        let maxName = limits.maxNameBytes
        while true {
            let b = buf, e = end, cls = classes
            while j < e && cls[Int(b[j])] & Self.nameChar != 0 { j += 1 }
            if j - start > maxName { throw malformed("name longer than \(maxName) bytes") }
            if j < e { break }
            let more = try refill(keep: start)
            j -= start
            start = 0
            if !more { throw malformed("unexpected end of file in a name") }
        }
        i = j
        return start
    }

    /// Interns the name at `buf[start..<i]`.
    private func intern(_ start: Int, _ i: Int) throws -> Int32 {
        let p = buf + start, n = i - start
        if let id = names.find(p, n) { return id }
        if names.count >= limits.maxDistinctNames { throw malformed("more than \(limits.maxDistinctNames) names") }
        guard let string = String(validating: UnsafeBufferPointer(start: p, count: n), as: UTF8.self) else {
            throw malformed("invalid UTF-8 in a name")
        }
        return names.insert(p, n, string: string)
    }

    /// Skips whitespace; returns whether there was any.
    private func skipSpace(_ i: inout Int) throws -> Bool {
        var skipped = false
        while true {
            try need(&i, 1, "a tag")
            let c = buf[i]
            guard classes[Int(c)] & Self.space != 0 else { return skipped }
            if c == 0x0A { line += 1 }
            skipped = true
            i += 1
        }
    }

    /// A start or end tag at `pos`.
    private func scanTag() throws -> XMLEvent {
        var i = pos + 1
        if buf[i] == 0x2F {  // </
            i += 1
            let start = try scanName(&i)
            let n = i - start
            guard stackCount > 0 else { throw malformed("end tag outside the root element") }
            let expected = names.bytes(stack[stackCount - 1])
            if n != expected.count || memcmp(buf + start, expected.baseAddress!, n) != 0 {
                let found = String(decoding: UnsafeBufferPointer(start: buf + start, count: n), as: UTF8.self)
                throw malformed("</\(found)> does not close <\(string(top))>")
            }
            _ = try skipSpace(&i)
            if buf[i] != 0x3E { throw malformed("expected '>' to end </\(string(top))>") }
            pos = i + 1
            stackCount -= 1
            return .endElement(XMLName(id: stack[stackCount]))
        }
        let start = try scanName(&i)
        let id = try intern(start, i)
        if stackCount == 0 {
            if rootSeen { throw malformed("a second root element <\(string(for: XMLName(id: id)))>") }
            rootSeen = true
        }
        if stackCount >= limits.maxDepth { throw malformed("elements nested deeper than \(limits.maxDepth)") }
        attrCount = 0
        while true {
            let spaced = try skipSpace(&i)
            let c = buf[i]
            if c == 0x3E {  // >
                i += 1
                break
            }
            if c == 0x2F {  // />
                try need(&i, 2, "a tag")
                if buf[i + 1] != 0x3E { throw malformed("expected '>' after '/'") }
                i += 2
                pendingEnd = true
                break
            }
            if !spaced { throw malformed("expected whitespace before an attribute") }
            try scanAttribute(&i)
        }
        pos = i
        stack[stackCount] = id
        stackCount += 1
        return .startElement(XMLName(id: id))
    }

    private func scanAttribute(_ i: inout Int) throws {
        let start = try scanName(&i)
        let id = try intern(start, i)
        if attrNumber >= limits.maxAttributes { throw malformed("more than \(limits.maxAttributes) attributes") }
        for k in 0..<attrNumber where attrNames[k] == id {
            throw malformed("duplicate attribute \(string(for: XMLName(id: id)))")
        }
        _ = try skipSpace(&i)
        if buf[i] != 0x3D { throw malformed("expected '=' after attribute \(string(for: XMLName(id: id)))") }
        i += 1
        _ = try skipSpace(&i)
        let quote = buf[i]
        if quote != 0x22 && quote != 0x27 { throw malformed("expected a quoted attribute value") }
        i += 1
        let valueStart = attrCount
        while true {
            let b = buf, e = end, cls = classes
            var j = i
            while j < e && cls[Int(b[j])] & Self.attributeSpecial == 0 { j += 1 }
            if j > i { try appendAttribute(b + i, j - i) }
            i = j
            if i == e {
                if try !refill(keep: i) { throw malformed("unexpected end of file in an attribute value") }
                i = 0
                continue
            }
            let c = b[i]
            switch c {
            case quote:
                i += 1
                attrNames[attrNumber] = id
                attrStarts[attrNumber] = valueStart
                attrEnds[attrNumber] = attrCount
                attrNumber += 1
                return
            case 0x22, 0x27:
                try appendAttributeByte(c)
                i += 1
            case 0x26:
                if let v = try scanReference(&i) { try appendScalar(v, toAttribute: true) }
            case 0x3C:
                throw malformed("'<' in an attribute value")
            case 0x09, 0x0A:
                if c == 0x0A { line += 1 }
                try appendAttributeByte(0x20)
                i += 1
            case 0x0D:
                let more = try ensure(&i, 2)
                i += more && buf[i + 1] == 0x0A ? 2 : 1
                line += 1
                try appendAttributeByte(0x20)
            case 0x80...:
                let n = try utf8Length(&i)
                try appendAttribute(buf + i, n)
                i += n
            default:
                throw malformed("control character 0x\(String(c, radix: 16)) in an attribute value")
            }
        }
    }

    /// A reference at `i` (`&`): returns the scalar it stands for, or nil for an unknown entity, which
    /// is not expanded but noted in ``referenceError``.
    private func scanReference(_ i: inout Int) throws -> UInt32? {
        let window = limits.maxNameBytes + 3
        _ = try ensure(&i, window)
        let limit = min(end, i + window)
        var semicolon = i + 1
        while semicolon < limit && buf[semicolon] != 0x3B { semicolon += 1 }
        guard semicolon < limit else { throw malformed("'&' not followed by a reference ending in ';'") }
        let body = UnsafeBufferPointer(start: buf + i + 1, count: semicolon - i - 1)
        i = semicolon + 1
        guard let first = body.first else { throw malformed("empty reference '&;'") }
        if first == 0x23 {  // #
            var value: UInt32 = 0
            let hex = body.count > 1 && body[1] == 0x78
            let digits = body.dropFirst(hex ? 2 : 1)
            guard !digits.isEmpty, digits.count <= 8 else { throw malformed("bad character reference") }
            for d in digits {
                let v: UInt32
                switch d {
                case 0x30...0x39: v = UInt32(d - 0x30)
                case 0x61...0x66 where hex: v = UInt32(d - 0x61 + 10)
                case 0x41...0x46 where hex: v = UInt32(d - 0x41 + 10)
                default: throw malformed("bad character reference")
                }
                value = value * (hex ? 16 : 10) + v
            }
            let legal =
                value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
                || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
            guard legal else { throw malformed("character reference to illegal character \(value)") }
            return value
        }
        guard classes[Int(first)] & Self.nameStart != 0, body.allSatisfy({ classes[Int($0)] & Self.nameChar != 0 })
        else { throw malformed("bad entity reference") }
        switch body.count {
        case 2 where body[0] == 0x6C && body[1] == 0x74: return 0x3C  // lt
        case 2 where body[0] == 0x67 && body[1] == 0x74: return 0x3E  // gt
        case 3 where body[0] == 0x61 && body[1] == 0x6D && body[2] == 0x70: return 0x26  // amp
        case 4 where body.elementsEqual("apos".utf8): return 0x27
        case 4 where body.elementsEqual("quot".utf8): return 0x22
        default:
            if referenceError == nil {
                guard let name = String(validating: body, as: UTF8.self) else { throw malformed("invalid UTF-8") }
                referenceError = "unknown entity &\(name);"
            }
            return nil
        }
    }
}
