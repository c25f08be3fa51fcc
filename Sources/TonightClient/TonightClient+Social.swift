import Foundation
import OpenAPIRuntime

extension TonightClient {
    // MARK: Sign-in with an outside identity

    /// Signs in with an OpenID Connect ID token (Sign in with Apple, Facebook Limited Login…) and
    /// the raw nonce the app gave the provider. Signed in as a member or device, links to it.
    @discardableResult
    public func signIn(idToken: String, nonce: String? = nil) async throws -> Me {
        try await signIn { () async throws -> Components.Schemas.AuthTokens in
            switch try await api.signInWithOIDC(body: .json(.init(idToken: idToken, nonce: nonce))) {
            case .ok(let ok): return try ok.body.json
            case .created(let created): return try created.body.json
            default: throw TonightError.unexpectedResponse(status: 0)
            }
        }
    }

    // MARK: Friends and blocks

    /// The caller's friends, newest first.
    public func friends(cursor: String? = nil) async throws -> Page<Friend> {
        try await call {
            let page = try await api.listFriends(query: .init(cursor: cursor)).ok.body.json
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Asks `userID` to be friends; `.friends` at once when they had asked the caller.
    public func sendFriendRequest(to userID: String) async throws -> Friendship {
        try await call { try await api.sendFriendRequest(body: .json(.init(userId: userID))).ok.body.json }
    }

    /// Pending requests to the caller (`incoming`) or from the caller.
    public func friendRequests(incoming: Bool = true, cursor: String? = nil) async throws -> Page<FriendRequest> {
        try await call {
            let page = try await api.listFriendRequests(
                query: .init(direction: incoming ? .incoming : .outgoing, cursor: cursor)
            ).ok.body.json
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Accepts `userID`'s request.
    public func acceptFriendRequest(from userID: String) async throws {
        try await call { _ = try await api.acceptFriendRequest(path: .init(userId: userID)).ok }
    }

    /// Declines `userID`'s request.
    public func denyFriendRequest(from userID: String) async throws {
        try await call { _ = try await api.denyFriendRequest(path: .init(userId: userID)).noContent }
    }

    /// Withdraws the caller's request to `userID`.
    public func cancelFriendRequest(to userID: String) async throws {
        try await call { _ = try await api.cancelFriendRequest(path: .init(userId: userID)).noContent }
    }

    /// Ends a friendship.
    public func removeFriend(_ userID: String) async throws {
        try await call { _ = try await api.removeFriend(path: .init(userId: userID)).noContent }
    }

    /// Blocks or unblocks a user.
    public func setBlocked(_ userID: String, _ blocked: Bool) async throws {
        try await call {
            if blocked {
                _ = try await api.blockUser(path: .init(userId: userID)).noContent
            } else {
                _ = try await api.unblockUser(path: .init(userId: userID)).noContent
            }
        }
    }

    /// Users the caller blocked.
    public func blockedUsers(cursor: String? = nil) async throws -> Page<Friend> {
        try await call {
            let page = try await api.listBlocks(query: .init(cursor: cursor)).ok.body.json
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    // MARK: The event wall and matches

    /// People on an event's wall (the caller must be going).
    public func wall(eventID: String, cursor: String? = nil) async throws -> Page<WallCard> {
        try await call {
            let page = try await api.getWall(path: .init(eventId: eventID), query: .init(cursor: cursor)).ok.body.json
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Likes or passes someone on an event's wall; the result carries the match a like back made.
    public func swipe(eventID: String, userID: String, _ decision: SwipeDecision) async throws -> SwipeResult {
        try await call {
            try await api.swipe(path: .init(eventId: eventID, userId: userID), body: .json(.init(decision: decision)))
                .ok.body.json
        }
    }

    /// The caller's matches, newest first.
    public func matches(cursor: String? = nil) async throws -> Page<Match> {
        try await call {
            let page = try await api.listMatches(query: .init(cursor: cursor)).ok.body.json
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Ends a match and its chat for both.
    public func unmatch(_ matchID: String) async throws {
        try await call { _ = try await api.unmatch(path: .init(matchId: matchID)).noContent }
    }

    // MARK: Invitations

    /// Invites friends to an event or session the caller attends.
    public func invite(_ userIDs: [String], to eventID: String) async throws -> InviteResult {
        try await call {
            try await api.inviteFriends(path: .init(eventId: eventID), body: .json(.init(userIds: userIDs))).ok.body
                .json
        }
    }

    /// Invitations to (`incoming`) or from the caller.
    public func invitations(incoming: Bool = true, cursor: String? = nil) async throws -> Page<Invitation> {
        try await call {
            let page = try await api.listInvitations(
                query: .init(direction: incoming ? .incoming : .outgoing, cursor: cursor)
            ).ok.body.json
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Accepts (then the caller is going) or declines an invitation.
    public func answerInvitation(_ invitationID: String, accept: Bool) async throws -> Invitation {
        try await call {
            try await api.answerInvitation(
                path: .init(invitationId: invitationID, answer: accept ? .accept : .decline)
            ).ok.body.json
        }
    }

    // MARK: Notifications and push

    /// The inbox, newest first, and the unread count.
    public func notifications(unreadOnly: Bool = false, cursor: String? = nil) async throws
        -> (page: Page<TonightNotification>, unread: Int)
    {
        try await call {
            let page = try await api.listNotifications(query: .init(unread: unreadOnly ? true : nil, cursor: cursor))
                .ok.body.json
            return (Page(items: page.items, nextCursor: page.nextCursor), page.unreadCount)
        }
    }

    /// Marks one notification (or, with nil, all) read; returns the unread count left.
    @discardableResult
    public func markRead(_ notificationID: String? = nil) async throws -> Int {
        try await call {
            if let notificationID {
                return try await api.markNotificationRead(path: .init(notificationId: notificationID)).ok.body.json
                    .unread
            }
            return try await api.markAllNotificationsRead().ok.body.json.unread
        }
    }

    /// How many notifications are unread (for a badge).
    public func unreadNotificationCount() async throws -> Int {
        try await call { try await api.unreadNotificationCount().ok.body.json.unread }
    }

    /// The caller's notification settings.
    public func notificationSettings() async throws -> NotificationSettings {
        try await call { try await api.getNotificationSettings().ok.body.json }
    }

    /// Replaces the caller's notification settings.
    @discardableResult
    public func setNotificationSettings(_ settings: NotificationSettings) async throws -> NotificationSettings {
        try await call { try await api.putNotificationSettings(body: .json(settings)).ok.body.json }
    }

    /// Registers this device's APNs token (hex) for push.
    public func registerPushToken(_ token: String) async throws {
        try await call { _ = try await api.registerDevice(body: .json(.init(token: token, platform: .apns))).ok }
    }

    /// The caller's registered push tokens.
    public func devices() async throws -> [Device] {
        try await call { try await api.listDevices().ok.body.json.items }
    }

    /// Stops push to this device's token.
    public func unregisterPushToken(_ token: String) async throws {
        try await call { _ = try await api.unregisterDevice(path: .init(token: token)).noContent }
    }
}
