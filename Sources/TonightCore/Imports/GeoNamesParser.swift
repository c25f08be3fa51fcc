import Foundation

/// Reads a GeoNames dump of populated places (`cities15000.txt`, `cities500.txt`, `allCountries.txt`…):
/// UTF-8, one place a line, 19 tab-separated columns — geonameid, name, asciiname, alternatenames
/// (comma-separated), latitude, longitude, feature class, feature code, country code, cc2, admin1 code, admin2,
/// admin3, admin4, population, elevation, dem, timezone, modification date.
///
/// Lines are streamed in bounded memory (64 KiB reads, lines up to ``maximumLineLength`` bytes). A bad line is
/// reported to `reject` as `line N` with the reason and reading goes on. Each city's `regionName` is left as
/// its admin1 code: ``Gazetteer/merging(_:)`` puts in the region's name.
public struct GeoNamesParser: Sendable {
    /// The longest line accepted, in bytes; longer lines are rejected.
    public static let maximumLineLength = 1 << 20
    private static let columns = 19

    private enum Source: Sendable {
        case path(String)
        case bytes([UInt8])
    }

    private let source: Source

    /// A parser for the file at `path`, opened when ``parse(_:reject:)`` runs.
    public init(path: String) {
        source = .path(path)
    }

    /// A parser for a dump held in memory.
    public init(bytes: [UInt8]) {
        source = .bytes(bytes)
    }

    /// Calls `handle` with each city and `reject` with each line that does not make one, in file order.
    /// Throws ``ImportError/unreadable(_:)`` when the file cannot be read, and whatever the closures throw.
    public func parse(_ handle: (City) throws -> Void, reject: (ImportReject) throws -> Void) throws {
        switch source {
        case .bytes(let bytes):
            try parse(LineReader(bytes: bytes, maximumLength: Self.maximumLineLength), handle, reject)
        case .path(let path):
            guard let file = FileHandle(forReadingAtPath: path) else {
                throw ImportError.unreadable("cannot open \(path)")
            }
            defer { try? file.close() }
            let reader = LineReader(maximumLength: Self.maximumLineLength) {
                do {
                    guard let chunk = try file.read(upToCount: 1 << 16), !chunk.isEmpty else { return nil }
                    return Array(chunk)
                } catch {
                    throw ImportError.unreadable("\(path): \(error.localizedDescription)")
                }
            }
            try parse(reader, handle, reject)
        }
    }

    private func parse(
        _ reader: LineReader, _ handle: (City) throws -> Void, _ reject: (ImportReject) throws -> Void
    ) throws {
        try reader.forEachLine { number, line in
            let position = "line \(number)"
            guard let line else {
                let reason = "line longer than \(Self.maximumLineLength) bytes"
                return try reject(ImportReject(position: position, reason: reason))
            }
            let fields = Fields(line)
            guard fields.count == Self.columns else {
                return try reject(
                    ImportReject(position: position, reason: "expected \(Self.columns) columns, found \(fields.count)"))
            }
            let parsed = City.parsing(
                id: fields[0], name: fields[1], asciiName: fields[2], alternateNames: fields[3], latitude: fields[4],
                longitude: fields[5], countryCode: fields[8], admin1Code: fields[10], population: fields[14],
                timeZone: fields[17])
            switch parsed {
            case .success(let city): try handle(city)
            case .failure(let failure): try reject(ImportReject(position: position, reason: failure.reason))
            }
        }
    }
}

extension GeoNamesParser {
    /// Splits UTF-8 text into lines, reading chunks from a source so that memory stays bounded. Empty lines and
    /// lines starting with `#` are skipped; a trailing `\r` is dropped, and so is a byte order mark at the start.
    final class LineReader {
        private let next: () throws -> [UInt8]?
        private let maximumLength: Int

        /// Lines of text that arrives in chunks; `next` returns nil at the end.
        init(maximumLength: Int, next: @escaping () throws -> [UInt8]?) {
            self.maximumLength = maximumLength
            self.next = next
        }

        /// Lines of text held in memory.
        convenience init(bytes: [UInt8], maximumLength: Int) {
            var pending: [UInt8]? = bytes
            self.init(maximumLength: maximumLength) {
                defer { pending = nil }
                return pending
            }
        }

        /// Calls `body` with each line's 1-based number and bytes, or nil for a line longer than the maximum.
        func forEachLine(_ body: (Int, ArraySlice<UInt8>?) throws -> Void) throws {
            var buffer: [UInt8] = []
            var start = 0
            var number = 0
            var skippingLongLine = false

            func emit(_ line: ArraySlice<UInt8>) throws {
                number += 1
                var line = line
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                if number == 1, line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
                if line.isEmpty || line.first == UInt8(ascii: "#") { return }
                try body(number, line.count > maximumLength ? nil : line)
            }

            while let chunk = try next() {
                if start > 0 {
                    buffer.removeSubrange(0..<start)
                    start = 0
                }
                buffer.append(contentsOf: chunk)
                while let end = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    if skippingLongLine {
                        skippingLongLine = false
                    } else {
                        try emit(buffer[start..<end])
                    }
                    start = end + 1
                }
                if buffer.count - start > maximumLength, !skippingLongLine {
                    number += 1
                    try body(number, nil)
                    skippingLongLine = true
                }
                if skippingLongLine {
                    buffer.removeAll(keepingCapacity: true)
                    start = 0
                }
            }
            if start < buffer.count, !skippingLongLine {
                try emit(buffer[start...])
            }
        }
    }

    /// The tab-separated fields of one line, decoded as UTF-8 (invalid bytes become U+FFFD).
    struct Fields {
        private let fields: [String]

        init(_ line: ArraySlice<UInt8>) {
            fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
        }

        var count: Int { fields.count }
        subscript(index: Int) -> String { fields[index] }
    }
}
