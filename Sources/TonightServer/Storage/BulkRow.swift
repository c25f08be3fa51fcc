import SQLKit
import SQLiteKit
import VaporCSQLite

/// The columns of the row ``SQLiteBulkConnection/keyed(_:capacity:key:_:)`` is reading.
struct BulkColumns {
    let statement: OpaquePointer?

    /// Column `index` (from 0) as an integer; nil when NULL.
    subscript(index: Int32) -> Int64? {
        sqlite_nio_sqlite3_column_type(statement, index) == SQLITE_NULL
            ? nil : sqlite_nio_sqlite3_column_int64(statement, index)
    }

    /// Column `index` (from 0) as text; nil when NULL.
    func text(_ index: Int32) -> String? {
        // The text first, then its length (the order SQLite documents).
        guard let text = sqlite_nio_sqlite3_column_text(statement, index) else { return nil }
        return String(
            decoding: UnsafeBufferPointer(start: text, count: Int(sqlite_nio_sqlite3_column_bytes(statement, index))),
            as: UTF8.self)
    }

    /// Calls `body` with column `index`'s text as UTF-8 bytes (nil when NULL), valid only during the call.
    func withText<R>(_ index: Int32, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let text = sqlite_nio_sqlite3_column_text(statement, index) else { return body(nil) }
        return body(UnsafeBufferPointer(start: text, count: Int(sqlite_nio_sqlite3_column_bytes(statement, index))))
    }
}

/// The names of a result's columns, shared by its rows.
final class BulkColumnNames: Sendable {
    let names: [String]
    let positions: [String: Int]

    init(_ names: [String]) {
        self.names = names
        positions = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// A row read by ``SQLiteBulkConnection``.
struct BulkRow: SQLRow {
    let names: BulkColumnNames
    let values: [SQLiteData]

    var allColumns: [String] { names.names }

    func contains(column: String) -> Bool { names.positions[column] != nil }

    func decodeNil(column: String) throws -> Bool { value(column) == .null }

    /// Text, integers, doubles and NULL as they are; anything else through SQLite's decoder (a
    /// refresh decodes thousands of changed events' rows, a decoder made for each column took
    /// most of that).
    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        let value = value(column)
        if let plain = Self.plain(value, as: D.self) { return plain }
        return try SQLiteDataDecoder().decode(D.self, from: value)
    }

    private static func plain<D>(_ value: SQLiteData, as: D.Type) -> D? {
        switch value {
        case .text(let text): return text as? D
        case .integer(let integer):
            if D.self == Int64.self || D.self == Int64?.self { return Int64(integer) as? D }
            return integer as? D
        case .float(let double): return double as? D
        case .null: return (D.self as? any ExpressibleByNilLiteral.Type)?.init(nilLiteral: ()) as? D
        case .blob: return nil
        }
    }

    private func value(_ column: String) -> SQLiteData {
        names.positions[column].map { values[$0] } ?? .null
    }
}
