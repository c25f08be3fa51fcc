@preconcurrency import AsyncKit
import Logging
import NIOConcurrencyHelpers
import NIOCore
import SQLKit
import SQLiteKit

/// Opens SQLite connections with the settings the embedded database needs under load.
struct TunedSQLiteSource: ConnectionPoolSource {
    let base: SQLiteConnectionSource
    /// Every connection this source opens, so a shutdown can wait until they are all closed.
    var connections: SQLiteConnections
    /// Run on every new connection, in order. `busy_timeout` (how long a connection waits for
    /// another process's write lock) comes first so the others wait for a lock instead of failing
    /// at once when another connection is writing.
    var setUp: [String]

    init(base: SQLiteConnectionSource, connections: SQLiteConnections = .init(), busyTimeoutMilliseconds: Int = 10_000)
    {
        self.base = base
        self.connections = connections
        setUp = [
            "PRAGMA busy_timeout = \(busyTimeoutMilliseconds)", "PRAGMA journal_mode = WAL",
            "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON",
            // Reads come straight from the OS page cache through a memory map instead of a pread
            // per page; each connection also keeps 16 MB of pages of its own.
            "PRAGMA mmap_size = 1073741824", "PRAGMA cache_size = -16384",
        ]
    }

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<SQLiteConnection> {
        connections.opening()
        return base.makeConnection(logger: logger, on: eventLoop).flatMap { connection in
            setUp.reduce(eventLoop.makeSucceededVoidFuture()) { future, statement in
                future.flatMap { connection.query(statement).map { _ in } }
            }
            .map { connection }
            // A connection that could not be set up is closed, not dropped open (SQLiteNIO
            // asserts on that, and the file handle would leak).
            .flatMapError { error in connection.close().flatMapThrowing { throw error } }
        }
        .always { connections.opened(try? $0.get()) }
    }
}

/// The connections an SQLite source opened, and how many it is still opening.
final class SQLiteConnections: Sendable {
    private let state = NIOLockedValueBox((opening: 0, open: [SQLiteConnection]()))

    func opening() {
        state.withLockedValue { $0.opening += 1 }
    }

    /// An open attempt ended: with `connection`, or with an error (`nil`).
    func opened(_ connection: SQLiteConnection?) {
        state.withLockedValue { state in
            state.opening -= 1
            state.open.removeAll(where: \.isClosed)
            if let connection { state.open.append(connection) }
        }
    }

    /// Waits until no connection is being opened and every opened one is closed; `false` if
    /// that has not happened within `limit`.
    func allClosed(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let done = state.withLockedValue { state in
                state.open.removeAll(where: \.isClosed)
                return state.opening == 0 && state.open.isEmpty
            }
            if done { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}

/// An `SQLiteDatabase` over a connection pool, so that each query borrows a connection.
struct PooledSQLiteDatabase: SQLiteDatabase, @unchecked Sendable {
    /// Thread-safe in practice: the pool hops to its event loop for every request.
    let pool: EventLoopConnectionPool<TunedSQLiteSource>
    let logger: Logger

    var eventLoop: any EventLoop { pool.eventLoop }

    func query(
        _ query: String, _ binds: [SQLiteData], logger: Logger, _ onRow: @escaping @Sendable (SQLiteRow) -> Void
    ) -> EventLoopFuture<Void> {
        pool.withConnection(logger: logger) { $0.query(query, binds, logger: logger, onRow) }
    }

    func withConnection<T>(_ closure: @escaping @Sendable (SQLiteConnection) -> EventLoopFuture<T>)
        -> EventLoopFuture<T>
    {
        pool.withConnection(logger: logger, closure)
    }
}
