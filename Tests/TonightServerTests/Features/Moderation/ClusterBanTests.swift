import Foundation
import HummingbirdTesting
import Testing

@testable import TonightServer

@Suite("Bans across instances: two servers on one PostgreSQL")
struct ClusterBanTests {
    /// Failed before: the other instance learned of an unban only at its 30 s reload, refusing the
    /// member's new sign-in until then.
    @Test("a ban on one instance refuses the member on the other within a second; so does lifting it")
    func banAndUnban() async throws {
        guard Backend.available.contains(.postgres) else { return }
        var first = try await testConfig(.postgres)
        first.jwtKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var second = first
        second.dataDirectory = first.dataDirectory + "-second"
        let a = try await AppServices.make(config: first)
        let b = try await AppServices.make(config: second)
        let appA = try await buildApplication(first, services: a)
        let appB = try await buildApplication(second, services: b)
        try await appA.test(.live) { clientA in
            try await appB.test(.live) { clientB in
                for services in [a, b] {
                    if let listener = services.fanout as? PostgresFanout {
                        #expect(await listener.waitUntilListening(), "the live listener did not start")
                    }
                }
                let member = try await clientA.member("wes")
                let moderator = try await moderatorToken(a, clientA)
                #expect(try await clientB.send(.get, "/v1/me", token: member.token).status == .ok)

                #expect(
                    try await clientA.send(.put, "/v1/moderation/users/\(member.id)/ban", token: moderator).status
                        == .noContent)
                #expect(
                    try await Self.within(.seconds(1)) {
                        try await clientB.send(.get, "/v1/me", token: member.token).json["code"] as? String
                            == "account_suspended"
                    })

                #expect(
                    try await clientA.send(.delete, "/v1/moderation/users/\(member.id)/ban", token: moderator).status
                        == .noContent)
                #expect(
                    try await Self.within(.seconds(1)) {
                        try await clientB.logIn("wes").status == .ok
                    })
            }
        }
    }

    /// Whether `check` holds within `limit` (tried every 50 ms).
    static func within(_ limit: Duration, _ check: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await check() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await check()
    }
}
