import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOWebSocket
import PostgresKit
import Testing
import TonightAPI
import TonightCore

@testable import TonightServer

@Suite("Chat", .dropsTestDatabases)
struct ChatRouteTests {
    @Test(
        "friends talk: history backwards, sync since, read receipts, unread counts, members only",
        arguments: Backend.available)
    func conversation(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            let eve = try await client.member("eve")
            let stranger = try await client.send(.post, "/v1/conversations", json: ["userId": ben.id], token: eve.token)
            #expect(stranger.status == .forbidden)
            try await client.befriend(ana, ben)
            let id = try await client.conversation(ana, with: ben)
            #expect(try await client.conversation(ben, with: ana) == id)

            for index in 1...7 { try await client.say("m\(index)", in: id, as: index % 2 == 0 ? ben : ana) }
            let latest = try await client.send(.get, "/v1/conversations/\(id)/messages?limit=3", token: ana.token)
            #expect((latest.json["items"] as? [JSON])?.compactMap { $0["text"] as? String } == ["m5", "m6", "m7"])
            #expect(latest.json["hasMore"] as? Bool == true)
            #expect(
                try await client.texts("/v1/conversations/\(id)/messages?limit=3&before=5", as: ana) == [
                    "m2", "m3", "m4",
                ])
            #expect(try await client.texts("/v1/conversations/\(id)/messages?since=4", as: ben) == ["m5", "m6", "m7"])
            let synced = try await client.send(.get, "/v1/conversations/\(id)/messages?since=7", token: ben.token)
            #expect((synced.json["items"] as? [JSON])?.isEmpty == true)
            #expect(synced.json["hasMore"] as? Bool == false)

            // Ana sent m7 last, so she has read everything; Ben has read up to m6 (his own).
            let list = try await client.send(.get, "/v1/conversations", token: ben.token)
            #expect(list.json["totalUnread"] as? Int == 1)
            let item = try #require((list.json["items"] as? [JSON])?.first)
            #expect(item["unreadCount"] as? Int == 1)
            #expect((item["lastMessage"] as? JSON)?["text"] as? String == "m7")
            #expect(((item["user"] as? JSON)?["id"] as? String) == ana.id)
            let read = try await client.send(.post, "/v1/conversations/\(id)/read", json: ["seq": 99], token: ben.token)
            #expect(read.json["readSeq"] as? Int == 7)
            #expect(read.json["totalUnread"] as? Int == 0)
            let back = try await client.send(.post, "/v1/conversations/\(id)/read", json: ["seq": 2], token: ben.token)
            #expect(back.json["readSeq"] as? Int == 7)
            let anaView = try await client.send(.get, "/v1/conversations/\(id)", token: ana.token)
            #expect(anaView.json["otherReadSeq"] as? Int == 7)

