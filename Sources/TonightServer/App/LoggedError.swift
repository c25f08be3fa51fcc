import Logging
import OpenAPIRuntime
import PostgresNIO
import SQLiteKit

/// What a log line may say about an error: its type, the operation it happened in, and for
/// database errors their code. Never the error's own description: the OpenAPI runtime's
/// `ServerError` describes the whole request (headers with the bearer token, the decoded input
/// with a password), and database errors may quote values. Every log line about a failure goes
/// through here.
enum LoggedError {
    /// Metadata for a log line about `error`.
    static func metadata(_ error: any Error) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        var error = error
        if let server = error as? ServerError {
            metadata["operation_id"] = .string(server.operationID)
            error = server.underlyingError
        }
        metadata["error.type"] = .string(String(describing: type(of: error)))
        switch error {
        case let database as PSQLError:
            metadata["error.code"] = .string(database.code.description)
            if let state = database.serverInfo?[.sqlState] { metadata["error.sqlstate"] = .string(state) }
        case let database as SQLiteError:
            metadata["error.code"] = .string("\(database.reason)")
        case let api as APIError:
            metadata["error.code"] = .string(api.code.rawValue)
        default:
            break
        }
        return metadata
    }
}
