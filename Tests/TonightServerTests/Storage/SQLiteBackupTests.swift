import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import Testing

@testable import TonightServer

/// `tonight backup` and `tonight restore` on the embedded SQLite database.
@Suite("SQLite backup and restore")
struct SQLiteBackupTests {
    let logger = Logger(label: "backup-test")

    @Test("a backup taken while members sign up restores into a server with everything up to that instant")
    func backupUnderWritesRestores() async throws {
        try await withApp(.sqlite) { services, client in
            let first = try await client.member("before")
            let stop = NIOLockedValueBox(false)
            let made = NIOLockedValueBox(0)
            let writing = Task {
                while !stop.withLockedValue({ $0 }) {
                    _ = try await client.member("writer\(made.withLockedValue { $0 })")
                    made.withLockedValue { $0 += 1 }
                }
            }
            // Sign-ups on either side of the backup (however slowly the machine runs them).
            func madeReaches(_ count: Int) async throws {
                while made.withLockedValue({ $0 }) < count { try await Task.sleep(for: .milliseconds(5)) }
            }
            try await madeReaches(1)
            let file = services.config.dataDirectory + "-backup.sqlite"
            let summary = try await SQLiteBackup.backup(services.config, to: file, logger: logger)
            // (+2: the sign-up in flight during the backup may have been in it.)
            try await madeReaches(made.withLockedValue { $0 } + 2)
            stop.withLockedValue { $0 = true }
            try await writing.value
            #expect(summary.migrations == Migrations.all.count)
            #expect(summary.bytes > 0)
            let total = try #require(try await rowCount("users", in: services))

            // A second backup to the same file is refused (nothing is overwritten).
            await #expect(throws: ConfigurationError.self) {
                try await SQLiteBackup.backup(services.config, to: file, logger: logger)
            }
            // The running server's database is in use: not replaced.
            let inUse = await #expect(throws: ConfigurationError.self) {
                try await SQLiteBackup.restore(services.config, from: file, logger: logger)
            }
            #expect(inUse?.description.contains("in use") == true)

            var restored = services.config
            restored.dataDirectory = services.config.dataDirectory + "-restored"
            _ = try await SQLiteBackup.restore(restored, from: file, logger: logger)
            let second = try await AppServices.make(config: restored, logger: logger)
            let users = try #require(try await rowCount("users", in: second))
            #expect(users >= 2 && users < total, "the backup holds \(users) of \(total)")
            let found = try await second.database.sql.raw("SELECT id FROM users WHERE id = \(bind: first.id)").all()
            #expect(found.count == 1)
            try await second.database.shutdown()
            // Restoring over an existing, stopped database keeps the old file beside it.
            _ = try await SQLiteBackup.restore(restored, from: file, logger: logger)
            let kept = try FileManager.default.contentsOfDirectory(atPath: restored.dataDirectory)
            #expect(kept.contains { $0.hasPrefix("tonight.sqlite.before-restore-") }, "\(kept)")
        }
    }

    @Test("damaged, foreign and newer files are refused; PostgreSQL points to pg_dump")
    func refusals() async throws {
        let config = try await testConfig(.sqlite)
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        let garbage = config.dataDirectory + "/garbage.sqlite"
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: garbage))
        let damaged = await #expect(throws: ConfigurationError.self) {
            try await SQLiteBackup.restore(config, from: garbage, logger: logger)
        }
        #expect(damaged?.description.contains("not a Tonight database") == true)

        // A database from a newer Tonight: a migration this binary does not know.
        let services = try await AppServices.make(config: config, logger: logger)
        try await services.database.sql.raw(
            "INSERT INTO schema_migrations (name, applied_at) VALUES ('9999_from_the_future', 0)"
        ).run()
        let newer = config.dataDirectory + "/newer.sqlite"
        await #expect(throws: ConfigurationError.self) {
            try await SQLiteBackup.backup(config, to: newer, logger: logger)
        }
        #expect(!FileManager.default.fileExists(atPath: newer))
        try await services.database.shutdown()

        var postgres = config
        postgres.databaseURL = "postgres://example/tonight"
        let refused = await #expect(throws: ConfigurationError.self) {
            try await SQLiteBackup.backup(postgres, to: newer, logger: logger)
        }
        #expect(refused?.description.contains("pg_dump") == true)
    }
}