            // Only members; bad input is a 400.
            #expect(try await client.send(.get, "/v1/conversations/\(id)", token: eve.token).status == .notFound)
            #expect(
                try await client.send(.get, "/v1/conversations/\(id)/messages", token: eve.token).status == .notFound)
            #expect(try await client.say("hi", in: id, as: eve).status == .notFound)
            #expect(try await client.say("   ", in: id, as: ana).status == .badRequest)
            #expect(try await client.say(String(repeating: "x", count: 2001), in: id, as: ana).status == .badRequest)
            #expect(
                try await client.send(.get, "/v1/conversations/\(id)/messages?since=-1", token: ana.token).status
                    == .badRequest)

            // No longer friends: the conversation stays readable but closed for writing; a block removes it.
            _ = try await client.send(.delete, "/v1/me/friends/\(ben.id)", token: ana.token)
            #expect(try await client.say("still there?", in: id, as: ben).status == .forbidden)
            _ = try await client.send(.put, "/v1/me/blocks/\(ana.id)", token: ben.token)
            #expect(try await client.send(.get, "/v1/conversations/\(id)", token: ana.token).status == .notFound)
            #expect(
                (try await client.send(.get, "/v1/conversations", token: ana.token).json["items"] as? [JSON])?.isEmpty
                    == true)
        }
    }

    @Test("a match opens its chat; unmatch ends it for both", arguments: Backend.available)
    func matchChat(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let host = try await client.member("host")
            let event = try await createParty(services, client, host: host)
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            for user in [ana, ben] { try await client.going(user, to: event) }
            _ = try await client.swipe(ana, ben, at: event, "like")
            let match = try #require(try await client.swipe(ben, ana, at: event, "like").json["match"] as? JSON)
            let id = try #require(match["conversationId"] as? String)
            #expect(try await client.say("see you at the bar", in: id, as: ben).status == .created)
            let mine = try await client.send(.get, "/v1/conversations/\(id)", token: ana.token)
            #expect(mine.json["kind"] as? String == "match")
            #expect(mine.json["matchId"] as? String == match["id"] as? String)
            _ = try await client.send(.delete, "/v1/me/matches/\(match["id"] as? String ?? "")", token: ana.token)
            #expect(try await client.send(.get, "/v1/conversations/\(id)", token: ben.token).status == .notFound)
            #expect(try await rowCount("messages", in: services) == 0)
        }
    }

    @Test(
        "two senders at once: one gap-free order, each sender's messages in the order sent",
        arguments: Backend.available)
    func order(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            try await client.befriend(ana, ben)
            let id = try await client.conversation(ana, with: ben)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (user, name) in [(ana, "ana"), (ben, "ben")] {
                    group.addTask {
                        for index in 0..<40 {
                            let sent = try await client.say("\(name)-\(index)", in: id, as: user)
                            #expect(sent.status == .created)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let rows = try await services.chat.messages(in: id, before: nil, since: 0, limit: 1000)
            #expect(rows.map(\.seq) == Array(1...80).map(Int64.init))
            for name in ["ana", "ben"] {
                let mine = rows.map(\.text).filter { $0.hasPrefix(name) }
                #expect(mine == (0..<40).map { "\(name)-\($0)" })
            }
        }
    }

    /// A group of messages waits for the database as long as the configured busy timeout says
    /// (it waited 10 seconds whatever `DATABASE_BUSY_TIMEOUT_MS` said); on SQLite past the write
    /// gate's and the busy handler's waits (``GroupWriterTests/busyFile()``), and so does a group
    /// of votes (``DatabaseBusyTests/votesOnBusyFile()``: it waited the busy timeout alone).
    @Test("chat's and votes' group commits wait the configured busy timeout", arguments: Backend.available)
    func batcherDeadline(backend: Backend) async throws {
        try await withApp(backend, configure: { $0.databaseBusyTimeoutMilliseconds = 1234 }) { services, _ in
            let expected: Duration = backend == .sqlite ? .milliseconds(3468) : .milliseconds(1234)
            #expect(await services.chat.batcher.deadline == expected)
            #expect(services.posts.votes.deadline == expected)
        }
    }

    /// Messages are stored in groups (``MessageBatcher``): 400 senders at once across eight
    /// conversations, every message stored once and each conversation numbered without a gap.
    @Test(
        "400 messages at once in eight conversations: grouped commits keep each numbering gap-free",
        arguments: Backend.available)
    func groupedCommits(backend: Backend) async throws {
        // Patience for the database: under the whole suite on two cores a group can wait longer
        // than the default busy timeout (a 503, which is not the point here).
        try await withApp(backend, configure: { $0.databaseBusyTimeoutMilliseconds = 60_000 }) { services, client in
            var pairs: [(TestUser, TestUser, String)] = []
            for index in 0..<8 {
                let a = try await client.member("ana\(index)")
                let b = try await client.member("ben\(index)")
                try await client.befriend(a, b)
                pairs.append((a, b, try await client.conversation(a, with: b)))
            }
            try await withThrowingTaskGroup(of: (HTTPResponse.Status, String).self) { group in
                for index in 0..<400 {
                    let (a, b, id) = pairs[index % 8]
                    group.addTask {
                        let sent = try await client.say("m\(index)", in: id, as: index % 3 == 0 ? b : a)
                        return (sent.status, "\(sent.json)")
                    }
                }
                for try await (status, body) in group { #expect(status == .created, "\(body)") }
            }
            for (_, _, id) in pairs {
                let rows = try await services.chat.messages(in: id, before: nil, since: 0, limit: 1000)
                #expect(rows.map(\.seq) == Array(1...50).map(Int64.init))
                #expect(Set(rows.map(\.text)).count == 50)
            }
            #expect(try await rowCount("messages", in: services) == 400)
        }
    }

    /// Failed before the messages travelled as JSON: PostgreSQL saw each group's array length,
    /// judged every custom plan cheaper than the generic one, and planned the statement anew for
    /// each group (most of its cost). The prepared notification has a generic plan too.
    @Test("PostgreSQL: a group's insert and the notifications are planned once per connection")
    func preparedOnce() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withApp(.postgres) { services, _ in
            let connection = try await ownPostgresConnection(services, id: 8)
            for size in 1...8 {
                let group = (0..<size).map {
                    MessageBatcher.Pending(
                        conversationID: "none", id: Identifier.make(), sender: "nobody", clientID: $0 == 0 ? "c" : nil,
                        text: "x", now: 1)
                }
                for try await _ in try await connection.execute(
                    ChatRepository.StoreMessages(group), logger: .init(label: "t"))
                {
                    Issue.record("a message for no conversation was stored")
                }
                _ = try await connection.execute(
                    LiveOutbox.Notify(channel: "test_prepared", payloads: (0..<size).map { "\($0)" }),
                    logger: .init(label: "t"))
            }
            let plans = try await genericPlans(on: connection)
            try await connection.close()
            #expect(plans.count == 2 && plans.values.allSatisfy { $0 >= 3 }, "\(plans)")
        }
    }

    @Test(
        "one statement numbers a group of messages as storing them one at a time would",
        arguments: Backend.available)
    func groupStatement(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let (ana, ben, eve) = (
                try await client.member("ana"), try await client.member("ben"), try await client.member("eve")
            )
            try await client.befriend(ana, ben)
            try await client.befriend(ana, eve)
            let first = try await client.conversation(ana, with: ben)
            let second = try await client.conversation(ana, with: eve)
            #expect(try await client.say("before", in: first, as: ben).status == .created)
            func pending(
                _ conversation: String, _ sender: TestUser, _ text: String, clientID: String? = nil, now: Int64
            )
                -> MessageBatcher.Pending
            {
                .init(
                    conversationID: conversation, id: Identifier.make(), sender: sender.id, clientID: clientID,
                    text: text, now: now)
            }
            let group = [
                pending(first, ana, "one", clientID: "c-1", now: 10), pending(second, eve, "two", now: 11),
                pending(first, ben, "three", now: 12), pending("no-such-conversation", ana, "lost", now: 13),
                pending(first, eve, "not a member", now: 14), pending(first, ana, "four", now: 15),
            ]
            let numbers = try await ChatRepository.insertAll(group, in: services.database)
            #expect(group.map { numbers[$0.id]?.seq } == [2, 1, 3, nil, nil, 4])
            // Each stored message names its members and whether the other is online (no socket: never).
            let one = try #require(numbers[group[0].id])
            #expect(Set([one.userA, one.userB]) == [ana.id, ben.id] && one.recipientOnlineUntil == 0)
            let stored = try await services.chat.messages(in: first, before: nil, since: 0, limit: 10)
            #expect(stored.map(\.text) == ["before", "one", "three", "four"])
            #expect(stored.map(\.clientID) == [nil, "c-1", nil, nil])
            let conversation = try #require(try await services.chat.conversation(id: first))
            let (anaRead, benRead) =
                conversation.userA == ana.id
                ? (conversation.readA, conversation.readB) : (conversation.readB, conversation.readA)
            #expect(conversation.lastSeq == 4 && anaRead == 4 && benRead == 3 && conversation.updatedAt == 15)
            let other = try #require(try await services.chat.conversation(id: second))
            #expect(other.lastSeq == 1 && (other.userA == eve.id ? other.readA : other.readB) == 1)
            // A client id stored twice fails the whole group (the batcher then stores one at a time).
            await #expect(throws: (any Error).self) {
                try await ChatRepository.insertAll(
                    [pending(first, ben, "five", now: 15), pending(first, ana, "again", clientID: "c-1", now: 16)],
                    in: services.database)
            }
            #expect(try await services.chat.conversation(id: first)?.lastSeq == 4)
        }
    }

    @Test(
        "a retried send with one client id stores one message, even when the retries race", arguments: Backend.available
    )
    func retries(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            try await client.befriend(ana, ben)
            let id = try await client.conversation(ana, with: ben)
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await client.say("only once", in: id, as: ana, clientId: "device-1-msg-1")
                        return (response.status, response.json["id"] as? String ?? "")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0.0 == .created }.count == 1)
            #expect(answers.allSatisfy { $0.0 == .created || $0.0 == .ok })
            #expect(Set(answers.map(\.1)).count == 1)
            #expect(try await rowCount("messages", in: services) == 1)
            // The same client id from the other member is another message.
            #expect(try await client.say("me too", in: id, as: ben, clientId: "device-1-msg-1").status == .created)
            #expect(try await rowCount("messages", in: services) == 2)
        }
    }

    @Test(
        "live: both members' sockets get the message, typing and read receipts; offline recipients get a notification",
        arguments: Backend.available)
    func live(backend: Backend) async throws {
        try await withLiveApp(backend) { services, client in
            let ana = try await client.member("ana")
            let ben = try await client.member("ben")
            try await client.befriend(ana, ben)
            let id = try await client.conversation(ana, with: ben)
            // Ben is offline: the first message becomes a notification.
            try await client.say("are you coming?", in: id, as: ana)
            #expect(try await client.notificationKinds(ben).contains("message"))
            let port = try #require(client.port)
            try await withSocket(port: port, token: ben.token) { benIn, benOut in
                try await withSocket(port: port, token: ana.token) { anaIn, _ in
                    let before = try await client.notificationKinds(ben).count
                    try await client.say("on my way", in: id, as: ana)
                    for socket in [benIn, anaIn] {
                        let event = try #require(try await socket.next())
                        #expect(event.type == "message")
                        let message = event.data?.value["message"] as? [String: (any Sendable)?]
                        #expect(message?["text"] as? String == "on my way")
                        #expect(message?["seq"] as? Int == 2)
                    }
                    // Online: no notification this time.
                    #expect(try await client.notificationKinds(ben).count == before)
                    try await benOut.write(.text(#"{"type":"typing","conversationId":"\#(id)"}"#))
                    let typing = try #require(try await anaIn.next())
                    #expect(typing.type == "typing")
                    #expect(typing.data?.value["userId"] as? String == ben.id)
                    _ = try await client.send(.post, "/v1/conversations/\(id)/read", json: ["seq": 2], token: ben.token)
                    let receipt = try #require(try await anaIn.next())
                    #expect(receipt.type == "read")
                    #expect(receipt.data?.value["seq"] as? Int == 2)
                    let view = try await client.send(.get, "/v1/conversations/\(id)", token: ana.token)
                    #expect((view.json["presence"] as? JSON)?["online"] as? Bool == true)
                }
            }
            _ = services
        }
    }

    @Test("two instances on one PostgreSQL: a message sent through one reaches a socket on the other")
    func twoInstances() async throws {
        guard Backend.available.contains(.postgres) else { return }
        // Instances share the database and the token key (as README says to deploy them).
        var first = try await testConfig(.postgres)
        first.jwtKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var second = try await testConfig(.sqlite)
        second.databaseURL = first.databaseURL
        second.jwtKey = first.jwtKey
        let servicesA = try await AppServices.make(config: first)
        let servicesB = try await AppServices.make(config: second)
        let appA = try await buildApplication(first, services: servicesA)
        let appB = try await buildApplication(second, services: servicesB)
        try await appA.test(.live) { clientA in
            try await appB.test(.live) { clientB in
                for services in [servicesA, servicesB] {
                    let listener = try #require(services.fanout as? PostgresFanout)
                    #expect(await listener.waitUntilListening(timeout: .seconds(60)))
                }
                let ana = try await clientA.member("ana")
                let ben = try await clientA.member("ben")
                try await clientA.befriend(ana, ben)
                let id = try await clientA.conversation(ana, with: ben)
                let portB = try #require(clientB.port)
                try await withSocket(port: portB, token: ben.token) { benIn, _ in
                    try await clientA.say("through the database", in: id, as: ana)
                    let event = try #require(try await benIn.next("message"))
                    let message = event.data?.value["message"] as? [String: (any Sendable)?]
                    #expect(message?["text"] as? String == "through the database")
                    // A long message goes through the outbox row instead of the notification payload.
                    let long = String(repeating: "é", count: 2000)
                    try await clientA.say(long, in: id, as: ana)
                    let big = try #require(try await benIn.next("message"))
                    #expect((big.data?.value["message"] as? [String: (any Sendable)?])?["text"] as? String == long)
                    // Messages sent at once share notifications; each arrives, once. On connections
                    // of their own: on the one test client's connection the last waited for all the
                    // others, past its timeout, in a full run on a slow machine.
                    let texts = (1...60).map { "at once \($0)" }
                    let statuses = try await race(port: try #require(clientA.port), texts.count) { index, connection in
                        try await connection.send(
                            .post, "/v1/conversations/\(id)/messages", json: ["text": texts[index]], token: ana.token)
                    }
                    #expect(statuses.allSatisfy { $0 == .created })
                    var arrived: [String] = []
                    for _ in texts {
                        let event = try #require(try await benIn.next("message"))
                        arrived.append(
                            try #require(
                                (event.data?.value["message"] as? [String: (any Sendable)?])?["text"] as? String))
                    }
                    #expect(arrived.count == texts.count && Set(arrived) == Set(texts))
                }
                _ = clientB
            }
        }
    }
}
