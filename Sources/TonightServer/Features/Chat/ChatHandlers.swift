import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct ChatHandlers: Sendable {
    let users: UserRepository
    let social: SocialRepository
    let notifier: Notifier
    let chat: ChatRepository
    let fanout: any LiveFanout
    let notifications: NotificationRepository
    let people: People

    /// The longest chat message, in characters.
    static let maxMessageLength = 2000

    func listConversations(_ input: Operations.ListConversations.Input) async throws
        -> Operations.ListConversations.Output
    {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        let rows = try await chat.conversations(
            of: caller.userID, before: try Paging.keyset(input.query.cursor), limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let items = try await assemble(page, for: caller.userID)
        let next = rows.count > limit ? page.last.map { Paging.keysetCursor($0.updatedAt, $0.id) } : nil
        let total = try await chat.totalUnread(of: caller.userID)
        return .ok(.init(body: .json(.init(items: items, nextCursor: next, totalUnread: total))))
    }

    func openConversation(_ input: Operations.OpenConversation.Input) async throws
        -> Operations.OpenConversation.Output
    {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        let other = try await people.reachable(body.userId, from: caller, field: "userId")
        let conversation: ConversationRecord
        if let existing = try await chat.conversation(between: caller.userID, and: other.id),
            try await canTalk(in: existing)
        {
            conversation = existing
        } else if try await social.areFriends(caller.userID, other.id) {
            conversation = try await chat.open(caller.userID, other.id, kind: .direct, now: Clock.millis())
        } else {
            throw Self.friendsAndMatchesOnly
        }
        guard let item = try await assemble([conversation], for: caller.userID).first else {
            throw APIError.notFound("No such user.")
        }
        return .ok(.init(body: .json(item)))
    }

    func getConversation(_ input: Operations.GetConversation.Input) async throws -> Operations.GetConversation.Output {
        let caller = try RequestInfo.requireMember()
        let conversation = try await membership(input.path.conversationId, caller)
        guard let item = try await assemble([conversation], for: caller.userID).first else {
            throw APIError.notFound("No such conversation.")
        }
        return .ok(.init(body: .json(item)))
    }

    func listMessages(_ input: Operations.ListMessages.Input) async throws -> Operations.ListMessages.Output {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        var issues: [FieldIssue] = []
        if let before = input.query.before, before < 1 {
            issues.append(.init(field: "before", code: "out_of_range", message: "Use a sequence number from 1."))
        }
        if let since = input.query.since, since < 0 {
            issues.append(.init(field: "since", code: "out_of_range", message: "Use a sequence number from 0."))
        }
        if !issues.isEmpty { throw APIError.validation(issues) }
        let conversation = try await membership(input.path.conversationId, caller)
        let rows = try await chat.messages(
            in: conversation.id, before: input.query.before, since: input.query.since, limit: limit + 1)
        // Sync reads forwards (the extra row is the newest); history reads backwards (the oldest).
        let forward = input.query.since != nil
        let page = forward ? Array(rows.prefix(limit)) : Array(rows.suffix(limit))
        return .ok(
            .init(body: .json(.init(items: page.map(Components.Schemas.Message.init), hasMore: rows.count > limit)))
        )
    }

    func sendMessage(_ input: Operations.SendMessage.Input) async throws -> Operations.SendMessage.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        var issues: [FieldIssue] = []
        let text = body.text.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty || text.count > Self.maxMessageLength || !TextRules.isClean(text, multiline: true) {
            issues.append(
                .init(
                    field: "text", code: "invalid",
                    message: "Write 1–\(Self.maxMessageLength) characters, no control characters."))
        }
        if let clientID = body.clientId, clientID.isEmpty || clientID.count > 100 || !TextRules.isClean(clientID) {
            issues.append(.init(field: "clientId", code: "invalid", message: "Use 1–100 visible characters."))
        }
        if !issues.isEmpty { throw APIError.validation(issues) }
        let id = input.path.conversationId
        let send = {
            try await chat.send(in: id, from: caller.userID, text: text, clientID: body.clientId, now: Clock.millis())
        }
        // The store checks who may write; only a refused message reads why (and is tried once more
        // when the reason has gone meanwhile, say a friendship made at that moment).
        var sent = try await send()
        if sent == nil {
            try await refusal(id, caller)
            sent = try await send()
        }
        guard let sent else {
            try await refusal(id, caller)
            throw Self.friendsAndMatchesOnly
        }
        let message = Components.Schemas.Message(sent.message)
        guard let stored = sent.stored else { return .ok(.init(body: .json(message))) }
        await fanout.send(
            try LiveFrame.event(LiveMessage.EventType.message, ["message": message]), to: [stored.userA, stored.userB])
        // Someone with an open socket sees the message live; the others get it in the inbox (and
        // pushed). The message is stored: whatever happens to its notice, the answer is 201.
        if stored.recipientOnlineUntil <= Clock.millis() {
            do {
                let senderName = try await people.current(caller).shownName
                let written = try await notifications.write(
                    [
                        .init(
                            userID: caller.userID == stored.userA ? stored.userB : stored.userA, kind: .message,
                            text: "\(senderName): \(String(text.prefix(80)))", actorID: caller.userID,
                            conversationID: id)
                    ], now: Clock.millis())
                await notifier.publish(written)
            } catch {
                notifier.logger.warning("message notice failed", metadata: LoggedError.metadata(error))
            }
        }
        return .created(.init(body: .json(message)))
    }

    /// Why a message to conversation `id` was refused: 404 when the caller is not in it, 403 when
    /// they may no longer write; returns when they may.
    private func refusal(_ id: String, _ caller: Principal) async throws {
        guard let rights = try await chat.writingRights(id), rights.conversation.includes(caller.userID) else {
            throw APIError.notFound("No such conversation.")
        }
        guard rights.writable else { throw Self.friendsAndMatchesOnly }
    }

    func markConversationRead(_ input: Operations.MarkConversationRead.Input) async throws
        -> Operations.MarkConversationRead.Output
    {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        guard body.seq >= 0 else {
            throw APIError.validation([.init(field: "seq", code: "out_of_range", message: "Use 0 or more.")])
        }
        let conversation = try await membership(input.path.conversationId, caller)
        guard let updated = try await chat.markRead(conversation.id, user: caller.userID, upTo: body.seq) else {
            throw APIError.notFound("No such conversation.")
        }
        let readSeq = updated.read(of: caller.userID)
        if readSeq > conversation.read(of: caller.userID) {
            let receipt = ReadReceipt(conversationId: conversation.id, userId: caller.userID, seq: readSeq)
            await fanout.send(
                try LiveFrame.event(LiveMessage.EventType.read, receipt),
                to: [conversation.other(than: caller.userID)])
        }
        return .ok(
            .init(
                body: .json(
                    .init(
                        conversationId: conversation.id, readSeq: readSeq,
                        unreadCount: updated.unread(for: caller.userID),
                        totalUnread: try await chat.totalUnread(of: caller.userID)))))
    }

    static let friendsAndMatchesOnly = APIError.forbidden(
        "You can message friends and matches only.", code: .friendsAndMatchesOnly)

    /// The conversation if the caller is in it (otherwise 404: others' chats do not exist for them).
    func membership(_ id: String, _ caller: Principal) async throws -> ConversationRecord {
        guard let conversation = try await chat.conversation(id: id), conversation.includes(caller.userID) else {
            throw APIError.notFound("No such conversation.")
        }
        return conversation
    }

    /// Whether the two members may still write (``ConversationRecord/allowsWriting(friends:)``),
    /// asking about the friendship only when it matters.
    func canTalk(in conversation: ConversationRecord) async throws -> Bool {
        if conversation.allowsWriting(friends: false) { return true }
        return conversation.allowsWriting(friends: try await social.areFriends(conversation.userA, conversation.userB))
    }

    private func assemble(_ conversations: [ConversationRecord], for user: String) async throws
        -> [Components.Schemas.Conversation]
    {
        let others = conversations.map { $0.other(than: user) }
        let people = try await users.find(ids: others)
        let last = try await chat.lastMessages(of: conversations)
        let presence = try await chat.presence(of: others)
        let now = Clock.millis()
        return conversations.compactMap { conversation in
            let otherID = conversation.other(than: user)
            guard let other = people[otherID] else { return nil }
            let seen = presence[otherID]
            return .init(
                id: conversation.id, kind: conversation.kind, user: .init(other),
                matchId: conversation.matchID, lastMessage: last[conversation.id].map(Components.Schemas.Message.init),
                lastSeq: conversation.lastSeq, unreadCount: conversation.unread(for: user),
                readSeq: conversation.read(of: user), otherReadSeq: conversation.read(of: otherID),
                presence: .init(online: (seen?.onlineUntil ?? 0) > now, lastSeen: seen?.lastSeen.map(Clock.date)),
                createdAt: Clock.date(conversation.createdAt), updatedAt: Clock.date(conversation.updatedAt))
        }
    }
}

/// The `read` live event's data.
struct ReadReceipt: Codable, Sendable {
    var conversationId: String
    var userId: String
    var seq: Int64
}

extension Components.Schemas.Message {
    init(_ message: MessageRecord) {
        self.init(
            id: message.id, conversationId: message.conversationID, seq: message.seq, senderId: message.senderID,
            text: message.text, clientId: message.clientID, createdAt: Clock.date(message.createdAt))
    }
}
