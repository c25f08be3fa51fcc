import Foundation
import Logging
import NIOPosix
import SQLKit
import SQLiteKit

/// Backups of the embedded SQLite database (`tonight backup`, `tonight restore`). PostgreSQL has
/// its own tools (`pg_dump`, `pg_restore`; see docs/operations.md).
///
/// A backup is `VACUUM INTO`: one read transaction over the live file, so servers keep reading and
/// writing while it runs (a write waits only for SQLite's usual lock, never for the whole copy),
/// and the copy is the database as of one instant, compacted, with no `-wal` beside it. The copy is
/// checked (`PRAGMA integrity_check`) before the command says it is done.
///
/// A restore replaces the database of a stopped server with a checked copy: the current file is
/// kept beside it (`tonight.sqlite.before-restore-<time>`), the copy is moved in atomically, and
/// the next start applies whatever migrations the copy lacks. A copy written by a newer Tonight
/// (migrations this binary does not know) is refused.
public enum SQLiteBackup {
    /// What a backup or a restore did.
    public struct Summary: Sendable, Equatable {
        /// The file written (the backup, or the restored database).
        public var path: String
        /// Its size in bytes.
        public var bytes: Int64
        /// The migrations it holds.
        public var migrations: Int
    }

    /// Writes a copy of the SQLite database of `config` to `file`, which must not exist yet.
    public static func backup(_ config: AppConfig, to file: String, logger: Logger) async throws -> Summary {
        try requireSQLite(config)
        let source = config.sqlitePath
        guard FileManager.default.fileExists(atPath: source) else {
            throw ConfigurationError("no database at \(source): nothing to back up")
        }
        let target = URL(fileURLWithPath: file).standardizedFileURL.path
        guard !FileManager.default.fileExists(atPath: target) else {
            throw ConfigurationError("\(target) already exists; name a new file")
        }
        let database = Database.openSQLite(
            path: source, poolSize: 1, busyTimeoutMilliseconds: config.databaseBusyTimeoutMilliseconds, logger: logger)
        do {
            try await database.sql.raw("VACUUM INTO \(bind: target)").run()
            try await database.shutdown()
        } catch {
            try? await database.shutdown()
            try? FileManager.default.removeItem(atPath: target)
            throw error
        }
        do {
            return try await check(target, logger: logger)
        } catch {
            try? FileManager.default.removeItem(atPath: target)
            throw error
        }
    }

    /// Replaces the SQLite database of `config` with the backup `file`. Every server on it must
    /// be stopped: a database another process has open is refused (``inUse(_:logger:)``).
    public static func restore(_ config: AppConfig, from file: String, logger: Logger) async throws -> Summary {
        try requireSQLite(config)
        let backup = URL(fileURLWithPath: file).standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: backup) else { throw ConfigurationError("no file at \(backup)") }
        let target = config.sqlitePath
        let companions = [target + "-wal", target + "-shm"]
        if try await inUse(target, logger: logger) {
            throw ConfigurationError("\(target) is in use: stop every server on it first")
        }
        let checked = try await check(backup, logger: logger)
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        let incoming = target + ".restoring"
        try? FileManager.default.removeItem(atPath: incoming)
        try FileManager.default.copyItem(atPath: backup, toPath: incoming)
        if FileManager.default.fileExists(atPath: target) {
            let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
            try FileManager.default.moveItem(atPath: target, toPath: target + ".before-restore-" + stamp)
        }
        for companion in companions { try? FileManager.default.removeItem(atPath: companion) }
        guard rename(incoming, target) == 0 else { throw ConfigurationError("cannot move \(incoming) to \(target)") }
        return Summary(path: target, bytes: checked.bytes, migrations: checked.migrations)
    }

    /// Whether another connection has the database at `path` open. SQLite's exclusive locking
    /// mode, asked for before anything is read, needs the file to itself; in WAL mode every open
    /// connection holds a shared lock that refuses it at once. A database whose server crashed is
    /// not in use: opening it here also folds its leftover `-wal` back in.
    static func inUse(_ path: String, logger: Logger) async throws -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        let connection = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: .singleton, logger: logger,
            on: MultiThreadedEventLoopGroup.singleton.any())
        do {
            // SQLiteNIO's own busy handler retries for ever: no waiting here.
            for statement in [
                "PRAGMA busy_timeout = 0", "PRAGMA locking_mode = EXCLUSIVE", "BEGIN EXCLUSIVE",
                "SELECT count(*) FROM sqlite_master", "COMMIT",
            ] {
                _ = try await connection.query(statement)
            }
            try await connection.close()
            return false
        } catch let error as SQLiteError where error.reason == .busy || error.reason == .locked {
            try? await connection.close()
            return true
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Checks that `file` is a sound Tonight database this binary can open.
    static func check(_ file: String, logger: Logger) async throws -> Summary {
        let database = Database.openSQLite(path: file, poolSize: 1, logger: logger)
        do {
            let integrity = try await database.sql.raw("PRAGMA integrity_check").all()
                .map { try $0.decode(column: "integrity_check", as: String.self) }
            guard integrity == ["ok"] else {
                throw ConfigurationError("\(file) is damaged: \(integrity.prefix(3).joined(separator: "; "))")
            }
            let names = try await database.sql.raw("SELECT name FROM schema_migrations").all()
                .map { try $0.decode(column: "name", as: String.self) }
            let unknown = Set(names).subtracting(Migrations.all.map(\.name))
            guard unknown.isEmpty else {
                throw ConfigurationError(
                    "\(file) was written by a newer Tonight (migrations \(unknown.sorted().joined(separator: ", ")))")
            }
            try await database.shutdown()
            for companion in [file + "-wal", file + "-shm"] { try? FileManager.default.removeItem(atPath: companion) }
            let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value ?? 0
            return Summary(path: file, bytes: size, migrations: names.count)
        } catch let error as ConfigurationError {
            try? await database.shutdown()
            throw error
        } catch {
            try? await database.shutdown()
            throw ConfigurationError("\(file) is not a Tonight database (\(error))")
        }
    }

    private static func requireSQLite(_ config: AppConfig) throws {
        guard !config.usesPostgres else {
            throw ConfigurationError(
                "this server uses PostgreSQL: back up with `pg_dump --format=custom --file=FILE \"$DATABASE_URL\"` "
                    + "and restore with `pg_restore --clean --if-exists --no-owner --dbname=\"$DATABASE_URL\" FILE` "
                    + "(see docs/operations.md)")
        }
    }
}
