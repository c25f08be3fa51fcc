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
    /// The first error the server answered a statement with: from then on the transaction is
    /// aborted, and ``Database/transaction(_:)`` throws it rather than commit.
    private let firstFailure = NIOLockedValueBox<PSQLError?>(nil)

    init(_ connection: PostgresConnection) {
        self.connection = connection
        base = connection.sql(queryLogLevel: nil)
    }

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    /// The first error the server answered a statement of this transaction with.
    var failure: PSQLError? { firstFailure.withLockedValue { $0 } }

    /// Notes `error` if the server answered with it (which aborted the transaction).
    func record(_ error: any Error) {
        guard let error = error as? PSQLError, error.code == .server else { return }
        firstFailure.withLockedValue { if $0 == nil { $0 = error } }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        base.execute(sql: query, onRow).flatMapErrorThrowing { [self] error in
            record(error)
            throw error
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        do {
            try await base.execute(sql: query, onRow)
        } catch {
            record(error)
            throw error
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }
}
