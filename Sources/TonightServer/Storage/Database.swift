@preconcurrency import AsyncKit
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit

/// Which database engine is behind ``Database``.
public enum DatabaseKind: String, Sendable {
    case sqlite
    case postgres
}

/// The application's database: a connection pool behind one `SQLDatabase`, used by every
/// repository through SQLKit. SQLite (embedded, a WAL file) by default; PostgreSQL when a URL
/// is configured.
public final class Database: Sendable {
    /// The engine.
    public let kind: DatabaseKind
    /// The pooled database all queries go through.
    public let sql: any SQLDatabase
    /// The SQLite file (nil on PostgreSQL), for connections of their own (``SQLiteBulkConnection``).
    let sqlitePath: String?
    /// How long an SQLite connection waits for another's write lock.
    let busyTimeoutMilliseconds: Int
    private let shutdownPool: @Sendable () async throws -> Void
    /// The PostgreSQL pool under ``sql`` (nil on SQLite), for ``execute(prepared:)``.
    private let postgres: BoundedPostgresDatabase?
    /// SQLite write transactions of this process, one at a time in arrival order.
    private let writeGate = WriteGate()
    /// SQLite: the connection of ``groupWrite(_:)``, opened at its first use; `closed` once
    /// ``shutdown()`` closed it, so that a late group cannot open another.
    private let groupWriter = NIOLockedValueBox<(connection: SQLiteBulkConnection?, closed: Bool)>((nil, false))

    private init(
        kind: DatabaseKind, sql: any SQLDatabase, postgres: BoundedPostgresDatabase? = nil, sqlitePath: String? = nil,
        busyTimeoutMilliseconds: Int, shutdown: @escaping @Sendable () async throws -> Void
    ) {
        self.kind = kind
        self.sql = sql
        self.postgres = postgres
        self.sqlitePath = sqlitePath
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.shutdownPool = shutdown
    }

