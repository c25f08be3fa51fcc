import Foundation
import HTTPTypes
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
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

    /// Failed before, now and then (once in a full run, which then hung on the missing event): the
    /// `ready` of a token in the query was queued before the socket was registered, so an event
    /// published as `ready` arrived went nowhere. (The time limits are for a full run's load, where
    /// these tests take up to three minutes: a lost event fails instead of hanging the run.)
    @Test(
        "once ready has arrived, every event reaches the socket; ready comes before any answer", .timeLimit(.minutes(5))
    )
    func readyMeansRegistered() async throws {
        try await withLiveApp(.sqlite) { services, client in
            let port = try #require(client.port)
            let kim = try await client.member("kim")
            for round in 0..<20 {
                let byQuery = round.isMultiple(of: 2)
                let socket = try await RawSocket(
                    port: port, target: byQuery ? "/v1/live?token=\(kim.token)" : "/v1/live")
                if !byQuery { try await socket.send(text: #"{"type":"auth","token":"\#(kim.token)"}"#) }
                try await socket.send(text: #"{"type":"ping"}"#)
                #expect(try await socket.nextMessage()?.type == "ready", "round \(round)")
                let sent = await services.live.deliver(LiveMessage(type: "notice"), to: kim.id)
                #expect(sent == 1, "round \(round)")
                let next = [try await socket.nextMessage()?.type, try await socket.nextMessage()?.type]
                #expect(Set(next) == ["pong", "notice"], "round \(round)")
                await socket.close()
                #expect(await eventually { await !services.live.isOnline(kim.id) })
            }
        }
    }

    @Test(
        "token in the query: ready, ping/pong, and events pushed to the user", .timeLimit(.minutes(5)),
        arguments: Backend.available)
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

@Suite("The /v1/live WebSocket protocol")
struct LiveProtocolTests {
    @Test("pings, fragments, binary and oversize messages, closes both ways, messages in order, other paths refused")
    func frames() async throws {
        let stopped = NIOLockedValueBox<Task<WebSocketErrorCode?, any Error>?>(nil)
        try await withLiveApp(.sqlite) { services, client in
            let port = try #require(client.port)
            let rae = try await client.member("rae")

            let socket = try await RawSocket(port: port, target: "/v1/live?token=\(rae.token)")
            #expect(socket.statusLine == "HTTP/1.1 101 Switching Protocols")
            #expect(try await socket.nextMessage()?.type == "ready")
            // A WebSocket ping is answered with its payload.
            try await socket.send(.ping, Array("abc".utf8))
            let pong = try await socket.next()
            #expect(pong?.opcode == .pong && pong.map { String(buffer: $0.payload) } == "abc")
            // A message in three fragments, with a ping between them.
            try await socket.send(text: #"{"type""#, fin: false)
            try await socket.send(text: #":"pi"#, fin: false, continuation: true)
            try await socket.send(.ping, [])
            #expect(try await socket.next()?.opcode == .pong)
            try await socket.send(text: #"ng"}"#, continuation: true)
            #expect(try await socket.nextMessage()?.type == "pong")
            // Binary is not JSON text.
            try await socket.send(.binary, [1, 2, 3])
            let binary = try await socket.nextMessage()
            #expect(binary?.type == "error" && binary?.message == "Send JSON text messages.")
            // Over 64 kB joined: closed with 1009.
            let chunk = String(repeating: "x", count: 16_000)
            try await socket.send(text: chunk, fin: false)
            for _ in 0..<4 { try await socket.send(text: chunk, fin: false, continuation: true) }
            #expect(try await socket.nextClose() == .messageTooLarge)
            #expect(try await socket.next() == nil)
            #expect(await eventually { await !services.live.isOnline(rae.id) })

            // A close is answered with a close, then the connection ends.
            let closing = try await RawSocket(port: port, target: "/v1/live?token=\(rae.token)")
            #expect(try await closing.nextMessage()?.type == "ready")
            #expect(await eventually { await services.live.isOnline(rae.id) })
            var normal = ByteBuffer()
            normal.write(webSocketErrorCode: .normalClosure)
            try await closing.send(.connectionClose, Array(normal.readableBytesView))
            #expect(try await closing.nextClose() == .normalClosure)
            #expect(try await closing.next() == nil)
            #expect(await eventually { await !services.live.isOnline(rae.id) })

            // `auth` and `ping` sent together: ready comes before pong (a message waits for the one before it).
            let ordered = try await RawSocket(port: port, target: "/v1/live")
            try await ordered.send(text: #"{"type":"auth","token":"\#(rae.token)"}"#)
            try await ordered.send(text: #"{"type":"ping"}"#)
            #expect(try await ordered.nextMessage()?.type == "ready")
            #expect(try await ordered.nextMessage()?.type == "pong")
            // A continuation with no message begun breaks the protocol: closed with 1002.
            try await ordered.send(text: "x", continuation: true)
            #expect(try await ordered.nextClose() == .protocolError)
            #expect(try await ordered.next() == nil)
            await ordered.close()

            // An upgrade asked without `Connection: Upgrade` is no handshake: 426, not a redirect
            // to the same address (which a client would follow for ever).
            let halfAsked = try await client.send(.get, "/v1/live", headers: [.upgrade: "websocket"])
            #expect(halfAsked.status == .upgradeRequired)
            // A handshake without one valid key, or of another version, is answered (RFC 6455
            // 4.2.2), then closed. (NIO's upgrader refuses them with no answer: it had been so.)
            let asked = "GET /v1/live HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            for (fields, answer) in [
                ("Sec-WebSocket-Version: 13\r\n", "HTTP/1.1 400 Bad Request\r\n"),
                ("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: c2hvcnQ=\r\n", "HTTP/1.1 400 Bad Request\r\n"),
                ("Sec-WebSocket-Version: 13\r\n\(key)\(key)", "HTTP/1.1 400 Bad Request\r\n"),
                (key, "HTTP/1.1 426 Upgrade Required\r\n"),
                ("Sec-WebSocket-Version: 8\r\n\(key)", "HTTP/1.1 426 Upgrade Required\r\n"),
            ] {
                let refused = try await RawConnection(port: port)
                try await refused.send(asked + fields + "\r\n")
                try await refused.closed.get()
                let response = try await refused.receive { _ in true }
                #expect(response.hasPrefix(answer), "\(fields): \(response)")
                #expect(!answer.contains("426") || response.lowercased().contains("sec-websocket-version: 13\r\n"))
            }
            // Open sockets are counted in /metrics.
            let counted = try await RawSocket(port: port, target: "/v1/live?token=\(rae.token)")
            #expect(try await counted.nextMessage()?.type == "ready")
            let metrics = try await client.send(.get, "/metrics").text
            let open = metrics.split(separator: "\n").first { $0.hasPrefix("tonight_live_sockets ") }
            #expect(open.flatMap { Double($0.split(separator: " ")[1]) }.map { $0 >= 1 } == true, "\(open ?? "none")")
            await counted.close()

            // Only /v1/live upgrades.
            let elsewhere = try await RawSocket(port: port, target: "/v1/places?token=\(rae.token)")
            #expect(elsewhere.statusLine == "HTTP/1.1 400 Bad Request")
            await elsewhere.close()

            // A socket that is not signed in yet, open when the server stops.
            let stopping = try await RawSocket(port: port, target: "/v1/live")
            stopped.withLockedValue {
                $0 = Task {
                    let code = try await stopping.nextClose()
                    try await stopping.send(.connectionClose, [0x03, 0xE8])
                    return code
                }
            }
        }
        // The stopping server sent it a close (going away).
        #expect(try await stopped.withLockedValue { $0 }?.value == .goingAway)
    }

    @Test("a client that sends pings and reads nothing is disconnected; so is one that leaves without a close")
    func pingFloodAndHalfClose() async throws {
        try await withLiveApp(.sqlite) { services, client in
            let port = try #require(client.port)
            let sam = try await client.member("sam")
            let flooding = try await RawSocket(port: port, target: "/v1/live?token=\(sam.token)", receiveBuffer: 4096)
            #expect(await eventually { await services.live.isOnline(sam.id) })
            // Pings until the server gives up: their pongs fill every buffer on the way (a few MB),
            // then the socket's queue.
            let ping = [UInt8](repeating: 0x70, count: 125)
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                do { try await flooding.send(.ping, ping, times: 1000) } catch { break }
            }
            #expect(await eventually(within: .seconds(30)) { await !services.live.isOnline(sam.id) })
            await flooding.close()

            let sid = try await client.member("sid")
            let leaving = try await RawSocket(port: port, target: "/v1/live?token=\(sid.token)")
            #expect(try await leaving.nextMessage()?.type == "ready")
            #expect(await eventually { await services.live.isOnline(sid.id) })
            try await leaving.halfClose()
            // Sooner than the 30 s ping would find out.
            #expect(await eventually(within: .seconds(20)) { await !services.live.isOnline(sid.id) })
            #expect(try await leaving.next() == nil)
        }
    }

    /// The server's pings on its event loop, with time advanced by hand (over TCP, the test's own
    /// answers were once starved past the interval by the whole suite on two cores): a pong keeps
    /// the socket, a missing one closes it at the next ping.
    @Test("a socket whose pong has not come by the next ping is closed, going away; one that answers stays open")
    func pingTimeout() async throws {
        try await withApp(.sqlite) { services, _ in
            let live = LiveRoutes(
                hub: services.live, tokens: services.tokens, presence: services.presence, chat: services.chat,
                fanout: services.fanout, bans: services.bans, pingInterval: .seconds(1))
            // Unauthenticated, so nothing but the pings is sent (its 10 s to sign in are not reached).
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandler(LiveChannelHandler(live: live, principal: nil))
            for _ in 0..<3 {
                channel.embeddedEventLoop.advanceTime(by: .seconds(1))
                let ping = try #require(try channel.readOutbound(as: WebSocketFrame.self))
                #expect(ping.opcode == .ping && ping.data.readableBytes == 8)
                try channel.writeInbound(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: ping.data))
            }
            // No answer to this one: at the next ping, a close (going away) instead.
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
            #expect(try channel.readOutbound(as: WebSocketFrame.self)?.opcode == .ping)
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
            let close = try #require(try channel.readOutbound(as: WebSocketFrame.self))
            var code = close.unmaskedData
            #expect(close.opcode == .connectionClose && code.readWebSocketErrorCode() == .goingAway)
            _ = try? channel.finish()
        }
    }

    @Test("a real socket that never answers the server's pings is closed, going away")
    func pingTimeoutOverTCP() async throws {
        try await withLiveApp(.sqlite, configure: { $0.livePingSeconds = 1 }) { services, client in
            let port = try #require(client.port)
            let ada = try await client.member("ada")
            let silent = try await RawSocket(port: port, target: "/v1/live?token=\(ada.token)")
            #expect(try await silent.nextMessage()?.type == "ready")
            #expect(try await silent.next()?.opcode == .ping)
            #expect(try await silent.nextClose() == .goingAway)
            // Answered, the close ends the connection (unanswered, it would after the write
            // deadline; on a loaded run it may have already).
            try? await silent.send(.connectionClose, [0x03, 0xE9])
            #expect(try await silent.next() == nil)
            #expect(await eventually(within: .seconds(30)) { await !services.live.isOnline(ada.id) })
        }
    }
}
