import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import VaporCSQLite

/// A connection of its own to the SQLite file, outside the pool, for imports (and for the group
/// writes of ``Database/groupWrite(_:)``, with ``rows(prepared:_:)``): statements are
/// prepared once and each row's values are bound straight through SQLite's C API (through SQLKit,
/// serialising a multi-row insert and encoding every value cost more than SQLite's own work).
/// It is also an `SQLDatabase`, so the repositories' reads run on it inside its transaction.
///
/// Everything runs on the connection's own serial queue, in call order. Upserts are queued without
/// waiting (at most ``SQLiteBulkConnection/queuedWrites`` at a time), so SQLite writes one batch
/// while the importer prepares the next on another core; a failed upsert is thrown by the next
/// call that waits (a read, `exec`, such as the `COMMIT`), and upserts queued before that are
/// skipped. Callers await the queue instead of blocking their thread: an import inside the server
/// (`BEGIN IMMEDIATE` waiting for another process's lock, an index build) keeps no thread of the
/// server's concurrency pool.
final class SQLiteBulkConnection: SQLDatabase, @unchecked Sendable {
    let logger: Logger
    let eventLoop: any EventLoop
    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { nil }

    /// A batch of a refresh queues an upsert per set of changed columns (about ten): with room
    /// for only four, the writer waited for SQLite to write the first ones (0.21 s a refresh of
    /// the benchmark feed). Each queued upsert holds its rows, at most a batch's.
    static let queuedWrites = 16
    private let queue = DispatchQueue(label: "tonight.sqlite-bulk")
    /// Free places in the write queue, and upserts waiting for one.
    private let writeSlots = NIOLockedValueBox(
        (free: SQLiteBulkConnection.queuedWrites, waiting: [CheckedContinuation<Void, Never>]()))
    /// The first failure of a queued upsert (read and written on `queue` only).
    private var failure: (any Error)?
    private var handle: OpaquePointer?
    /// Prepared upserts by their SQL text.
    private var prepared: [String: OpaquePointer] = [:]
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Opens the database file at `path` (which must exist: the pool has migrated it) with the
    /// pool's locking and durability settings and 32 MB of page cache: enough for the tables'
    /// primary keys; beyond it, dirty pages go to the WAL while the load runs, not all at commit.
    init(
        path: String, busyTimeoutMilliseconds: Int = 10_000, logger: Logger,
        eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    ) throws {
        self.logger = logger
        self.eventLoop = eventLoop
        var opened: OpaquePointer?
        // No mutex of SQLite's own around each call (its default, serialised mode): only the
        // connection's serial queue uses it. Reading a refresh's 220,000 event rows locked and
        // unlocked one for every column read, a fifth of the read's CPU in perf.
        let status = sqlite_nio_sqlite3_open_v2(
            path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        handle = opened
        guard status == SQLITE_OK else {
            let message = opened.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "cannot open"
            sqlite_nio_sqlite3_close(opened)
            handle = nil
            throw SQLiteBulkError(code: status, message: message)
        }
        do {
            for statement in [
                "PRAGMA busy_timeout = \(busyTimeoutMilliseconds)", "PRAGMA journal_mode = WAL",
                "PRAGMA synchronous = NORMAL",
                "PRAGMA foreign_keys = ON", "PRAGMA cache_size = -32768",
            ] {
                try execNow(statement)
            }
        } catch {
            close()
            throw error
        }
    }

    // Nothing can be queued any more (queued work holds the connection), and the last holder may be
    // the queue's own last closure: closing through the queue would wait for itself.
    deinit { closeNow() }

    /// Finalises every statement and closes the connection, after everything queued (again is
    /// harmless).
    func close() {
        queue.sync { closeNow() }
    }

    private func closeNow() {
        checkpointer?.close()
        checkpointer = nil
        for statement in prepared.values { sqlite_nio_sqlite3_finalize(statement) }
        prepared = [:]
        if let handle { sqlite_nio_sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs statements that bind nothing and return nothing (`BEGIN`, DDL, pragmas).
    func exec(_ sql: String) async throws {
        try await serially { try self.execNow(sql) }
    }

    /// The rows of a query that binds `values`, each as column name → value.
    func rows(_ sql: String, _ values: [SQLiteData] = []) async throws -> [BulkRow] {
        try await serially { try self.rowsNow(sql, values) }
    }

    /// The rows of a statement run again and again (a group write), prepared once and kept as
    /// upserts are: SQLite parses it once per connection instead of once per run.
    func rows(prepared sql: String, _ values: [SQLiteData]) async throws -> [BulkRow] {
        try await serially {
            let statement = try self.statement(for: sql)
            defer {
                sqlite_nio_sqlite3_reset(statement)
                sqlite_nio_sqlite3_clear_bindings(statement)
            }
            return try self.rowsNow(statement, values)
        }
    }

    /// The rows of a query whose first column is a text key, read in place on the connection's
    /// thread: `key` makes each row's key from that text's bytes, `value` its value from its other
    /// columns (for reading a whole table's keys and fingerprints without a row value and a decoder
    /// for each). `capacity`: the rows expected, so the dictionary is not grown again and again.
    func keyed<Key: Hashable & Sendable, Value: Sendable>(
        _ query: any SQLExpression, capacity: Int = 0, key: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Key,
        _ value: @escaping @Sendable (BulkColumns) -> Value
    ) async throws -> [Key: Value] {
        let (sql, binds) = serialize(query)
        let encoder = SQLiteDataEncoder()
        let values = try binds.map { try encoder.encode($0) }
        return try await serially {
            var statement: OpaquePointer?
            try self.check(sqlite_nio_sqlite3_prepare_v3(self.handle, sql, -1, 0, &statement, nil))
            defer { sqlite_nio_sqlite3_finalize(statement) }
            for (index, bound) in values.enumerated() {
                try self.check(self.bind(bound, at: Int32(index + 1), of: statement))
            }
            var result: [Key: Value] = [:]
            result.reserveCapacity(capacity)
            while true {
                let status = sqlite_nio_sqlite3_step(statement)
                if status == SQLITE_DONE { break }
                guard status == SQLITE_ROW else { try self.check(status); break }
                // The text first, then its length (the order SQLite documents).
                guard let text = sqlite_nio_sqlite3_column_text(statement, 0) else { continue }
                let count = Int(sqlite_nio_sqlite3_column_bytes(statement, 0))
                result[key(UnsafeBufferPointer(start: text, count: count))] = value(BulkColumns(statement: statement))
            }
            return result
        }
    }

    /// Queues `INSERT … ON CONFLICT (key) DO UPDATE` of `updating` (nil: every column but the key;
    /// `DO NOTHING` when that is none) for each row, through one prepared statement; waits only
    /// while the queue is full.
    func upsert(_ table: String, columns: [String], rows: [[SQLValue]], key: [String], updating: [String]? = nil)
        async
    {
        guard !rows.isEmpty else { return }
        await queueWrite { try self.write(table, columns: columns, rows: rows, key: key, updating: updating) }
    }

    /// Queues statements that bind nothing and return nothing, without waiting (as an upsert is;
    /// skipped after a queued failure, and failing like one).
    func enqueue(_ sql: String) async {
        await queueWrite { try self.execNow(sql) }
    }

    /// Queues `write` once there is room, without waiting for it; skipped after a queued failure,
    /// and its own failure kept for the next call that waits.
    private func queueWrite(_ write: @escaping @Sendable () throws -> Void) async {
        await takeWriteSlot()
        queue.async { [self] in
            defer { releaseWriteSlot() }
            guard failure == nil else { return }
            do {
                try write()
            } catch {
                failure = error
            }
        }
    }

    /// Queues the `COMMIT` of the open transaction without waiting, then `done` on the queue: a
    /// queued failure before it, or of the commit itself, rolls the transaction back instead, and
    /// the next call that waits throws it.
    func enqueueCommit(then done: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            defer { done() }
            do {
                guard failure == nil else { throw failure! }
                try execNow("COMMIT")
                checkpointer?.request()
            } catch {
                try? execNow("ROLLBACK")
                if failure == nil { failure = error }
            }
        }
    }

    /// Set and read on `queue` only.
    private var checkpointer: SQLiteCheckpointer?

    /// From now on, a commit does not copy the WAL into the database file on this connection's
    /// thread (SQLite's automatic checkpoint, every 1,000 pages): another connection does, on a
    /// thread of its own, after each commit, and once more when this connection closes. A refresh
    /// of the benchmark feed commits about 15,000 pages a batch; copying them held the next batch
    /// for 0.13-0.19 s each time.
    func checkpointApart(path: String) async throws {
        let checkpointer = try SQLiteCheckpointer(path: path)
        try await serially {
            try self.execNow("PRAGMA wal_autocheckpoint = 0")
            self.checkpointer = checkpointer
        }
    }

    /// Waits for everything queued, throwing a queued failure.
    func settle() async throws {
        try await serially {}
    }

    /// Takes a free place in the write queue, or waits in line for the next one.
    private func takeWriteSlot() async {
        await withCheckedContinuation { continuation in
            let taken = writeSlots.withLockedValue { slots in
                guard slots.free > 0 else {
                    slots.waiting.append(continuation)
                    return false
                }
                slots.free -= 1
                return true
            }
            if taken { continuation.resume() }
        }
    }

    /// Hands the slot to the next waiting upsert, or frees it.
    private func releaseWriteSlot() {
        let next = writeSlots.withLockedValue { slots in
            guard !slots.waiting.isEmpty else {
                slots.free += 1
                return nil as CheckedContinuation<Void, Never>?
            }
            return slots.waiting.removeFirst()
        }
        next?.resume()
    }

    /// Runs `body` on the queue after everything queued before it, throwing a queued upsert's
    /// failure instead (reported once: the caller can still roll back).
    private func serially<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [self] in
                continuation.resume(with: Result { try onQueue(body) })
            }
        }
    }

    /// `body`, or the failure of a queued upsert; called on the queue.
    private func onQueue<T>(_ body: () throws -> T) throws -> T {
        if let failure {
            self.failure = nil
            throw failure
        }
        return try body()
    }

    private func execNow(_ sql: String) throws {
        try check(sqlite_nio_sqlite3_exec(handle, sql, nil, nil, nil))
    }

    private func rowsNow(_ sql: String, _ values: [SQLiteData]) throws -> [BulkRow] {
        var statement: OpaquePointer?
        try check(sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, 0, &statement, nil))
        defer { sqlite_nio_sqlite3_finalize(statement) }
        return try rowsNow(statement, values)
    }

    private func rowsNow(_ statement: OpaquePointer?, _ values: [SQLiteData]) throws -> [BulkRow] {
        for (index, value) in values.enumerated() {
            try check(bind(value, at: Int32(index + 1), of: statement))
        }
        let count = sqlite_nio_sqlite3_column_count(statement)
        let names = BulkColumnNames((0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) })
        var rows: [BulkRow] = []
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { try check(status); break }
            rows.append(BulkRow(names: names, values: (0..<count).map { column(at: $0, of: statement) }))
        }
        return rows
    }

    private func write(_ table: String, columns: [String], rows: [[SQLValue]], key: [String], updating: [String]?)
        throws
    {
        let statement = try statement(for: Self.upsertSQL(table, columns: columns, key: key, updating: updating))
        defer { sqlite_nio_sqlite3_clear_bindings(statement) }
        for row in rows {
            precondition(row.count == columns.count, "a row of \(table) has \(row.count) values")
            for (index, value) in row.enumerated() {
                try check(bind(value, at: Int32(index + 1), of: statement))
            }
            let status = sqlite_nio_sqlite3_step(statement)
            sqlite_nio_sqlite3_reset(statement)
            guard status == SQLITE_DONE else {
                return try check(status == SQLITE_ROW ? SQLITE_MISUSE : status)
            }
        }
    }

    /// `name` as an SQL identifier.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func upsertSQL(_ table: String, columns: [String], key: [String], updating: [String]? = nil) -> String {
        let updated = updating ?? columns.filter { !key.contains($0) }
        let conflict =
            updated.isEmpty
            ? "DO NOTHING" : "DO UPDATE SET " + updated.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: columns.count).joined(separator: ", ")
            + ") ON CONFLICT (\(key.joined(separator: ", "))) \(conflict)"
    }

    private func statement(for sql: String) throws -> OpaquePointer? {
        if let statement = prepared[sql] { return statement }
        var statement: OpaquePointer?
        try check(sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
        prepared[sql] = statement
        return statement
    }

    private func bind(_ value: SQLValue, at index: Int32, of statement: OpaquePointer?) -> Int32 {
        switch value {
        case .null: return sqlite_nio_sqlite3_bind_null(statement, index)
        case .integer(let value): return sqlite_nio_sqlite3_bind_int64(statement, index, value)
        case .real(let value): return sqlite_nio_sqlite3_bind_double(statement, index, value)
        case .text(var value):
            return value.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    guard let start = chars.baseAddress else {
                        return sqlite_nio_sqlite3_bind_text64(
                            statement, index, "", 0, Self.transient, UInt8(SQLITE_UTF8))
                    }
                    return sqlite_nio_sqlite3_bind_text64(
                        statement, index, start, UInt64(chars.count), Self.transient, UInt8(SQLITE_UTF8))
                }
            }
        }
    }

    private func bind(_ value: SQLiteData, at index: Int32, of statement: OpaquePointer?) -> Int32 {
        switch value {
        case .null: bind(SQLValue.null, at: index, of: statement)
        case .integer(let value): bind(SQLValue.integer(Int64(value)), at: index, of: statement)
        case .float(let value): bind(SQLValue.real(value), at: index, of: statement)
        case .text(let value): bind(SQLValue.text(value), at: index, of: statement)
        case .blob(let buffer):
            buffer.withUnsafeReadableBytes {
                sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), Self.transient)
            }
        }
    }

    private func column(at index: Int32, of statement: OpaquePointer?) -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(Int(sqlite_nio_sqlite3_column_int64(statement, index)))
        case SQLITE_FLOAT: return .float(sqlite_nio_sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            guard let text = sqlite_nio_sqlite3_column_text(statement, index) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            if let bytes = sqlite_nio_sqlite3_column_blob(statement, index) {
                buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: count))
            }
            return .blob(buffer)
        default: return .null
        }
    }

    private func check(_ status: Int32) throws {
        guard status != SQLITE_OK && status != SQLITE_DONE && status != SQLITE_ROW else { return }
        let message = handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "closed"
        throw SQLiteBulkError(code: status, message: message)
    }

    // MARK: SQLDatabase

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        let (sql, binds) = serialize(query)
        let promise = eventLoop.makePromise(of: Void.self)
        promise.completeWithTask {
            let encoder = SQLiteDataEncoder()
            for row in try await self.rows(sql, binds.map { try encoder.encode($0) }) { onRow(row) }
        }
        return promise.futureResult
    }
}
