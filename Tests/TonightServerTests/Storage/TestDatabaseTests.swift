import Foundation
import Logging
import Synchronization
import Testing

@testable import TonightServer

/// The PostgreSQL databases the tests make are dropped when each test ends: a full run makes
/// hundreds of about 12 MB each, and kept they once filled the disk a later CI build needed.
@Suite("Test databases")
struct TestDatabaseTests {
    @Test("a test's database is dropped when it ends, one behind a proxy too, and after a failure")
    func dropped() async throws {
        guard Backend.available.contains(.postgres) else { return }
        let used = Mutex<[String]>([])
        try await withApp(.postgres) { services, _ in used.withLock { $0.append(services.config.databaseURL) } }
        let (_, viaProxy) = try await postgresBehindProxy()
        try await withApp(.postgres, configure: { $0.databaseURL = viaProxy }) { services, _ in
            used.withLock { $0.append(services.config.databaseURL) }
        }
        struct Failed: Error {}
        await #expect(throws: Failed.self) {
            try await withApp(.postgres) { services, _ in
                used.withLock { $0.append(services.config.databaseURL) }
                throw Failed()
            }
        }
        let names = names(used.withLock { $0 })
        #expect(names.count == 3)
        #expect(try await existing(names).isEmpty)
    }

    @Test("a suite marked dropsTestDatabases drops the databases its tests made themselves")
    func droppedBySuite() async throws {
        guard Backend.available.contains(.postgres) else { return }
        let made = Mutex<[String]>([])
        try await DropsTestDatabases().provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            let url = try await testConfig(.postgres).databaseURL
            made.withLock { $0.append(url) }
            #expect(try await existing(names(made.withLock { $0 })).count == 1)
        }
        #expect(try await existing(names(made.withLock { $0 })).isEmpty)
    }

    /// The database names in `urls`.
    func names(_ urls: [String]) -> [String] {
        urls.compactMap { URLComponents(string: $0)?.path.dropFirst() }.map(String.init)
    }

    /// Which of `names` the PostgreSQL server still has.
    func existing(_ names: [String]) async throws -> [String] {
        let admin = try Database.open(
            url: Backend.postgresURL, sqlitePath: "", poolSize: 1, logger: Logger(label: "test-admin"))
        struct Row: Decodable { var datname: String }
        let rows: [Row]
        do {
            rows = try await admin.sql.raw("SELECT datname FROM pg_database").all(decoding: Row.self)
        } catch {
            try? await admin.shutdown()
            throw error
        }
        try await admin.shutdown()
        let all = Set(rows.map(\.datname))
        return names.filter(all.contains)
    }
}
