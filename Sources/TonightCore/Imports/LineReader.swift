import Foundation

/// Reads a text file line by line in fixed-size chunks, so memory stays bounded by the longest line.
///
/// Lines end at LF; a CR before the LF is dropped, and so is a UTF-8 byte order mark at the start. The
/// bytes are handed out undecoded: each format decides how to treat invalid UTF-8.
struct ChunkedLineReader: Sendable {
    enum Source: Sendable {
        case file(String)
        case bytes([UInt8])
    }

    /// Bytes read from the file at a time.
    static let chunkSize = 1 << 16

    let source: Source
    /// A line longer than this makes the whole file malformed.
    var maxLineLength: Int

    init(path: String, maxLineLength: Int = 1 << 24) {
        self.source = .file(path)
        self.maxLineLength = maxLineLength
    }

    init(bytes: [UInt8], maxLineLength: Int = 1 << 24) {
        self.source = .bytes(bytes)
        self.maxLineLength = maxLineLength
    }

    /// Calls `body` with each line (without its terminator) and its 1-based line number.
    func forEachLine(_ body: (ArraySlice<UInt8>, Int) throws -> Void) throws {
        switch source {
        case .bytes(let bytes):
            var splitter = Splitter(maxLineLength: maxLineLength)
            try splitter.feed(bytes[...], body)
            try splitter.finish(body)
        case .file(let path):
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw ImportError.unreadable("cannot open \(path)")
            }
            defer { try? handle.close() }
            var splitter = Splitter(maxLineLength: maxLineLength)
            while true {
                let chunk: Data?
                do {
                    chunk = try handle.read(upToCount: ChunkedLineReader.chunkSize)
                } catch {
                    throw ImportError.unreadable("cannot read \(path): \(error.localizedDescription)")
                }
                guard let chunk, !chunk.isEmpty else { break }
                try splitter.feed([UInt8](chunk)[...], body)
            }
            try splitter.finish(body)
        }
    }

    /// Splits a stream of chunks into lines, carrying a partial line from one chunk to the next.
    private struct Splitter {
        let maxLineLength: Int
        var pending: [UInt8] = []
        var lineNumber = 0
        var atStart = true

        init(maxLineLength: Int) {
            self.maxLineLength = maxLineLength
        }

        mutating func feed(_ chunk: ArraySlice<UInt8>, _ body: (ArraySlice<UInt8>, Int) throws -> Void) throws {
            var chunk = chunk
            if atStart {
                pending.append(contentsOf: chunk)
                guard pending.count >= 3 || chunk.isEmpty else { return }
                atStart = false
                if pending.starts(with: [0xEF, 0xBB, 0xBF]) { pending.removeFirst(3) }
                chunk = pending[...]
                pending = []
            }
            var start = chunk.startIndex
            while let newline = chunk[start...].firstIndex(of: 0x0A) {
                if pending.isEmpty {
                    try emit(chunk[start..<newline], body)
                } else {
                    pending.append(contentsOf: chunk[start..<newline])
                    let line = pending
                    pending.removeAll(keepingCapacity: true)
                    try emit(line[...], body)
                }
                start = newline + 1
            }
            pending.append(contentsOf: chunk[start...])
            if pending.count > maxLineLength {
                throw ImportError.malformed(
                    position: "line \(lineNumber + 1)", reason: "line longer than \(maxLineLength) bytes")
            }
        }

        mutating func finish(_ body: (ArraySlice<UInt8>, Int) throws -> Void) throws {
            if atStart {
                atStart = false
                if pending.starts(with: [0xEF, 0xBB, 0xBF]) { pending.removeFirst(3) }
            }
            if !pending.isEmpty {
                let line = pending
                pending = []
                try emit(line[...], body)
            }
        }

        private mutating func emit(_ line: ArraySlice<UInt8>, _ body: (ArraySlice<UInt8>, Int) throws -> Void) throws {
            lineNumber += 1
            if line.count > maxLineLength {
                throw ImportError.malformed(
                    position: "line \(lineNumber)", reason: "line longer than \(maxLineLength) bytes")
            }
            try body(line.last == 0x0D ? line.dropLast() : line, lineNumber)
        }
    }
}

/// Small text helpers shared by the importers.
enum ImportText {
    /// The bytes as a String, or nil when they are not valid UTF-8.
    static func utf8(_ bytes: ArraySlice<UInt8>) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// Without leading and trailing white space and line breaks.
    static func trim(_ text: some StringProtocol) -> String {
        let text = Substring(text)
        let isPlain = { (byte: UInt8) in byte > 0x20 && byte < 0x7F }
        if let first = text.utf8.first, let last = text.utf8.last, isPlain(first), isPlain(last) {
            return String(text)
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(Substring(scalars[first...last]))
    }

    /// Trimmed, or nil when that leaves nothing.
    static func clean(_ text: (some StringProtocol)?) -> String? {
        guard let text else { return nil }
        let trimmed = trim(text)
        return trimmed.isEmpty ? nil : trimmed
    }
}
