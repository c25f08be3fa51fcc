import Foundation
import HTTPTypes
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOWebSocket
import OpenAPIRuntime
import Testing
import TonightAPI

@testable import TonightServer

@Suite("The /v1/live WebSocket")
struct LiveSocketTests {
    func decode(_ text: String) throws -> LiveMessage {
        try JSONDecoder().decode(LiveMessage.self, from: Data(text.utf8))
    }

    @Test("a new notification arrives live with the unread count", arguments: Backend.available)
    func notificationEvent(backend: Backend) async throws {
        try await withLiveApp(backend) { _, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let port = try #require(client.port)
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/live?token=\(ana.token)", logger: Logger(label: "ws")
            ) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                guard case .text(let first) = try await messages.next() else { Issue.record("no ready"); return }
                #expect(try decode(first).type == "ready")
                let sent = try await client.send(
                    .post, "/v1/me/friend-requests", json: ["userId": ana.id], token: ben.token)
                #expect(sent.status == .ok)
                guard case .text(let text) = try await messages.next() else { Issue.record("no event"); return }
                let event = try decode(text)
                #expect(event.type == "notification")
                let notification = event.data?.value["notification"] as? [String: (any Sendable)?]
                #expect(notification?["kind"] as? String == "friendRequest")
                #expect((notification?["actor"] as? [String: (any Sendable)?])?["id"] as? String == ben.id)
                #expect((notification?["createdAt"] as? String)?.hasSuffix("Z") == true)
                #expect(event.data?.value["unreadCount"] as? Int == 1)
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
    }

    @Test("token in the query: ready, ping/pong, and events pushed to the user", arguments: Backend.available)
    func queryToken(backend: Backend) async throws {
        try await withLiveApp(backend) { services, client in
            let tokens = try await client.signUp("pia")
            let port = try #require(client.port)
            let userID = tokens.user["id"] as? String ?? ""
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/live?token=\(tokens.accessToken)", logger: Logger(label: "ws")
            ) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                guard case .text(let first) = try await messages.next() else { Issue.record("no ready"); return }
                let ready = try decode(first)
                #expect(ready.type == "ready")
                #expect(ready.userId == userID)

                try await outbound.write(.text(#"{"type":"ping"}"#))
                guard case .text(let pong) = try await messages.next() else { Issue.record("no pong"); return }
                #expect(try decode(pong).type == "pong")

                let sent = await services.live.deliver(
                    LiveMessage(type: "notice", data: try OpenAPIObjectContainer(unvalidatedValue: ["text": "hi"])),
                    to: userID)
                #expect(sent == 1)
                guard case .text(let event) = try await messages.next() else { Issue.record("no event"); return }
                let notice = try decode(event)
                #expect(notice.type == "notice")
                #expect(notice.data?.value["text"] as? String == "hi")
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
    }

    @Test("token in the first message; a bad token closes the socket", arguments: Backend.available)
    func messageToken(backend: Backend) async throws {
        try await withLiveApp(backend) { _, client in
            let accessToken = try await client.signUp("quinn").accessToken
            let port = try #require(client.port)
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/v1/live", logger: Logger(label: "ws")) {
                inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                try await outbound.write(.text(#"{"type":"subscribe"}"#))
                guard case .text(let refused) = try await messages.next() else { Issue.record("no answer"); return }
                #expect(try decode(refused).type == "error")
                try await outbound.write(.text(#"{"type":"auth","token":"\#(accessToken)"}"#))
                guard case .text(let ready) = try await messages.next() else { Issue.record("no ready"); return }
                #expect(try decode(ready).type == "ready")
                try await outbound.close(.normalClosure, reason: nil)
            }

            let close = try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/live", logger: Logger(label: "ws")
            ) { inbound, outbound, _ in
                try await outbound.write(.text(#"{"type":"auth","token":"forged"}"#))
                for try await _ in inbound.messages(maxSize: 1 << 16) {}
            }
            #expect(close?.closeCode == .policyViolation)

            let plain = try await client.send(.get, "/v1/live")
            #expect(plain.status == .upgradeRequired)
            await #expect(throws: (any Error).self) {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/v1/live?token=forged", logger: Logger(label: "ws")
                ) { _, _, _ in Issue.record("upgraded with a forged token") }
            }
        }
    }
}
