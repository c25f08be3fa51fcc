import Foundation
import Logging
import SQLiteKit
import Testing
import TonightCore

@testable import TonightServer

@Suite("Rows read by the bulk connection")
struct BulkRowTests {
    enum Outcome<D: Equatable>: Equatable {
        case value(D)
        case thrown
    }

    private func decoded<D: Decodable & Equatable>(_ row: BulkRow, _ column: String, as type: D.Type) -> Outcome<D> {
        do { return .value(try row.decode(column: column, as: D.self)) } catch { return .thrown }
    }

    /// What SQLite's own decoder makes of a value: what each decode must equal.
    private func reference<D: Decodable & Equatable>(_ value: SQLiteData, as type: D.Type) -> Outcome<D> {
        do { return .value(try SQLiteDataDecoder().decode(D.self, from: value)) } catch { return .thrown }
    }

    @Test("text, integers, doubles and NULL decode as SQLite's decoder decodes them, whatever the type asked")
    func sameAsDecoder() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bulkrow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("t.sqlite").path
        // The connection opens a database that exists (the pool's, migrated).
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let db = try SQLiteBulkConnection(path: path, logger: Logger(label: "test"))
        defer { db.close() }
        try await db.exec("CREATE TABLE t (id TEXT, n INTEGER, r REAL, z TEXT, b BLOB)")
        try await db.exec("INSERT INTO t VALUES ('removed', 42, 2.5, NULL, x'00ff'), ('1', 0, 3.0, NULL, NULL)")
        let rows = try await db.rows("SELECT id, n, r, z, b FROM t ORDER BY n DESC")
        #expect(rows.count == 2)
        for row in rows {
            #expect(row.allColumns == ["id", "n", "r", "z", "b"])
            #expect(row.contains(column: "n") && !row.contains(column: "missing"))
            for column in ["id", "n", "r", "z", "b", "missing"] {
                // A column the row does not have reads as NULL.
                let stored = row.names.positions[column].map { row.values[$0] } ?? .null
                #expect(decoded(row, column, as: String.self) == reference(stored, as: String.self), "\(column)")
                #expect(decoded(row, column, as: String?.self) == reference(stored, as: String?.self), "\(column)")
                #expect(decoded(row, column, as: Int.self) == reference(stored, as: Int.self), "\(column)")
                #expect(decoded(row, column, as: Int?.self) == reference(stored, as: Int?.self), "\(column)")
                #expect(decoded(row, column, as: Int64.self) == reference(stored, as: Int64.self), "\(column)")
                #expect(decoded(row, column, as: Int64?.self) == reference(stored, as: Int64?.self), "\(column)")
                #expect(decoded(row, column, as: Double.self) == reference(stored, as: Double.self), "\(column)")
                #expect(decoded(row, column, as: Double?.self) == reference(stored, as: Double?.self), "\(column)")
                #expect(decoded(row, column, as: Bool.self) == reference(stored, as: Bool.self), "\(column)")
                #expect(
                    decoded(row, column, as: EventStatus.self) == reference(stored, as: EventStatus.self), "\(column)")
                #expect(decoded(row, column, as: EventStatus?.self) == reference(stored, as: EventStatus?.self))
            }
        }
    }
}
