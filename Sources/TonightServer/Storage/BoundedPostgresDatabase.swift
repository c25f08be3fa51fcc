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
/// A use whose connection closes under it and that is still unanswered a second or two later
/// throws ``ConnectionLost`` (503 too) without waiting for the deadline. PostgresNIO writes a
/// statement to its connection with no write promise, so a statement written just after the
/// connection closed is dropped, never answered and never failed: a prepared statement, whose
/// write happens on a task rather than on the connection's event loop, hit this in about one
/// outage in four under load (`PreparedOutageTests`).
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
            // The answer is whichever comes first: the work's, the deadline's or the lost
            // connection's. Neither waits for the driver to fail the work: a statement written on
            // a connection that is being closed is sometimes neither answered nor failed, and a
            // use that waited for it would hold its caller (and a test run) for good.
            let answer = connection.eventLoop.makePromise(of: T.self)
            let answered = NIOLockedValueBox(false)
            let finish: @Sendable (Result<T, any Error>) -> Void = { result in
                let first = answered.withLockedValue { done in
                    defer { done = true }
                    return !done
                }
                if first { answer.completeWith(result) }
            }
            // One timer a use, ticking every second (or at the limit, if shorter): past the
            // limit, the deadline; on the second tick that finds the connection closed, the
            // loss (the first leaves rows already read a moment to be handed over).
            let tick = min(limit, .seconds(1))
            let start = NIODeadline.now()
            let closedTicks = NIOLoopBoundBox(0, eventLoop: connection.eventLoop)
            let timer = connection.eventLoop.scheduleRepeatedTask(initialDelay: tick, delay: tick) { timer in
                if NIODeadline.now() - start >= limit {
                    timer.cancel()
                    // Closed first, so the pool does not hand the connection out again; answered
                    // once it is closed, or a second later at the latest.
                    let expired = DeadlineExceeded(limit: .nanoseconds(limit.nanoseconds))
                    connection.close().whenComplete { _ in finish(.failure(expired)) }
                    connection.eventLoop.scheduleTask(in: .seconds(1)) { finish(.failure(expired)) }
                } else if connection.isClosed {
                    closedTicks.value += 1
                    if closedTicks.value == 2 {
                        timer.cancel()
                        finish(.failure(ConnectionLost()))
                    }
                }
            }
            closure(connection).whenComplete { result in
                timer.cancel()
                finish(result)
            }
            return answer.futureResult
        }
    }
}

/// A statement's connection closed and it was never answered (answered 503
/// `database_unavailable`; see ``BoundedPostgresDatabase``).
struct ConnectionLost: Error, CustomStringConvertible {
    var description: String { "the database connection closed before the statement was answered" }
}