    /// Opens the configured database: PostgreSQL if `url` is a `postgres://` URL, otherwise the
    /// SQLite file at `sqlitePath`.
    /// On PostgreSQL each query or transaction holds its connection at most
    /// `queryTimeoutMilliseconds` (0: no limit; see ``BoundedPostgresDatabase``).
    public static func open(
        url: String, sqlitePath: String, poolSize: Int, busyTimeoutMilliseconds: Int = 10_000,
        queryTimeoutMilliseconds: Int = 0, logger: Logger,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws -> Database {
        if url.isEmpty {
            return openSQLite(
                path: sqlitePath, poolSize: poolSize, busyTimeoutMilliseconds: busyTimeoutMilliseconds, logger: logger,
                eventLoopGroup: eventLoopGroup)
        }
        let configuration = try SQLPostgresConfiguration(url: url)
        let perLoop = max(1, poolSize / max(1, eventLoopGroup.makeIterator().reduce(0) { count, _ in count + 1 }))
        // A request that gets no connection within the busy timeout is answered 503 `database_busy`.
        let pool = EventLoopGroupConnectionPool(
            source: PostgresConnectionSource(sqlConfiguration: configuration),
            maxConnectionsPerEventLoop: perLoop,
            requestTimeout: .milliseconds(Int64(max(1, busyTimeoutMilliseconds))),
            logger: logger,
            on: eventLoopGroup
        )
        let bounded = BoundedPostgresDatabase(
            pool: pool, logger: logger,
            limit: queryTimeoutMilliseconds > 0 ? .milliseconds(Int64(queryTimeoutMilliseconds)) : nil)
        let sql = bounded.sql(queryLogLevel: nil)
        let box = UncheckedSendable(pool)
        return Database(
            kind: .postgres, sql: sql, postgres: bounded, busyTimeoutMilliseconds: busyTimeoutMilliseconds
        ) { try await box.value.shutdownAsync() }
    }

    /// PostgreSQL only: runs `statement` as a named prepared statement, which each pooled
    /// connection parses and plans once (PostgreSQL keeps a generic plan after five runs). For the
    /// hottest statements, where planning cost more than running: a chat group's insert, the live
    /// notifications. Within the query deadline as any other query (``BoundedPostgresDatabase``).
    func execute<Statement: PostgresPreparedStatement>(prepared statement: Statement) async throws
        -> [Statement.Row] where Statement.Row: Sendable
    {
        guard let postgres else { throw PreparedStatementsNeedPostgres() }
        return try await Self.execute(prepared: statement, in: postgres)
    }

    /// PostgreSQL only: runs `statement` prepared (as ``execute(prepared:)``) on the connection
    /// behind `db`: a transaction's (``transaction(_:)``), for a statement that belongs in one.
    static func execute<Statement: PostgresPreparedStatement>(prepared statement: Statement, on db: any SQLDatabase)
        async throws -> [Statement.Row] where Statement.Row: Sendable
    {
        guard let session = db as? PostgresSession else { throw PreparedStatementsNeedPostgres() }
        do {
            return try await run(statement, on: session.connection)
        } catch let error as PSQLError where error.code == .server {
            // Closed once the transaction has ended (see `run(_:on:)`).
            session.discarded.withLockedValue { $0 = true }
            session.record(error)
            throw error
        }
    }

    private static func execute<Statement: PostgresPreparedStatement>(
        prepared statement: Statement, in postgres: any PostgresDatabase
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        try await postgres.withConnection { connection in
            connection.eventLoop.makeFutureWithTask {
                do {
                    return try await run(statement, on: connection)
                } catch let error as PSQLError where error.code == .server {
                    try? await connection.close()
                    throw error
                }
            }
        }.get()
    }

    /// Runs a prepared statement on `connection`. PostgresNIO remembers a failed preparation
    /// for the life of the connection and fails every later use of that statement there with the
    /// same error, so a connection where the database refused a prepared statement is closed
    /// (the pool opens another): one refusal (a table briefly missing, a lock timeout, a
    /// transaction already aborted) would otherwise break that statement on that connection for
    /// good. Refusals are rare (a group's client id stored twice is one), and a new connection
    /// costs a few milliseconds. `PreparedOutageTests` has the case.
    private static func run<Statement: PostgresPreparedStatement>(
        _ statement: Statement, on connection: PostgresConnection
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        var rows: [Statement.Row] = []
        for try await row in try await connection.execute(statement, logger: connection.logger) { rows.append(row) }
        return rows
    }

    /// ``execute(prepared:)`` was called on SQLite.
    struct PreparedStatementsNeedPostgres: Error {}

    /// Opens (creating if needed) an SQLite database file with WAL, foreign keys, a busy timeout
    /// and `synchronous=NORMAL` set on every connection.
    public static func openSQLite(
        path: String, poolSize: Int, busyTimeoutMilliseconds: Int = 10_000, logger: Logger,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) -> Database {
        // Each connection blocks a thread while SQLite waits for a lock (busy_timeout), so the
        // connections get their own threads: on the shared pool, waiters could starve the holder.
        let threads = NIOThreadPool(numberOfThreads: max(1, poolSize))
        threads.start()
        let connections = SQLiteConnections()
        let source = TunedSQLiteSource(
            base: .init(configuration: .init(storage: .file(path: path)), threadPool: threads),
            connections: connections, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let pool = EventLoopConnectionPool(
            source: source,
            maxConnections: max(1, poolSize),
            pruneInterval: nil,
            logger: logger,
            on: eventLoopGroup.any()
        )
        let sql = PooledSQLiteDatabase(pool: pool, logger: logger).sql(queryLogLevel: nil)
        let box = UncheckedSendable(pool)
        return Database(kind: .sqlite, sql: sql, sqlitePath: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds) {
            try await box.value.close().get()
            // The pool closes a connection that is still busy (or still opening) when it comes
            // back, and closing runs on these threads: they stop only after the last one.
            guard await connections.allClosed(within: .seconds(60)) else {
                logger.warning("SQLite connections still busy at shutdown; their threads are left running")
                return
            }
            try await threads.shutdownGracefully()
        }
    }

    /// Runs `body` in one transaction on one connection: committed if it returns, rolled back
    /// if it throws.
    ///
    /// On PostgreSQL a statement that fails aborts the whole transaction, and a `COMMIT` after
    /// that rolls back without an error. So a body that catches a statement's error and returns
    /// does not commit: the transaction throws that error instead (on SQLite only the statement
    /// is undone, and the rest commits).
    ///
    /// On SQLite, this process's write transactions also queue at ``writeGate`` first: only one
    /// writer can hold the file anyway, and a connection that finds it busy waits in SQLite's
    /// busy handler, which sleeps in steps of up to 100 ms — a long tail under concurrent writes.
    /// Queued in the process, each starts the moment the previous one commits.
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T)
        async throws -> T
    {
        try await gated { try await self.run(body) }
    }

    /// Runs a write that is one statement (so needs no explicit transaction), queued at
    /// ``writeGate`` on SQLite like ``transaction(_:)``.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await gated { try await body(self.sql) }
    }

    /// Runs a repository's write: through `database`'s write gate (``write(_:)``, or
    /// ``transaction(_:)`` when `atomic`) when it is given, or straight on `db` for a repository
    /// made over an open transaction (which already holds the gate).
    static func write<T: Sendable>(
        _ database: Database?, _ db: any SQLDatabase, atomic: Bool = false,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        guard let database else { return try await body(db) }
        return atomic ? try await database.transaction(body) : try await database.write(body)
    }

