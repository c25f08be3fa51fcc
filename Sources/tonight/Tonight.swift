import ArgumentParser
import Foundation
import Hummingbird
import Logging
import TonightDemo
import TonightServer

/// The `tonight` command: run the server and administer it.
@main
struct Tonight: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Tonight: the self-hostable backend for \"where do we go tonight\" apps.",
        subcommands: [
            Serve.self, Migrate.self, Import.self, Demo.self, Admin.self, Backup.self, Restore.self, Version.self,
        ])
}

/// Options every command that opens the database shares. Values given here override the
/// environment and `.env`.
struct StorageOptions: ParsableArguments {
    @Option(help: "Directory for the SQLite database, the signing key and media (default ./data).")
    var dataDir: String?

    @Option(help: "postgres://user:pass@host/db to use PostgreSQL instead of SQLite.")
    var databaseURL: String?

    var overrides: [String: String] {
        var values: [String: String] = [:]
        if let dataDir { values["DATA_DIR"] = dataDir }
        if let databaseURL { values["DATABASE_URL"] = databaseURL }
        return values
    }
}

/// What a one-shot command (import, migrate, demo, admin) prints: what was asked for — a progress
/// bar on a terminal for long imports, then the summary — and warnings. The server's start-up lines
/// (migrations applied, push off, media folder) stay behind `--verbose`; `LOG_LEVEL` in the
/// environment still wins.
struct OneShotOptions: ParsableArguments {
    @Flag(help: "Also print the server's start-up lines (migrations applied, push, media).")
    var verbose = false

    /// `storage`'s overrides, quiet unless `--verbose` or `LOG_LEVEL` says otherwise.
    func overrides(_ storage: StorageOptions) -> [String: String] {
        var values = storage.overrides
        if !verbose && ProcessInfo.processInfo.environment["LOG_LEVEL"] == nil { values["LOG_LEVEL"] = "warning" }
        return values
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP and WebSocket server.")

    @Option(help: "Address to bind (default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on (default 8080).") var port: Int?
    @Flag(help: "Fill the database with a demo city in Berlin once it is running (unless it is there).")
    var demo = false
    @OptionGroup var storage: StorageOptions

    func run() async throws {
        var overrides = storage.overrides
        if let host { overrides["HTTP_HOST"] = host }
        if let port { overrides["HTTP_PORT"] = String(port) }
        let config = try await AppConfig.load(overrides: overrides)
        _ = Observability.registry
        if demo { return try await DemoRun.serve(config) }
        let app = try await buildApplication(config)
        try await runUntilStopped(app, config: config, logger: app.logger)
    }
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fill a database with the demo city (Berlin venues, shows, people, clips, sessions) and exit.")

    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OneShotOptions

    func run() async throws {
        let config = try await AppConfig.load(overrides: output.overrides(storage))
        let summary = try await DemoRun.seedOnce(config)
        if summary.alreadySeeded { print("the demo city was already there") }
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and exit.")

    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OneShotOptions

    func run() async throws {
        let config = try await AppConfig.load(overrides: output.overrides(storage))
        let services = try await AppServices.make(config: config)
        try await services.database.shutdown()
        print("database is up to date")
    }
}

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the SQLite database to a new file while servers keep running (PostgreSQL: pg_dump).")

    @Argument(help: "The file to write (must not exist).") var file: String
    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OneShotOptions

    func run() async throws {
        let config = try await AppConfig.load(overrides: output.overrides(storage))
        let summary = try await SQLiteBackup.backup(config, to: file, logger: Logger(label: "tonight"))
        print("backed up to \(summary.path) (\(summary.bytes) bytes, \(summary.migrations) migrations)")
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the SQLite database of a stopped server with a backup (PostgreSQL: pg_restore).")

    @Argument(help: "The backup to restore.") var file: String
    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OneShotOptions

    func run() async throws {
        let config = try await AppConfig.load(overrides: output.overrides(storage))
        let summary = try await SQLiteBackup.restore(config, from: file, logger: Logger(label: "tonight"))
        print("restored \(summary.path) (\(summary.migrations) migrations; the next start applies any newer ones)")
    }
}

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administration.", subcommands: [CreateUser.self, Report.self])

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Daily actives, posts and votes per city (UTC days), from the database.")

        @Option(help: "How many days back (default 7).") var days: Int = 7
        @OptionGroup var storage: StorageOptions
        @OptionGroup var output: OneShotOptions

        func run() async throws {
            let config = try await AppConfig.load(overrides: output.overrides(storage))
            let services = try await AppServices.make(config: config)
            let rows = try await services.report(days: days)
            try await services.database.shutdown()
            print("day         city                                      actives    posts    votes")
            for row in rows {
                let city = row.city == "all" ? "(all cities)" : row.city
                print(
                    row.day + "  " + city.padding(toLength: 40, withPad: " ", startingAt: 0)
                        + String(row.activeUsers).leftPadded(9) + String(row.posts).leftPadded(9)
                        + String(row.votes).leftPadded(9))
            }
            if rows.isEmpty { print("(no activity in the last \(days) days)") }
        }
    }

    struct CreateUser: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-user", abstract: "Create an account, e.g. the first admin.")

        @Option(help: "Username (3–30 of a-z 0-9 _ .).") var username: String
        @Option(help: "Email address.") var email: String
        @Option(help: "Password; if omitted, read from TONIGHT_PASSWORD or standard input.") var password: String?
        @Option(help: "user, moderator or admin.") var role: String = "user"
        @OptionGroup var storage: StorageOptions
        @OptionGroup var output: OneShotOptions

        func run() async throws {
            guard let role = Role(rawValue: role) else {
                throw ValidationError("--role must be user, moderator or admin")
            }
            let secret =
                password ?? ProcessInfo.processInfo.environment["TONIGHT_PASSWORD"]
                ?? readLine(strippingNewline: true) ?? ""
            let config = try await AppConfig.load(overrides: output.overrides(storage))
            let services = try await AppServices.make(config: config)
            do {
                let id = try await services.createUser(username: username, email: email, password: secret, role: role)
                print("created \(role.rawValue) \(username) (\(id))")
                try await services.database.shutdown()
            } catch let error as APIError {
                try await services.database.shutdown()
                let fields = error.fields.map { "\($0.field): \($0.message)" }.joined(separator: "; ")
                throw ValidationError(fields.isEmpty ? error.detail : fields)
            }
        }
    }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the version.")

    func run() {
        print("tonight \(TonightVersion.current)")
    }
}

extension String {
    /// The string right-aligned in `width` columns.
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
