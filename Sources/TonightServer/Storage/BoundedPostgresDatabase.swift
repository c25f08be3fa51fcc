@preconcurrency import AsyncKit
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresKit

/// The PostgreSQL pool as PostgresKit sees it, with a deadline on every use of a connection: one
/// query outside a transaction, or a whole transaction (``Database/transaction(_:)``). A use that
/// outlasts it has its connection closed, which ends the query at once (a database behind a
/// network path that died without a reset would otherwise hold it for good), throws
/// ``DeadlineExceeded`` (503 `database_unavailable`), and keeps the connection out of the pool.
///
/// The limit is `DATABASE_QUERY_TIMEOUT_MS` (30 s; 0 turns it off). Work that may run longer on
/// purpose — migrations, imports from the command line — runs inside ``unbounded``.
struct BoundedPostgresDatabase: PostgresDatabase {
    /// Set for work that may hold a connection past the limit.
    @TaskLocal static var unbounded = false

    let pool: EventLoopGroupConnectionPool<PostgresConnectionSource>
    let logger: Logger
    let limit: TimeAmount?

    var eventLoop: any EventLoop { pool.eventLoopGroup.any() }

    func send(_ request: any PostgresRequest, logger: Logger) -> EventLoopFuture<Void> {
        withConnection { $0.send(request, logger: logger) }
    }

    func withConnection<T>(_ closure: @escaping (PostgresConnection) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard let limit, !Self.unbounded else { return pool.withConnection(logger: logger, closure) }
        return pool.withConnection(logger: logger) { connection in
            let expired = NIOLockedValueBox(false)
            let timer = connection.eventLoop.scheduleTask(in: limit) {
                expired.withLockedValue { $0 = true }
                let closing: EventLoopFuture<Void> = connection.close()
                closing.whenComplete { _ in }
            }
            return closure(connection).flatMapErrorThrowing { error in
                guard expired.withLockedValue({ $0 }) else { throw error }
                throw DeadlineExceeded(limit: .nanoseconds(limit.nanoseconds))
            }.always { _ in timer.cancel() }
        }
    }
}