    /// Waits for this process's turn to write (SQLite); pair with ``leaveWriteGate()``.
    /// For a writer that spans many calls, such as an import's bulk connection.
    func enterWriteGate() async {
        if kind == .sqlite { await writeGate.enter() }
    }

    /// Lets the next writer of this process in.
    func leaveWriteGate() async {
        if kind == .sqlite { await writeGate.leave() }
    }

    /// A write gives up at the gate (503) once the gate has not changed hands for SQLite's busy
    /// timeout: behind a writer that holds it longer (an in-process import, or a write stuck on
    /// another process's lock), each queued request would otherwise wait for every one before it
    /// to time out in turn.
    private func gated<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        guard kind == .sqlite else { return try await operation() }
        guard await writeGate.enter(within: .milliseconds(busyTimeoutMilliseconds)) else {
            throw DatabaseBusyError()
        }
        do {
            let result = try await operation()
            await writeGate.leave()
            return result
        } catch {
            await writeGate.leave()
            throw error
        }
    }

    private func run<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        guard let postgres else {
            return try await sql.withSession { try await Self.run(body, on: $0, begin: "BEGIN IMMEDIATE") }
        }
        // A session that also hands out its connection, for prepared statements in the transaction.
        return try await postgres.withConnection { connection in
            connection.eventLoop.makeFutureWithTask {
                // A connection where a prepared statement was refused goes no further (``run(_:on:)``),
                // whether the transaction then failed or its body got past the refusal.
                let session = PostgresSession(connection)
                let result: Result<T, any Error>
                do { result = .success(try await Self.run(body, on: session, begin: "BEGIN")) } catch {
                    result = .failure(error)
                }
                if session.discarded.withLockedValue({ $0 }) { try? await connection.close() }
                return try result.get()
            }
        }.get()
    }

    private static func run<T: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> T, on connection: any SQLDatabase, begin: String
    ) async throws -> T {
        try await connection.raw("\(unsafeRaw: begin)").run()
        do {
            let result = try await body(connection)
            if let failure = (connection as? PostgresSession)?.failure { throw failure }
            try await connection.raw("COMMIT").run()
            return result
        } catch {
            // Bounded: after a deadline has closed the connection, a query sent on it may
            // never be answered (nor failed) by the driver.
            _ = try? await withDeadline(.seconds(5)) { try await connection.raw("ROLLBACK").run() }
            throw error
        }
    }

    /// Inside a transaction, waits until no other transaction holds `key`, and holds it until
    /// this one ends. PostgreSQL takes a transaction-level advisory lock; SQLite needs nothing,
    /// as `BEGIN IMMEDIATE` already lets one writer in at a time.
    public func lock(_ key: String, on db: any SQLDatabase) async throws {
        guard kind == .postgres else { return }
        try await db.raw("SELECT pg_advisory_xact_lock(hashtextextended(\(bind: key), 0))").run()
    }

    /// `true` if the database answers `SELECT 1`.
    public func ping() async -> Bool {
        (try? await sql.raw("SELECT 1 AS one").first()) != nil
    }

    /// Closes every connection.
    public func shutdown() async throws {
        let writer = groupWriter.withLockedValue { writer in
            defer { writer = (nil, true) }
            return writer.connection
        }
        writer?.close()
        try await shutdownPool()
    }

    /// SQLite: runs `body` on a connection of its own, outside the pool, queued at the write gate
    /// like ``write(_:)``: for the hottest writes that are one statement for many requests (a
    /// group of chat messages). Through the pool a statement hops from the caller's task to the
    /// pool's event loop, to a thread of SQLite's and back; here it runs on the connection's own
    /// queue, its statements prepared once. Groups are written one after another, so each hop
    /// saved is time every queued request waits less.
    func groupWrite<T: Sendable>(_ body: @escaping @Sendable (SQLiteBulkConnection) async throws -> T) async throws
        -> T
    {
        guard let sqlitePath else { throw GroupWriterNeedsSQLite() }
        return try await gated {
            let writer = try groupWriter.withLockedValue { writer in
                if let connection = writer.connection { return connection }
                guard !writer.closed else { throw GroupWriterClosed() }
                let opened = try SQLiteBulkConnection(
                    path: sqlitePath, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                    logger: Logger(label: "tonight.sqlite-group-writer"))
                writer.connection = opened
                return opened
            }
            return try await body(writer)
        }
    }

    /// ``groupWrite(_:)`` was called on PostgreSQL.
    struct GroupWriterNeedsSQLite: Error {}

    /// ``groupWrite(_:)`` was called after ``shutdown()``.
    struct GroupWriterClosed: Error {}
}

/// Carries a value the compiler cannot prove Sendable but that is used safely.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
