import Foundation
import Testing

@testable import TonightServer

@Suite("The ban list in memory")
struct BanListTests {
    /// Failed before: the periodic reload read the bans, a ban was stored and set meanwhile, and
    /// the reload then replaced the list with what it had read — the ban was undone here until
    /// the next reload (seen as a banned member still served, under load).
    @Test("a reload whose read began before a ban does not undo it")
    func reloadDoesNotUndoABan() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withApp(.postgres) { services, client in
            let alice = try await client.member("alice")
            let reloaded = try await services.database.transaction { db in
                // The reload's read waits behind this lock until the transaction ends.
                try await db.raw("LOCK TABLE bans IN ACCESS EXCLUSIVE MODE").run()
                let reload = Task { try await services.bans.reload() }
                try await Task.sleep(for: .milliseconds(300))
                services.bans.set(alice.id, banned: true)
                return reload
            }
            #expect(try await reloaded.value == false)
            #expect(services.bans.contains(alice.id))
        }
    }
}
