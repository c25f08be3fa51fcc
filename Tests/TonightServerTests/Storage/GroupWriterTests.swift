import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TonightServer

/// SQLite's group writer (``Database/groupWrite(_:)``): a connection of its own for a group of
/// chat messages, whose errors must mean what the pool's do.
@Suite("SQLite's group writer")
struct GroupWriterTests {
    /// Before, every error of the bulk connection was unknown to `isBusy` and `isUniqueViolation`:
    /// a busy file would have been a 500, a client id sent twice at once a failed message.
    @Test("its busy file and its unique violations are told apart as the pool's errors are")
    func errorsMeanTheSame() async throws {
        try await withApp(.sqlite) { services, _ in
            let path = try #require(services.database.sqlitePath)
            let holder = try SQLiteBulkConnection(path: path, logger: services.logger)
            let waiter = try SQLiteBulkConnection(path: path, busyTimeoutMilliseconds: 50, logger: services.logger)
            defer {
                holder.close()
                waiter.close()
            }
            try await holder.exec("BEGIN IMMEDIATE")
            do {
                try await waiter.exec("BEGIN IMMEDIATE")
                Issue.record("a second writer got the lock")
            } catch {
                #expect(Database.isBusy(error), "\(error)")
                #expect(!Database.isUniqueViolation(error))
            }
            try await holder.exec("ROLLBACK")

            try await holder.exec("CREATE TEMP TABLE once (id TEXT PRIMARY KEY, other TEXT UNIQUE)")
            _ = try await holder.rows(prepared: "INSERT INTO once VALUES (?1, ?2)", [.text("a"), .text("x")])
            for values in [["a", "y"], ["b", "x"]] {
                do {
                    _ = try await holder.rows(prepared: "INSERT INTO once VALUES (?1, ?2)", values.map { .text($0) })
                    Issue.record("\(values) was stored twice")
                } catch {
                    #expect(Database.isUniqueViolation(error), "\(error)")
                    #expect(!Database.isBusy(error))
                }
            }
            // The kept statement is reset after a failure: it runs again.
            _ = try await holder.rows(prepared: "INSERT INTO once VALUES (?1, ?2)", [.text("b"), .text("y")])
            #expect(
                try await holder.rows("SELECT count(*) AS n FROM once").first?.decode(column: "n", as: Int.self) == 2)
        }
    }

    /// Failed before: the group's deadline equalled SQLite's busy timeout, so a message answered
    /// 503 could still be waiting for the lock, and was stored once the lock came free.
    @Test("messages sent while another process holds the write lock answer 503 database_busy and are not stored")
    func busyFile() async throws {
        try await withApp(.sqlite, configure: { $0.databaseBusyTimeoutMilliseconds = 300 }) { services, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            try await client.befriend(ana, ben)
            let id = try await client.conversation(ana, with: ben)
            #expect(try await client.say("first", in: id, as: ana).status == .created)

            let other = try SQLiteBulkConnection(
                path: try #require(services.database.sqlitePath), logger: services.logger)
            defer { other.close() }
            try await other.exec("BEGIN IMMEDIATE")
            // Alone, and a group at once.
            let refused = try await client.say("while locked", in: id, as: ben)
            let together = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<8 { group.addTask { try await client.say("locked \(index)", in: id, as: ana) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for response in together + [refused] {
                #expect(response.status == .serviceUnavailable, "\(response.text)")
                #expect(response.json["code"] as? String == "database_busy")
                #expect(response.headers[.retryAfter] != nil)
            }
            try await other.exec("ROLLBACK")

            #expect(try await client.say("after", in: id, as: ben).status == .created)
            let texts = try await services.chat.messages(in: id, before: nil, since: 0, limit: 20).map(\.text)
            #expect(texts == ["first", "after"])
        }
    }
}
