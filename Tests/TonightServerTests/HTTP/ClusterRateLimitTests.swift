import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TonightServer

@Suite("Rate limits across instances: two servers on one PostgreSQL")
struct ClusterRateLimitTests {
    /// Failed before: each instance counted on its own (three instances let 60 sign-ups an hour
    /// through a limit of 20).
    @Test("a sign-up limit holds across both instances, and so does a failed-password limit")
    func sharedLimits() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTwoInstances(configure: {
            $0.signupsPerHourPerIP = 3
            $0.loginsPerMinutePerAccount = 2
        }) { _, clientA, _, clientB in
            #expect(try await clientA.signUp("xia").accessToken != "")
            #expect(try await clientB.signUp("yan").accessToken != "")
            _ = try await clientA.signUp("zoe")
            let refused = try await clientB.send(
                .post, "/v1/auth/signup",
                json: ["username": "amy", "email": "amy@example.com", "password": "a long enough passphrase"])
            #expect(refused.status == .tooManyRequests, "\(refused.text)")
            #expect(refused.headers[.retryAfter] != nil)

            // Two wrong passwords, one on each instance, use up the account's failures for this
            // address on both.
            #expect(try await clientA.logIn("xia", password: "wrong one").status == .unauthorized)
            #expect(try await clientB.logIn("xia", password: "wrong two").status == .unauthorized)
            #expect(try await clientA.logIn("xia", password: "wrong three").status == .tooManyRequests)
            #expect(try await clientB.logIn("xia", password: "wrong four").status == .tooManyRequests)
        }
    }

    @Test("sixty sign-ups racing over both instances: exactly the limit get through")
    func racingSignUps() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTwoInstances(configure: { $0.signupsPerHourPerIP = 10 }) { _, clientA, _, clientB in
            // Thirty on each instance, on many connections each (one client's requests would queue).
            func signUps(_ client: any TestClientProtocol, from first: Int) async throws -> [HTTPResponse.Status] {
                try await race(port: try #require(client.port), 30) { index, connection in
                    try await connection.send(
                        .post, "/v1/auth/signup",
                        json: [
                            "username": "racer\(first + index)", "email": "racer\(first + index)@example.com",
                            "password": "a long enough passphrase",
                        ])
                }
            }
            async let onA = signUps(clientA, from: 0)
            async let onB = signUps(clientB, from: 30)
            let statuses = try await onA + onB
            #expect(statuses.filter { $0 == .created }.count == 10, "\(statuses)")
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 50)
        }
    }
}
