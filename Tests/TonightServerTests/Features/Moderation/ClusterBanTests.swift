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
        try await withTwoInstances { a, clientA, _, clientB in
            let member = try await clientA.member("wes")
            let moderator = try await moderatorToken(a, clientA)
            #expect(try await clientB.send(.get, "/v1/me", token: member.token).status == .ok)

            #expect(
                try await clientA.send(.put, "/v1/moderation/users/\(member.id)/ban", token: moderator).status
                    == .noContent)
            #expect(
                try await holds(within: .seconds(1)) {
                    try await clientB.send(.get, "/v1/me", token: member.token).json["code"] as? String
                        == "account_suspended"
                })

            #expect(
                try await clientA.send(.delete, "/v1/moderation/users/\(member.id)/ban", token: moderator).status
                    == .noContent)
            #expect(try await holds(within: .seconds(1)) { try await clientB.logIn("wes").status == .ok })
        }
    }
}
