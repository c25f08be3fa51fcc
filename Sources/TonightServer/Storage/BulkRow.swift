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
}

/// A row read by ``SQLiteBulkConnection``.
struct BulkRow: SQLRow {
    let columns: [String]
    let values: [SQLiteData]

    var allColumns: [String] { columns }

    func contains(column: String) -> Bool { columns.contains(column) }

    func decodeNil(column: String) throws -> Bool { value(column) == .null }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        try SQLiteDataDecoder().decode(D.self, from: value(column))
    }

    private func value(_ column: String) -> SQLiteData {
        columns.firstIndex(of: column).map { values[$0] } ?? .null
    }
}
