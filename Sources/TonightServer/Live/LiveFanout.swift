import Foundation
import TonightAPI

/// Delivers live messages to users' open sockets on every instance.
protocol LiveFanout: Sendable {
    /// Sends `frame` to every open socket of each user in `userIDs`.
    func send(_ frame: LiveFrame, to userIDs: [String]) async
}

extension LiveFanout {
    /// Sends `message` to every open socket of each user in `userIDs`.
    func send(_ message: LiveMessage, to userIDs: [String]) async {
        guard let frame = try? LiveFrame(message) else { return }
        await send(frame, to: userIDs)
    }
}

/// One process (the SQLite set-up): straight to this instance's sockets.
struct LocalFanout: LiveFanout {
    let hub: LiveHub

    func send(_ frame: LiveFrame, to userIDs: [String]) async {
        await hub.deliver(frame, to: Set(userIDs))
    }
}

/// A live message encoded once, as sockets receive it. It travels between instances as this text
/// and is written to every socket as it is: nothing on the way decodes it again.
struct LiveFrame: Sendable, Equatable {
    /// The message's type (``LiveHub`` acts on its own internal types itself).
    let type: String
    /// The message as JSON.
    let text: String

    /// `message`, encoded.
    init(_ message: LiveMessage) throws {
        type = message.type
        text = String(decoding: try Self.encoder.encode(message), as: UTF8.self)
    }

    /// A frame that is already text (`type` must be the type `text` has).
    init(type: String, text: String) {
        self.type = type
        self.text = text
    }

    /// An event message of `type` whose `data` is `payload` as a JSON object (dates in RFC 3339, as
    /// in the HTTP API): what `LiveMessage(type:data:)` encodes to, written in one pass.
    static func event(_ type: String, _ payload: some Encodable) throws -> LiveFrame {
        let name = String(decoding: try encoder.encode(type), as: UTF8.self)
        let data = String(decoding: try encoder.encode(payload), as: UTF8.self)
        return LiveFrame(type: type, text: #"{"type":"# + name + #","data":"# + data + "}")
    }

    /// The frame as a message, for the few the hub reads itself.
    var message: LiveMessage? { try? JSONDecoder().decode(LiveMessage.self, from: Data(text.utf8)) }

    private static let encoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
}

/// What travels between instances: a frame and its recipients, as the JSON object
/// `{"users": [ids], "message": frame}`. It is written and read as text around the frame's own, so
/// an instance passing a message on neither decodes nor encodes it again; the shape is the one
/// earlier releases use, so instances of two releases understand each other during a rolling
/// upgrade. A field added later must come before `message`: the fast path takes everything after
/// it as the frame.
enum LiveEnvelope {
    /// `frame` for `users`, as a notification's payload.
    static func encode(_ frame: LiveFrame, to users: [String]) throws -> String {
        let ids = String(decoding: try encoder.encode(users), as: UTF8.self)
        return #"{"users":"# + ids + #","message":"# + frame.text + "}"
    }

    /// The frame and recipients in `payload`, or nil when it is not an envelope. Read as text when
    /// it has the shape ``encode(_:to:)`` writes, decoded as JSON otherwise.
    static func decode(_ payload: String) -> (frame: LiveFrame, users: Set<String>)? {
        if let read = read(payload) { return read }
        guard let envelope = try? JSONDecoder().decode(Coded.self, from: Data(payload.utf8)),
            let frame = try? LiveFrame(envelope.message)
        else { return nil }
        return (frame, Set(envelope.users))
    }

    /// The fast path: `{"users":["id",…],"message":{"type":"name",…}}`, where ids and the type
    /// have no escapes.
    private static func read(_ payload: String) -> (frame: LiveFrame, users: Set<String>)? {
        let head = #"{"users":["#
        let middle = #"],"message":"#
        let type = #"{"type":""#
        guard payload.hasPrefix(head), payload.hasSuffix("}"),
            let end = payload.range(of: middle)
        else { return nil }
        let list = payload[payload.index(payload.startIndex, offsetBy: head.count)..<end.lowerBound]
        let text = payload[end.upperBound..<payload.index(before: payload.endIndex)]
        var users = Set<String>()
        for item in list.split(separator: ",") {
            guard item.count >= 2, item.first == "\"", item.last == "\"" else { return nil }
            let id = item.dropFirst().dropLast()
            guard !id.contains("\\"), !id.contains("\"") else { return nil }
            users.insert(String(id))
        }
        guard text.hasPrefix(type) else { return nil }
        let name = text.dropFirst(type.count).prefix { $0 != "\"" }
        guard !name.contains("\\") else { return nil }
        return (LiveFrame(type: String(name), text: String(text)), users)
    }

    private static let encoder = JSONEncoder()

    /// The envelope as JSON, for payloads the fast path does not read.
    private struct Coded: Codable {
        var users: [String]
        var message: LiveMessage
    }
}
