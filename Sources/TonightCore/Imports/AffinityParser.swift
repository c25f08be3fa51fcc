import Foundation

/// One artist's line of the artist affinity file: the artists most similar to it.
public struct AffinityEntry: Sendable, Hashable {
    /// The artist the line is about, matched to feed artists by folded name.
    public var artistName: String
    /// The line the record starts on (a quoted field may carry it over several lines).
    public var line: Int
    /// In file order.
    public var recommendations: [AffinityRecommendation]

    public init(artistName: String, line: Int, recommendations: [AffinityRecommendation]) {
        self.artistName = artistName
        self.line = line
        self.recommendations = recommendations
    }
}

/// A similar artist: the feed's artist id, its name as the affinity file writes it, and a score in 0…1.
public struct AffinityRecommendation: Sendable, Hashable {
    public var artistId: String
    public var artistName: String
    /// 0…1, higher is more similar.
    public var score: Double

    public init(artistId: String, artistName: String, score: Double) {
        self.artistId = artistId
        self.artistName = artistName
        self.score = score
    }
}

/// Reads the artist affinity file (see FORMATS.md, "Artist affinity"):
/// `ArtistName,RecArtistID,RecArtistName,Score[,RecArtistID,RecArtistName,Score]...` with RFC 4180 quoting.
///
/// The file is streamed in chunks. Blank lines are skipped. Fields are trimmed of spaces and tabs. A quote
/// inside an unquoted field is kept as text; text after a closing quote rejects the record. Line breaks
/// inside quoted fields are kept as LF. A quote left open for more than ``maxRecordLines`` lines (or to the
/// end of the file) rejects the record where it starts, and reading resumes on the line after that start.
public struct AffinityParser: Sendable {
    /// The most physical lines one quoted record may span before it is taken for an unterminated quote.
    public static let maxRecordLines = 64

    private let reader: ChunkedLineReader

    /// Reads the file at `path`.
    public init(path: String) {
        reader = ChunkedLineReader(path: path)
    }

    /// Reads an in-memory file.
    public init(bytes: [UInt8]) {
        reader = ChunkedLineReader(bytes: bytes)
    }

    /// Reads an in-memory file.
    public init(text: String) {
        self.init(bytes: Array(text.utf8))
    }

    /// Calls `handle` with each valid line and `reject` with each invalid one (`line 12`, reason).
    /// Throws ``ImportError/unreadable(_:)`` when the file cannot be read.
    public func parse(
        _ handle: (AffinityEntry) throws -> Void, reject: (ImportReject) throws -> Void
    ) throws {
        var assembler = RecordAssembler()
        try reader.forEachLine { bytes, number in
            try assembler.add(Array(bytes), number: number, handle: handle, reject: reject)
        }
        try assembler.finish(handle: handle, reject: reject)
    }
}

/// Gathers physical lines into CSV records, replaying buffered lines when a quote turns out unterminated.
private struct RecordAssembler {
    var lines: [(bytes: [UInt8], number: Int)] = []
    var scanner = FieldScanner()

    mutating func add(
        _ bytes: [UInt8], number: Int, handle: (AffinityEntry) throws -> Void,
        reject: (ImportReject) throws -> Void
    ) throws {
        if lines.isEmpty, isBlank(bytes) { return }
        lines.append((bytes, number))
        if lines.count > 1 { scanner.continueLine() }
        scanner.scan(bytes[...])
        if !scanner.inQuotes {
            let start = lines[0].number
            lines.removeAll(keepingCapacity: true)
            try finishRecord(line: start, handle: handle, reject: reject)
        } else if lines.count >= AffinityParser.maxRecordLines {
            try recoverFromOpenQuote(handle: handle, reject: reject)
        }
    }

    mutating func finish(handle: (AffinityEntry) throws -> Void, reject: (ImportReject) throws -> Void) throws {
        while !lines.isEmpty {
            try recoverFromOpenQuote(handle: handle, reject: reject)
        }
    }

    /// Rejects the record at the first buffered line and feeds the lines after it again.
    private mutating func recoverFromOpenQuote(
        handle: (AffinityEntry) throws -> Void, reject: (ImportReject) throws -> Void
    ) throws {
        let replay = lines.dropFirst()
        try reject(ImportReject(position: "line \(lines[0].number)", reason: "unterminated quote"))
        lines.removeAll()
        scanner = FieldScanner()
        for line in replay {
            try add(line.bytes, number: line.number, handle: handle, reject: reject)
        }
    }

