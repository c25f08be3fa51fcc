import Foundation
import HTTPTypes
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket
import Testing
import TonightAPI

@testable import TonightServer

@Suite("Live sockets never hold anyone up; ended access ends them")
struct LiveAccessTests {
    @Test("a socket that stops reading is disconnected, and votes and events for others never wait for it")
    func stalledReader() async throws {
        try await withLiveApp(.sqlite) { services, client in
            let port = try #require(client.port)
            let alice = try await client.member("alice")
            let bob = try await client.member("bob")
            let post = try await insertPost(services, author: alice.id)
            let others = try await quickUsers(services, 20, prefix: "v")
            let otherPost = try await insertPost(services, author: bob.id)
            let stalled = try await StalledSocket(port: port, token: alice.token)
            #expect(await eventually { await services.live.isOnline(alice.id) })
            try await withSocket(port: port, token: bob.token) { bobIn, _ in
                try await finishes {
                    // Megabytes for alice: more than any socket buffer holds.
                    let big = try LiveFrame.event(
                        LiveMessage.EventType.notice, ["text": String(repeating: "x", count: 50_000)])
                    for _ in 0..<200 { await services.fanout.send(big, to: [alice.id]) }
                    // Votes, one on alice's post, answer as usual. (On connections of their own:
                    // twenty in a row on the test client's one ran past its 15 s in a full run.)
                    let statuses = try await race(port: port, others.count) { index, connection in
                        try await connection.send(
                            .put, "/v1/posts/\(index == 0 ? post : otherPost)/vote", json: ["value": 1],
                            token: others[index].token)
                    }
                    #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses)")
                    // Bob's socket still gets his events.
                    await services.fanout.send(
                        try LiveFrame.event(LiveMessage.EventType.notice, ["text": "for bob"]), to: [bob.id])
                    var seen: LiveMessage?
                    while let next = try await bobIn.next() {
                        if next.type == LiveMessage.EventType.notice {
                            seen = next
                            break
                        }
                    }
                    #expect(seen?.data?.value["text"] as? String == "for bob")
                }
            }
            #expect(stalled.text.hasPrefix("HTTP/1.1 101"))
            // The stalled socket is closed (queue full, or its write past the deadline).
            #expect(await eventually { await !services.live.isOnline(alice.id) })
            await stalled.close()
        }
    }

    @Test("a ban or a deleted account ends sign-in, refresh, tokens and open sockets", arguments: Backend.available)
    func endedAccess(backend: Backend) async throws {
        try await withLiveApp(backend) { services, client in
            let port = try #require(client.port)
            let tokens = try await client.signUp("alice")
            let alice = TestUser(id: tokens.user["id"] as? String ?? "", token: tokens.accessToken)
            let moderator = try await moderatorToken(services, client)

            // A ban closes her open socket with an error, and refuses everything after.
            try await withSocket(port: port, token: alice.token) { inbound, _ in
                #expect(
                    try await client.send(.put, "/v1/moderation/users/\(alice.id)/ban", token: moderator).status
                        == .noContent)
                var last: LiveMessage?
                while let next = try await finishes(within: .seconds(30), { try await inbound.next() }) {
                    last = next
                }
                #expect(last?.type == LiveMessage.Kind.error && last?.message == "This account is suspended.")
            }
            let login = try await client.logIn("alice")
            #expect(login.status == .unauthorized && login.json["code"] as? String == "account_suspended")
            let refresh = try await client.send(.post, "/v1/auth/refresh", json: ["refreshToken": tokens.refreshToken])
            #expect(refresh.status == .unauthorized)
            await #expect(throws: (any Error).self) {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/v1/live?token=\(alice.token)", logger: Logger(label: "ws")
                ) { _, _, _ in Issue.record("a banned member's socket opened") }
            }
            let byMessage = try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/live", logger: Logger(label: "ws")
            ) { inbound, outbound, _ in
                try await outbound.write(.text(#"{"type":"auth","token":"\#(alice.token)"}"#))
                for try await _ in inbound.messages(maxSize: 1 << 16) {}
            }
            #expect(byMessage?.closeCode == .policyViolation)
            #expect(
                try await client.send(.delete, "/v1/moderation/users/\(alice.id)/ban", token: moderator).status
                    == .noContent)
            let again = try await client.logIn("alice")
            #expect(again.status == .ok)

            // Deleting the account: her still-valid access token is 401 account_gone on every
            // write (never a 500), and her socket closes.
            let token = again.json["accessToken"] as? String ?? ""
            let bob = try await client.member("bob")
            let post = try await insertPost(services, author: bob.id)
            try await withSocket(port: port, token: token) { inbound, _ in
                #expect(
                    try await client.send(
                        .delete, "/v1/me", json: ["password": "a long enough passphrase"], token: token
                    ).status == .noContent)
                var last: LiveMessage?
                while let next = try await finishes(within: .seconds(30), { try await inbound.next() }) {
                    last = next
                }
                #expect(last?.message == "This account no longer exists.")
            }
            let writes: [(HTTPRequest.Method, String, JSON?)] = [
                (.put, "/v1/posts/\(post)/vote", ["value": 1]),
                (.put, "/v1/posts/\(post)/flag", nil),
                (.put, "/v1/posts/\(post)/bookmark", nil),
                (.post, "/v1/posts/\(post)/comments", ["text": "hi"]),
                (.put, "/v1/users/bob/follow", nil),
                (.get, "/v1/me", nil),
            ]
            for (method, path, body) in writes {
                let response = try await client.send(method, path, json: body, token: token)
                #expect(
                    response.status == .unauthorized && response.json["code"] as? String == "account_gone",
                    "\(method) \(path): \(response.status) \(response.text)")
            }
        }
    }
}
