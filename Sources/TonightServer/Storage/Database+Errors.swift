@preconcurrency import AsyncKit
import PostgresKit
import SQLiteKit

/// What a database error means for the caller, whichever engine and connection raised it.
extension Database {
    /// Whether `error` means the database stayed busy past the busy timeout: SQLite locked by
    /// another writer, this process's write gate not moving, or no pooled connection free.
    public static func isBusy(_ error: any Error) -> Bool {
        if let error = error as? SQLiteError { return error.reason == .busy || error.reason == .locked }
        if let error = error as? SQLiteBulkError { return error.isBusy }
        return error is DatabaseBusyError || error is ConnectionPoolTimeoutError
    }

    /// Whether `error` means the database could not be reached or did not answer in time: a
    /// connection refused, closed or broken, a server shutting down or out of connections, or a
    /// call past its deadline. Only the database's own errors count: a socket or file error of
    /// anything else (a client gone, a media file) is not an outage of the database.
    public static func isUnavailable(_ error: any Error) -> Bool {
        switch error {
        case is DeadlineExceeded, is ConnectionLost:
            return true
        case let error as PSQLError:
            if [.connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed]
                .contains(error.code)
            {
                return true
            }
            // Connection exceptions, a server shutting down or starting, too many connections.
            guard let state = error.serverInfo?[.sqlState] else { return false }
            // A statement cancelled by the server's `statement_timeout` counts too (57014).
            return state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" || state == "57014"
        default:
            return false
        }
    }

    /// Whether `error` is a unique-constraint violation from either engine.
    public static func isUniqueViolation(_ error: any Error) -> Bool {
        if let error = error as? PSQLError {
            return error.serverInfo?[.sqlState] == "23505"
        }
        if let error = error as? SQLiteError {
            return error.reason == .constraintUniqueFailed || error.reason == .constraintPrimaryKeyFailed
                || (error.reason == .constraint && error.message.contains("UNIQUE constraint failed"))
        }
        if let error = error as? SQLiteBulkError { return error.isUniqueViolation }
        return false
    }
}