    private mutating func finishRecord(
        line: Int, handle: (AffinityEntry) throws -> Void, reject: (ImportReject) throws -> Void
    ) throws {
        let fields = scanner.fields
        let error = scanner.error
        scanner = FieldScanner()
        if let error {
            try reject(ImportReject(position: "line \(line)", reason: error))
            return
        }
        switch AffinityRecord.entry(fields: fields, line: line) {
        case .success(let entry): try handle(entry)
        case .failure(let failure): try reject(ImportReject(position: "line \(line)", reason: failure.reason))
        }
    }

    private func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy(isBlankByte)
    }
}

/// An RFC 4180 field splitter that can be fed a record one physical line at a time.
private struct FieldScanner {
    var fields: [[UInt8]] = []
    var field: [UInt8] = []
    var inQuotes = false
    /// The current field began with a quote.
    var quoted = false
    /// The current field's closing quote has been seen.
    var closed = false
    var error: String?

    /// Continues the record on the next physical line: the line break belongs to the open quoted field.
    mutating func continueLine() {
        field.append(0x0A)
    }

    mutating func scan(_ bytes: ArraySlice<UInt8>) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            index += 1
            if inQuotes {
                if byte == 0x22 {
                    if index < bytes.endIndex, bytes[index] == 0x22 {
                        field.append(0x22)
                        index += 1
                    } else {
                        inQuotes = false
                        closed = true
                    }
                } else {
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case 0x2C:
                endField()
            case 0x22 where field.allSatisfy(isBlankByte) && !quoted:
                field.removeAll()
                quoted = true
                inQuotes = true
            default:
                if closed, !isBlankByte(byte), error == nil { error = "text after a closing quote" }
                if !closed { field.append(byte) }
            }
        }
        if !inQuotes { endField() }
    }

    private mutating func endField() {
        fields.append(quoted ? field : trimmed(field))
        field.removeAll(keepingCapacity: true)
        quoted = false
        closed = false
    }

    private func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.firstIndex(where: { !isBlankByte($0) }),
            let last = bytes.lastIndex(where: { !isBlankByte($0) })
        else { return [] }
        return Array(bytes[first...last])
    }
}

private func isBlankByte(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

/// Turns a record's fields into an entry.
private enum AffinityRecord {
    struct Failure: Error {
        let reason: String
    }

    static func entry(fields: [[UInt8]], line: Int) -> Result<AffinityEntry, Failure> {
        var texts: [String] = []
        texts.reserveCapacity(fields.count)
        for (index, field) in fields.enumerated() {
            guard let text = ImportText.utf8(field[...]) else {
                return .failure(Failure(reason: "invalid UTF-8 in field \(index + 1)"))
            }
            texts.append(text)
        }
        guard let name = texts.first, !name.isEmpty else { return .failure(Failure(reason: "empty artist name")) }
        let rest = texts.count - 1
        guard rest > 0 else { return .failure(Failure(reason: "no recommendations")) }
        guard rest % 3 == 0 else {
            return .failure(Failure(reason: "\(rest) fields after the artist name, not whole id,name,score triples"))
        }
        var recommendations: [AffinityRecommendation] = []
        recommendations.reserveCapacity(rest / 3)
        for first in stride(from: 1, to: texts.count, by: 3) {
            let triple = (first - 1) / 3 + 1
            let id = texts[first], recName = texts[first + 1], scoreText = texts[first + 2]
            guard !id.isEmpty else { return .failure(Failure(reason: "empty artist id in triple \(triple)")) }
            guard !recName.isEmpty else {
                return .failure(Failure(reason: "empty artist name in triple \(triple)"))
            }
            guard let score = unitScore(scoreText) else {
                return .failure(
                    Failure(reason: "score \"\(scoreText)\" in triple \(triple) is not a decimal between 0 and 1"))
            }
            recommendations.append(AffinityRecommendation(artistId: id, artistName: recName, score: score))
        }
        return .success(AffinityEntry(artistName: name, line: line, recommendations: recommendations))
    }

    /// A plain decimal (`0.94`, `1`, `.5`, `1.0`) between 0 and 1 inclusive; no sign, exponent, NaN or inf.
    static func unitScore(_ text: String) -> Double? {
        var digits = 0
        var dots = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."): dots += 1
            default: return nil
            }
        }
        guard digits > 0, dots <= 1, let value = Double(text), (0...1).contains(value) else { return nil }
        return value
    }
}
