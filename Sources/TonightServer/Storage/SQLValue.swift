import SQLKit
import VaporCSQLite

/// A value bound to an SQL statement: what import rows are made of. Typed, so a bulk write binds
/// each value straight into SQLite without asking an `Encodable` what it is; encodes as the plain
/// value for SQLKit (PostgreSQL).
enum SQLValue: Encodable, Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    init(_ value: Double?) { self = value.map { .real($0) } ?? .null }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .integer(let value): try container.encode(value)
        case .real(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        }
    }
}

/// An SQLite error raised by ``SQLiteBulkConnection``, with SQLite's own message.
struct SQLiteBulkError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "SQLite error \(code): \(message)" }

    /// Another connection held the lock past the busy timeout (`SQLITE_BUSY`, `SQLITE_LOCKED`).
    var isBusy: Bool { code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED }

    /// A unique or primary key constraint failed (SQLite says "UNIQUE constraint failed" for both).
    var isUniqueViolation: Bool { code & 0xff == SQLITE_CONSTRAINT && message.contains("UNIQUE constraint failed") }
}
