import Logging
import SQLKit

/// How an import writes to SQLite: through a connection of its own (``SQLiteBulkConnection``),
/// holding this process's write gate while it writes.
///
/// When the import's main table (events, or places for OpenStreetMap) is empty as it begins (a
/// first import), the whole import is one transaction: the secondary indexes of the tables it
/// writes that are empty are dropped and built again
/// (sorted, once) at the end, and foreign keys are not checked row by row: the writer only writes
/// events whose place and performers it has seen in this transaction, and nobody else can write
/// while it holds the lock. Readers see the tables as they were until the commit; a failure
/// rolls everything back, indexes included. Other writers wait for the whole import (a first
/// import of the benchmark feed takes a few seconds).
///
/// Otherwise (a re-import or an update) each batch is its own transaction, so other writers get
/// their turns between batches and a crash keeps the batches already written.
final class SQLiteImportSession: @unchecked Sendable {
    /// Tables an import of events fills, in the order their indexes are rebuilt.
    static let tables = ["event_performers", "events", "artists", "places", "categories"]

    let db: SQLiteBulkConnection
    private let database: Database
    /// Indexes dropped for the load, by table: (name, CREATE statement).
    private var dropped: [String: [(String, String)]] = [:]
    /// Whether the import is one transaction (some table was empty).
    var isBulkLoad: Bool { !emptyTables.isEmpty }
    /// The tables that were empty as the import began.
    let emptyTables: Set<String>
    private var open = true

    private init(db: SQLiteBulkConnection, database: Database, emptyTables: Set<String>) {
        self.db = db
        self.database = database
        self.emptyTables = emptyTables
    }

    /// Opens the connection and, when `main` is empty, the transaction the whole import runs in.
    /// `tables` are those the import writes (a subset of ``tables``); a table it never fills, such
    /// as events for an OpenStreetMap import, makes no later import a bulk load.
    static func begin(
        database: Database, path: String, tables written: [String] = tables, main: String = "events", logger: Logger
    ) async throws -> SQLiteImportSession {
        let db = try SQLiteBulkConnection(
            path: path, busyTimeoutMilliseconds: database.busyTimeoutMilliseconds, logger: logger)
        await database.enterWriteGate()
        do {
            // Only outside a transaction does this pragma take effect.
            try await db.exec("PRAGMA foreign_keys = OFF")
            try await db.exec("BEGIN IMMEDIATE")
            var empty: [String] = []
            for table in tables where written.contains(table) {
                if try await db.rows("SELECT 1 FROM \(table) LIMIT 1").isEmpty { empty.append(table) }
            }
            guard empty.contains(main) else {
                try await db.exec("COMMIT")
                // Each upsert of a batch keeps a statement journal (to undo that statement alone):
                // in memory, not a temporary file written for every changed page. A first import
                // keeps temporary files, for its index builds' sorts.
                try await db.exec("PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY")
                // Each batch's pages are copied into the database file on another thread.
                try await db.checkpointApart(path: path)
                await database.leaveWriteGate()
                return SQLiteImportSession(db: db, database: database, emptyTables: [])
            }
            let session = SQLiteImportSession(db: db, database: database, emptyTables: Set(empty))
            for table in empty {
                let indexes = try await db.rows(
                    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
                    [.text(table)])
                for index in indexes {
                    let name = try index.decode(column: "name", as: String.self)
                    session.dropped[table, default: []].append((name, try index.decode(column: "sql", as: String.self)))
                    try await db.exec("DROP INDEX \(SQLiteBulkConnection.quoted(name))")
                }
            }
            return session
        } catch {
            try? await db.exec("ROLLBACK")
            await database.leaveWriteGate()
            db.close()
            throw error
        }
    }

    /// Runs one batch: in the import's transaction, or in a transaction of its own. Such a batch's
    /// `COMMIT` is queued, not awaited: SQLite writes the batch while the importer sifts the
    /// records of the next one on the other core (the next batch's `BEGIN` waits for it, and a
    /// failed commit is thrown there, or by ``commit()``). The write gate is left once it ran.
    func batch<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        if isBulkLoad { return try await body(db) }
        await database.enterWriteGate()
        do {
            try await db.exec("BEGIN IMMEDIATE")
            let result = try await body(db)
            let database = database
            db.enqueueCommit { Task { await database.leaveWriteGate() } }
            return result
        } catch {
            try? await db.exec("ROLLBACK")
            await database.leaveWriteGate()
            throw error
        }
    }

    /// Builds the dropped indexes of `tables` again (before a statement that needs them).
    func rebuildIndexes(of tables: [String]) async throws {
        for table in tables {
            for (_, sql) in dropped.removeValue(forKey: table) ?? [] { try await db.exec(sql) }
        }
    }

    /// Builds every dropped index, commits, and closes the connection; throws a batch's failed
    /// commit.
    func commit() async throws {
        guard open else { return }
        if isBulkLoad {
            do {
                try await rebuildIndexes(of: Self.tables)
                try await db.exec("COMMIT")
            } catch {
                await abort()
                throw error
            }
            await database.leaveWriteGate()
        }
        open = false
        defer { db.close() }
        try await db.settle()
    }

    /// Rolls back what is not committed (everything, for a first import) and closes.
    func abort() async {
        guard open else { return }
        open = false
        if isBulkLoad {
            try? await db.exec("ROLLBACK")
            await database.leaveWriteGate()
        }
        db.close()
    }
}
