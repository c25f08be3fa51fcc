import Foundation
import OpenAPIRuntime

extension TonightClient {
    /// The caller's conversations, latest activity first, and the total unread count.
    public func conversations(cursor: String? = nil) async throws -> (page: Page<Conversation>, totalUnread: Int) {
        try await call {
            let page = try await api.listConversations(query: .init(cursor: cursor)).ok.body.json
            return (Page(items: page.items, nextCursor: page.nextCursor), page.totalUnread)
        }
    }

    /// The conversation with a friend or match (made on first use).
    public func openConversation(with userID: String) async throws -> Conversation {
        try await call { try await api.openConversation(body: .json(.init(userId: userID))).ok.body.json }
    }

    /// One conversation.
    public func conversation(id: String) async throws -> Conversation {
        try await call { try await api.getConversation(path: .init(conversationId: id)).ok.body.json }
    }

    /// Messages in ascending order: after `since` (sync), or the newest before `before` (history).
    public func messages(in conversationID: String, before: Int64? = nil, since: Int64? = nil, limit: Int? = nil)
        async throws -> (items: [Message], hasMore: Bool)
    {
        try await call {
            let page = try await api.listMessages(
                path: .init(conversationId: conversationID), query: .init(before: before, since: since, limit: limit)
            ).ok.body.json
            return (page.items, page.hasMore)
        }
    }

    /// Sends a message; with the same `clientID`, a retry returns the stored message instead of a copy.
    public func sendMessage(_ text: String, in conversationID: String, clientID: String? = nil) async throws
        -> Message
    {
        try await call {
            switch try await api.sendMessage(
                path: .init(conversationId: conversationID), body: .json(.init(text: text, clientId: clientID)))
            {
            case .created(let created): return try created.body.json
            case .ok(let ok): return try ok.body.json
            default: throw TonightError.unexpectedResponse(status: 0)
            }
        }
    }

    /// Read receipt up to `seq`.
    @discardableResult
    public func markRead(conversationID: String, upTo seq: Int64) async throws -> ReadState {
        try await call {
            try await api.markConversationRead(
                path: .init(conversationId: conversationID), body: .json(.init(seq: seq))
            )
            .ok.body.json
        }
    }
}

/// The device's own copy of its conversations' messages (Pala kept chat history on the phone).
///
/// Messages are kept in `seq` order per conversation, optionally in a JSON file. ``sync(_:)``
/// fetches exactly what came after the newest stored message (call it for every conversation
/// when the live socket reconnects); ``receive(_:)`` adds a live `message` event; ``send(_:in:)``
/// gives each message a client id and retries with it, so a lost answer never doubles a message.
public actor ChatStore {
    private let client: TonightClient
    private let fileURL: URL?
    private var store: [String: [Message]]

    /// A store for `client`'s messages, loaded from (and saved to) `fileURL` when given.
    public init(client: TonightClient, fileURL: URL? = nil) {
        self.client = client
        self.fileURL = fileURL
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        self.store =
            fileURL.flatMap { try? Data(contentsOf: $0) }.flatMap {
                try? decoder.decode([String: [Message]].self, from: $0)
            } ?? [:]
    }

    /// The stored messages of a conversation, oldest first.
    public func messages(in conversationID: String) -> [Message] { store[conversationID] ?? [] }

    /// The newest stored sequence number of a conversation (0 when none): the sync cursor.
    public func cursor(of conversationID: String) -> Int64 { store[conversationID]?.last?.seq ?? 0 }

    /// Fetches every message after the newest stored one; returns the new ones.
    @discardableResult
    public func sync(_ conversationID: String) async throws -> [Message] {
        var fresh: [Message] = []
        while true {
            let page = try await client.messages(in: conversationID, since: cursor(of: conversationID), limit: 100)
            add(page.items)
            fresh += page.items
            if !page.hasMore || page.items.isEmpty { break }
        }
        save()
        return fresh
    }

    /// Syncs every conversation this store has seen.
    public func syncAll() async throws {
        for id in store.keys.sorted() { try await sync(id) }
    }

    /// Adds the message of a live `message` event; returns it (nil for other events).
    @discardableResult
    public func receive(_ event: LiveMessage) -> Message? {
        guard event.type == LiveMessage.EventType.message, let data = event.data,
            let json = try? JSONEncoder().encode(data)
        else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let message = try? decoder.decode([String: Message].self, from: json)["message"] else { return nil }
        add([message])
        save()
        return message
    }

    /// Sends `text` with a fresh client id, retrying up to `attempts` times with the same id when
    /// the server cannot be reached or answers 5xx; stores the sent message.
    public func send(_ text: String, in conversationID: String, attempts: Int = 3) async throws -> Message {
        let clientID = UUID().uuidString
        var lastError: (any Error)?
        for attempt in 0..<max(1, attempts) {
            do {
                let message = try await client.sendMessage(text, in: conversationID, clientID: clientID)
                add([message])
                save()
                return message
            } catch let error as TonightError where (error.status ?? 500) < 500 {
                throw error
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(200 * (attempt + 1)))
            }
        }
        throw lastError ?? TonightError.unexpectedResponse(status: 0)
    }

    private func add(_ messages: [Message]) {
        for message in messages {
            var list = store[message.conversationId] ?? []
            if list.last.map({ $0.seq < message.seq }) ?? true {
                list.append(message)
            } else if !list.contains(where: { $0.seq == message.seq }) {
                list.append(message)
                list.sort { $0.seq < $1.seq }
            }
            store[message.conversationId] = list
        }
    }

    private func save() {
        guard let fileURL else { return }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try? encoder.encode(store).write(to: fileURL, options: .atomic)
    }
}
