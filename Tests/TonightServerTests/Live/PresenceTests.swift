import Foundation
import HummingbirdTesting
import PostgresNIO
import SQLiteKit
import Testing

@testable import TonightServer

/// Presence across instances (``PresenceService``): a lease per instance and user.
@Suite("Presence across instances")
struct PresenceTests {
    /// Failed before: closing the socket on one instance set the member offline everywhere,
    /// though the other instance still held one (their messages then made a notice and a push).
    @Test("a member with sockets on two instances stays online when one closes; offline when both have")
    func oneClosedSocketHidesNoOther() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTwoInstances { _, clientA, _, clientB in
            let ana = try await clientA.member("ana")
            let ben = try await clientA.member("ben")
            try await clientA.befriend(ana, ben)
            let conversation = try await clientA.conversation(ana, with: ben)
            @Sendable func online() async throws -> Bool {
                let view = try await clientA.send(.get, "/v1/conversations/\(conversation)", token: ana.token)
                return (view.json["presence"] as? JSON)?["online"] as? Bool ?? false
            }
            let portA = try #require(clientA.port)
            let portB = try #require(clientB.port)
            try await withSocket(port: portA, token: ben.token) { _, _ in
                try await withSocket(port: portB, token: ben.token) { _, _ in
                    let connected = try await holds(within: .seconds(15)) { try await online() }
                    #expect(connected)
                }
                // B has released its lease; A's holds.
                try await Task.sleep(for: .milliseconds(300))
                #expect(try await online())
            }
            // A liveness check, not a speed one: a loaded run (the whole suite on two cores) took longer than 2 s.
            let gone = try await holds(within: .seconds(15)) { try await !online() }
            #expect(gone)
        }
    }

    @Test(
        "a member is online until the latest live lease of any instance; a run-out lease counts for nothing",
        arguments: Backend.available)
    func leasesBoundPresence(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let ben = try await client.member("ben")
            let leases = PresenceRepository(database: services.database)
            let chat = ChatRepository(db: services.database.sql, database: services.database)
            func onlineUntil() async throws -> Int64 { try await chat.presence(of: [ben.id])[ben.id]?.onlineUntil ?? 0 }
            let now = Clock.millis()
            // An instance that crashed renewed last until now + 60 s; a live one holds a shorter lease.
            try await leases.renew([ben.id], instance: "crashed", until: now + 60_000, now: now)
            try await leases.renew([ben.id], instance: "alive", until: now + 30_000, now: now)
            #expect(try await onlineUntil() == now + 60_000)
            // The live one's last socket closes: online until the crashed one's lease ends, no longer.
            try await leases.release(ben.id, instance: "alive", now: now + 1)
            #expect(try await onlineUntil() == now + 60_000)
            // A lease that has run out keeps nobody online.
            try await leases.renew([ben.id], instance: "alive", until: now + 30_000, now: now)
            try await leases.release(ben.id, instance: "alive", now: now + 61_000)
            #expect(try await onlineUntil() == now + 61_000)
            try await leases.purge(before: now + 61_000)
            let left = try await services.database.sql.raw("SELECT COUNT(*) AS n FROM presence_leases").first()?
                .decode(column: "n", as: Int.self)
            #expect(left == 0)
        }
    }

    @Test(
        "a stopping instance releases all its leases at once; other instances' leases hold",
        arguments: Backend.available)
    func stoppingReleasesAll(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let leases = PresenceRepository(database: services.database)
            let chat = ChatRepository(db: services.database.sql, database: services.database)
            let now = Clock.millis()
            try await leases.renew([ana.id, ben.id], instance: "stopping", until: now + 15_000, now: now)
            try await leases.renew([ben.id], instance: "other", until: now + 10_000, now: now)
            try await leases.releaseAll(instance: "stopping", now: now + 1)
            let presence = try await chat.presence(of: [ana.id, ben.id])
            #expect(presence[ana.id]?.onlineUntil == now + 1)
            #expect(presence[ben.id]?.onlineUntil == now + 10_000)
            #expect(try await rowCount("presence_leases", in: services) == 1)
        }
    }

    /// Failed before (PostgreSQL): a lease renewed or released while the account was deleted locked
    /// the lease and then the user, the deletion the user and then (cascading) the lease: a deadlock,
    /// and `DELETE /v1/me` answered 500 (seen once in a full test run).
    @Test(
        "deleting accounts while their presence leases renew and release: every deletion succeeds",
        arguments: Backend.available)
    func deletionsRaceLeases(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let leases = PresenceRepository(database: services.database)
            var ids: [String] = []
            for i in 0..<30 { ids.append(try await client.member("racer\(i)").id) }
            let now = Clock.millis()
            for id in ids { try await leases.renew([id], instance: "b", until: now + 60_000, now: now) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for id in ids {
                    group.addTask {
                        for round in 0..<20 {
                            do {
                                try await leases.renew(
                                    [id], instance: "a", until: now + 15_000, now: now + Int64(round))
                                try await leases.release(id, instance: "b", now: now + Int64(round))
                                try await leases.renew(
                                    [id], instance: "b", until: now + 15_000, now: now + Int64(round))
                            } catch  where Self.userGone(error) {
                                return  // the account went first: its lease has nothing to refer to
                            }
                        }
                    }
                    group.addTask {
                        try await Task.sleep(for: .milliseconds(Int.random(in: 0...30)))
                        try await services.users.delete(id: id)
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await rowCount("presence_leases", in: services) == 0)
        }
    }

    /// A foreign-key violation: the lease's user no longer exists.
    static func userGone(_ error: any Error) -> Bool {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] == "23503" }
        if let error = error as? SQLiteError { return error.message.contains("FOREIGN KEY") }
        return false
    }
}
