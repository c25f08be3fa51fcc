import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import SQLiteKit
import Testing
import TonightCore

@testable import TonightServer

@Suite("Storage: repositories and migrations on SQLite and PostgreSQL", .dropsTestDatabases)
struct StorageTests {
    @Test("an SQLite connection whose set-up fails is closed and the error reported, not leaked open")
    func failedSetUp() async throws {
        let threads = NIOThreadPool(numberOfThreads: 1)
        threads.start()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("setup-\(UUID().uuidString).sqlite")
        var source = TunedSQLiteSource(
            base: .init(configuration: .init(storage: .file(path: path.path)), threadPool: threads))
        source.setUp.append("SELECT * FROM no_such_table")
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        await #expect(throws: (any Error).self) {
            try await source.makeConnection(logger: Logger(label: "setup"), on: loop).get()
        }
        source.setUp.removeLast()
        let connection = try await source.makeConnection(logger: Logger(label: "setup"), on: loop).get()
        try await connection.close().get()
        try await threads.shutdownGracefully()
    }

    @Test("an SQLite shutdown during a running query waits for it and closes its connection")
    func shutdownDuringQuery() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("busy-\(UUID().uuidString).sqlite")
        let database = Database.openSQLite(path: path.path, poolSize: 2, logger: Logger(label: "busy"))
        let started = Date()
        let (holding, connected) = AsyncStream.makeStream(of: Void.self)
        let query = Task {
            try await database.sql.withSession { connection in
                connected.yield()
                return try await connection.raw(
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) AS n FROM c"
                ).first()?.decode(column: "n", as: Int.self)
            }
        }
        for await _ in holding { break }
        // Before the fix the pool's threads stopped here while the query held its connection;
        // the connection could then not be closed and SQLiteNIO asserted when it was freed.
        try await database.shutdown()
        #expect(try await query.value == 3_000_000)
        // A hang detector, not a timing goal: the query alone takes seconds, much longer with the
        // whole suite on two cores; before the fix this never returned.
        #expect(Date().timeIntervalSince(started) < 120)
    }

    @Test("a nearby search reads positions from the geo index alone, never the table (SQLite plan)")
    func nearbyPlanIsCovering() async throws {
        let services = try await open(.sqlite)
        for radius in [300.0, 2000] {
            var query = PlaceQuery()
            query.near = GeoPoint(latitude: 48.8566, longitude: 2.3522)
            query.radius = radius
            let sql = try #require(PlaceRepository.nearbySQL(query))
            let plan = try await services.database.sql.raw("EXPLAIN QUERY PLAN " + sql).all()
                .map { try $0.decode(column: "detail", as: String.self) }
            let searches = plan.filter { $0.contains("places") }
            #expect(!searches.isEmpty)
            #expect(searches.allSatisfy { $0.contains("COVERING INDEX places_cell_geo") }, "\(plan)")
        }
        try await services.database.shutdown()
    }

    func open(_ backend: Backend, configure: (inout AppConfig) -> Void = { _ in }) async throws -> AppServices {
        var config = try await testConfig(backend)
        configure(&config)
        return try await AppServices.make(config: config, logger: Logger(label: "storage-test"))
    }

    /// Runs `body` on fresh storage and shuts it down however `body` ends (a pool left open
    /// stops the whole test process when it is released).
    func withStorage(
        _ backend: Backend, configure: (inout AppConfig) -> Void = { _ in }, _ body: (AppServices) async throws -> Void
    ) async throws {
        let services = try await open(backend, configure: configure)
        try await droppingTestDatabase(services.config.databaseURL) {
            do {
                try await body(services)
            } catch {
                try? await services.database.shutdown()
                throw error
            }
            try await services.database.shutdown()
        }
    }

    func user(_ name: String) -> UserRecord {
        UserRecord(
            id: Identifier.make(), isAnonymous: false, username: name, usernameKey: name.lowercased(),
            email: "\(name)@example.com", emailKey: "\(name.lowercased())@example.com", passwordHash: "x",
            role: .user, showNameOnPosts: true, preferences: "{}", createdAt: 1, updatedAt: 1)
    }

    @Test("migrations are recorded and running them again changes nothing", arguments: Backend.available)
    func migrations(backend: Backend) async throws {
        try await withStorage(backend) { (services: AppServices) async throws in
            let again = try await MigrationRunner(database: services.database, logger: services.logger).run()
            #expect(again.isEmpty)
            let names = try await services.database.sql.raw("SELECT name FROM schema_migrations ORDER BY name").all()
                .map { try $0.decode(column: "name", as: String.self) }
            #expect(names == Migrations.all.map(\.name))
        }
    }

    @Test("users: insert, find by key, unique keys, profile update, delete", arguments: Backend.available)
    func users(backend: Backend) async throws {
        try await withStorage(backend) { (services: AppServices) async throws in
            let repository = UserRepository(db: services.database.sql)
            var alice = user("Alice")
            try await repository.insert(alice)
            #expect(try await repository.find(id: alice.id) == alice)
            #expect(try await repository.find(loginKey: "alice")?.id == alice.id)
            #expect(try await repository.find(loginKey: "alice@example.com")?.id == alice.id)
            #expect(try await repository.usernameTaken("alice"))
            #expect(try await !repository.emailTaken("bob@example.com"))

            var clash = user("ALICE")
            clash.emailKey = "other@example.com"
            do {
                try await repository.insert(clash)
                Issue.record("a duplicate username key was stored")
            } catch {
                #expect(Database.isUniqueViolation(error))
            }

            alice.bio = "Hello"
            alice.showNameOnPosts = false
            alice.preferences = #"{"budget":10}"#
            try await repository.updateProfile(alice)
            #expect(try await repository.find(id: alice.id) == alice)
            try await repository.delete(id: alice.id)
            #expect(try await repository.find(id: alice.id) == nil)
        }
    }

    @Test("refresh rotation is exactly-once under racing rotations", arguments: Backend.available)
    func rotationRace(backend: Backend) async throws {
        // 50 racers, each with a connection (PostgreSQL) or the patience to wait for the write gate
        // (SQLite) under the whole suite's load: the race is what is checked, not the pool.
        let patient: (inout AppConfig) -> Void = {
            $0.databasePoolSize = backend == .postgres ? 60 : 8
            $0.databaseBusyTimeoutMilliseconds = 60_000
        }
        try await withStorage(backend, configure: patient) { (services: AppServices) async throws in
            let users = UserRepository(db: services.database.sql)
            let logins = LoginRepository(database: services.database)
            let alice = user("alice")
            try await users.insert(alice)
            let loginID = try await logins.create(
                userID: alice.id, userAgent: nil, tokenHash: "h0", expiresAt: .max, now: 1)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await logins.rotate(
                            oldHash: "h0", newHash: "h\(index + 1)", loginID: loginID, expiresAt: .max, now: 2)
                    }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(wins == 1)
            #expect(try await logins.findToken(hash: "h0")?.usedAt == 2)
            try await logins.revoke(loginID: loginID, now: 3)
            #expect(try await logins.findToken(hash: "h0")?.revokedAt == 3)
        }
    }

    @Test("idempotency keys: one reservation wins, completion is stored", arguments: Backend.available)
    func idempotencyKeys(backend: Backend) async throws {
        try await withStorage(backend) { (services: AppServices) async throws in
            let repository = IdempotencyRepository(db: services.database.sql)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<30 {
                    group.addTask { try await repository.reserve(scope: "u", key: "k", requestHash: "h", now: 5) }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(wins == 1)
            try await repository.complete(
                scope: "u", key: "k", status: 201, contentType: "application/json",
                retryAfter: nil, body: "e30=")
            let record = try #require(try await repository.find(scope: "u", key: "k"))
            #expect(record.status == 201)
            #expect(record.body == "e30=")
            try await repository.purge(before: 6)
            #expect(try await repository.find(scope: "u", key: "k") == nil)
        }
    }

    @Test("a failed transaction leaves nothing behind", arguments: Backend.available)
    func transactionRollback(backend: Backend) async throws {
        try await withStorage(backend) { (services: AppServices) async throws in
            let alice = user("alice")
            await #expect(throws: Boom.self) {
                try await services.database.transaction { db in
                    try await UserRepository(db: db).insert(alice)
                    throw Boom()
                }
            }
            #expect(try await UserRepository(db: services.database.sql).find(id: alice.id) == nil)
        }
    }

    /// Failed before on PostgreSQL: the transaction returned as if committed, and alice was gone
    /// (its `COMMIT` had rolled back the aborted transaction without an error).
    @Test(
        "a body that catches a statement's error: PostgreSQL throws it and keeps nothing, SQLite keeps the rest",
        arguments: Backend.available)
    func caughtStatementError(backend: Backend) async throws {
        try await withStorage(backend) { (services: AppServices) async throws in
            let alice = user("alice")
            let commit = {
                try await services.database.transaction { db in
                    try await UserRepository(db: db).insert(alice)
                    // The same user again breaks a unique index; the body carries on.
                    _ = try? await UserRepository(db: db).insert(alice)
                }
            }
            let stored = { try await UserRepository(db: services.database.sql).find(id: alice.id) }
            if backend == .postgres {
                await #expect(throws: PSQLError.self) { try await commit() }
                #expect(try await stored() == nil)
            } else {
                try await commit()
                #expect(try await stored()?.username == "alice")
            }
        }
    }
}
