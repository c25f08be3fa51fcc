import Foundation
import Logging
import OpenAPIRuntime
import PostgresKit
import Testing
import TonightAPI

@testable import TonightServer

/// How live messages travel between instances (``LiveEnvelope``) and how they are encoded once
/// (``LiveFrame``).
@Suite("Live envelopes")
struct LiveEnvelopeTests {
    /// The envelope of the release before frames, as it encoded it.
    struct Earlier: Codable {
        var users: [String]
        var message: LiveMessage
    }

    @Test("an event frame is the message the earlier encoding made, and crosses instances as the same text")
    func eventFrames() throws {
        let payload = Components.Schemas.Message(
            id: "m1", conversationId: "c1", seq: 7, senderId: "u1", text: "tab\t\"quote\" é\n",
            createdAt: Date(timeIntervalSince1970: 1_800_000_000))
        let frame = try LiveFrame.event(LiveMessage.EventType.message, ["message": payload])
        #expect(frame.type == "message")
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let container = try JSONDecoder().decode(
            OpenAPIObjectContainer.self, from: try encoder.encode(["message": payload]))
        #expect(frame.message == LiveMessage(type: "message", data: container))

        let users = ["0192aaaa-0000-7000-8000-000000000001", "0192aaaa-0000-7000-8000-000000000002"]
        let wire = try LiveEnvelope.encode(frame, to: users)
        let read = try #require(LiveEnvelope.decode(wire))
        #expect(read.frame == frame && read.users == Set(users))
        // The earlier release reads it as its own envelope.
        let earlier = try JSONDecoder().decode(Earlier.self, from: Data(wire.utf8))
        #expect(earlier.users == users && earlier.message == frame.message)
    }

    @Test("envelopes of the earlier release, and any JSON of the same shape, are read; others are not")
    func earlierEnvelopes() throws {
        let message = LiveMessage(type: LiveHub.revoked, message: "account_suspended")
        let written = String(
            decoding: try JSONEncoder().encode(Earlier(users: ["u1"], message: message)), as: UTF8.self)
        let read = try #require(LiveEnvelope.decode(written))
        #expect(read.frame.type == LiveHub.revoked && read.frame.message == message && read.users == ["u1"])

        // Another key order and an escaped id take the JSON path.
        let reordered = #"{"message":{"message":"x","type":"notice"},"users":["u\u0031","u2"]}"#
        let other = try #require(LiveEnvelope.decode(reordered))
        #expect(other.frame.type == "notice" && other.users == ["u1", "u2"])
        #expect(other.frame.message == LiveMessage(type: "notice", message: "x"))

        for broken in ["", "feed", "{", #"{"users":["u1"],"message":"#, #"{"users":[u1],"message":{"type":"x"}}"#] {
            #expect(LiveEnvelope.decode(broken) == nil, "\(broken)")
        }
    }

    /// Failed before: a group went in one statement, and PostgreSQL delivers one of identical
    /// notifications in a transaction, so a revocation, a reinstatement and the same revocation
    /// again reached other instances as two (the ban lifted there).
    @Test("PostgreSQL: a group's notifications all arrive in order, repeats included; one waiting too long is not sent")
    func groupedNotifications() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withApp(.postgres) { services, _ in
            let connection = try await ownPostgresConnection(services, id: 9)
            let channel = PostgresFanout.channel
            let arrived = try await withDeadline(.seconds(30)) {
                try await connection.listen(on: channel) { notifications in
                    var iterator = notifications.makeAsyncIterator()
                    let now = ContinuousClock.now
                    let items = ["revoke", "lift", "revoke", "stale", "other"].map {
                        PostgresFanout.Queued(payload: $0, since: $0 == "stale" ? now - .seconds(20) : now)
                    }
                    let results = await PostgresFanout.notify(
                        items, through: LiveOutbox(database: services.database), deadline: .seconds(10))
                    #expect(results.map { (try? $0.get()) != nil } == [true, true, true, false, true])
                    try await services.database.sql.raw("SELECT pg_notify(\(bind: channel), 'end')").run()
                    var seen: [String] = []
                    while let payload = try await iterator.next()?.payload, payload != "end" { seen.append(payload) }
                    return seen
                }
            }
            try await connection.close()
            #expect(arrived == ["revoke", "lift", "revoke", "other"])
        }
    }
}
