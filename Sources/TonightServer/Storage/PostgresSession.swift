import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresKit
import SQLKit

/// A PostgreSQL transaction's connection as SQLKit sees it (``Database/transaction(_:)``), which
/// also hands out the connection itself: for a prepared statement inside the transaction
/// (``Database/execute(prepared:on:)``). Everything else goes to PostgresKit's own session.
struct PostgresSession: SQLDatabase {
    /// The transaction's connection.
    let connection: PostgresConnection
    private let base: any SQLDatabase
    /// Set when the connection must not go back to the pool: it is closed once the transaction
    /// has ended (``Database/execute(prepared:on:)``).
    let discarded = NIOLockedValueBox(false)

    init(_ connection: PostgresConnection) {
        self.connection = connection
        base = connection.sql(queryLogLevel: nil)
    }

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await base.execute(sql: query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }
}
