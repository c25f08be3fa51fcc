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
            // The answer is whichever comes first: the work's, or the deadline's. The deadline
            // does not wait for the driver to fail the work: a query written on a connection
            // that is being closed is sometimes neither answered nor failed, and a use that
            // waited for it would hold its caller (and a test run) for good.
            let answer = connection.eventLoop.makePromise(of: T.self)
            let answered = NIOLockedValueBox(false)
            let finish: @Sendable (Result<T, any Error>) -> Void = { result in
                let first = answered.withLockedValue { done in
                    defer { done = true }
                    return !done
                }
                if first { answer.completeWith(result) }
            }
            let timer = connection.eventLoop.scheduleTask(in: limit) {
                // Closed first, so the pool does not hand the connection out again; answered
                // once it is closed, or a second later at the latest.
                let expired = DeadlineExceeded(limit: .nanoseconds(limit.nanoseconds))
                connection.close().whenComplete { _ in finish(.failure(expired)) }
                connection.eventLoop.scheduleTask(in: .seconds(1)) { finish(.failure(expired)) }
            }
            closure(connection).whenComplete { result in
                timer.cancel()
                finish(result)
            }
            return answer.futureResult
        }
    }
}
