import SQLKit
import SQLiteKit
import VaporCSQLite

/// The integer columns of the row ``SQLiteBulkConnection/keyed(_:_:)`` is reading.
struct BulkIntegers {
    let statement: OpaquePointer?

    /// Column `index` (from 0) as an integer; nil when NULL.
    subscript(index: Int32) -> Int64? {
        sqlite_nio_sqlite3_column_type(statement, index) == SQLITE_NULL
            ? nil : sqlite_nio_sqlite3_column_int64(statement, index)
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
