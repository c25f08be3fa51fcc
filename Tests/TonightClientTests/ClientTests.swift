import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import OpenAPIRuntime
import Synchronization
import Testing
import TonightClient
import TonightServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs `body` with an SDK client talking to the real application on a real port.
func withServer(
    configure: (inout AppConfig) -> Void = { _ in },
    _ body: @escaping @Sendable (AppServices, URL) async throws -> Void
) async throws {
    var config = AppConfig()
    config.dataDirectory =
        FileManager.default.temporaryDirectory
        .appendingPathComponent("tonight-sdk-\(UUID().uuidString)").path
    config.port = 0
    config.bcryptCost = 4
    config.jobsEnabled = false
    config.logLevel = .warning
    // Long enough that a pooled client connection is never closed under a request that a busy
    // machine (the whole suite at once) holds up; the idle-timeout tests set their own.
    config.idleTimeout = 60
    configure(&config)
    let services = try await AppServices.make(config: config)
    let app = try await buildApplication(config, services: services)
    try await app.test(.live) { client in
        let port = try #require(client.port)
        try await body(services, URL(string: "http://127.0.0.1:\(port)")!)
    }
}

@Suite("Swift SDK against a live server")
struct ClientTests {
    @Test("sign up → sign in → me → refresh → logout")
    func accountFlow() async throws {
        try await withServer { _, url in
            let tonight = TonightClient(serverURL: url)
            let created = try await tonight.signUp(
                username: "Sam", email: "sam@example.com", password: "a long enough passphrase", displayName: "Sam")
            #expect(created.username == "Sam")
            #expect(await tonight.isSignedIn)
            try await tonight.logOut()
            #expect(await !tonight.isSignedIn)
            await #expect(throws: TonightError.self) { _ = try await tonight.me() }

            let me = try await tonight.logIn(username: "sam@example.com", password: "a long enough passphrase")
            #expect(me.id == created.id)
            #expect(try await tonight.me().email == "sam@example.com")
            let before = try #require(await tonight.tokens)
            try await tonight.refreshTokens()
            let after = try #require(await tonight.tokens)
            #expect(after.refreshToken != before.refreshToken)
            #expect(try await tonight.me().id == created.id)

            let updated = try await tonight.updateMe(.init(bio: "Out tonight", preferences: .init(radiusMeters: 2000)))
            #expect(updated.bio == "Out tonight")
            #expect(try await tonight.user(named: "sam").bio == "Out tonight")
            try await tonight.logOut()
            #expect(await tonight.tokens == nil)
        }
    }

    @Test("server problems arrive as typed errors with field messages")
    func typedErrors() async throws {
        try await withServer { _, url in
            let tonight = TonightClient(serverURL: url)
            do {
                try await tonight.signUp(username: "x", email: "bad", password: "short")
                Issue.record("sign-up with invalid fields succeeded")
            } catch let error as TonightError {
                guard case .problem(let problem) = error else { Issue.record("\(error)"); return }
                #expect(problem.status == 400)
                #expect(problem.code == "validation_failed")
                #expect(Set(problem.fieldMessages.keys) == ["username", "email", "password"])
            }
            try await tonight.signUp(username: "tess", email: "tess@example.com", password: "a long enough passphrase")
            let other = TonightClient(serverURL: url)
            await #expect(throws: TonightError.self) {
                try await other.logIn(username: "tess", password: "the wrong passphrase")
            }
            do {
                try await other.logIn(username: "tess", password: "the wrong passphrase")
            } catch let error as TonightError {
                #expect(error.code == "invalid_credentials")
                #expect(error.errorCode == .invalidCredentials)
                #expect(error.status == 401)
            }
        }
    }

    @Test("expiring access tokens are refreshed transparently, one refresh at a time")
    func transparentRefresh() async throws {
        try await withServer(configure: { $0.accessTokenTTL = 20 }) { _, url in
            let tonight = TonightClient(serverURL: url)
            try await tonight.signUp(username: "uma", email: "uma@example.com", password: "a long enough passphrase")
            let first = try #require(await tonight.tokens)
            // The token expires within the SDK's 30-second margin, so these calls refresh; many at once
            // must share one refresh (the server ends a login whose refresh token is reused).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 { group.addTask { _ = try await tonight.me() } }
                try await group.waitForAll()
            }
            let later = try #require(await tonight.tokens)
            #expect(later.refreshToken != first.refreshToken)
            #expect(try await tonight.me().username == "uma")
        }
    }

    @Test("anonymous device, then sign up keeps the device's id")
    func anonymousUpgrade() async throws {
        try await withServer { _, url in
            let tonight = TonightClient(serverURL: url)
            let device = try await tonight.continueAnonymously()
            #expect(device.isAnonymous)
            do {
                _ = try await tonight.updateMe(.init(bio: "hi"))
                Issue.record("an anonymous device wrote")
            } catch let error as TonightError {
                #expect(error.code == "anonymous_read_only")
            }
            let account = try await tonight.signUp(
                username: "vera", email: "vera@example.com", password: "a long enough passphrase")
            #expect(account.id == device.id)
            #expect(!account.isAnonymous)
        }
    }

    @Test("the live socket delivers the user's events")
    func liveSocket() async throws {
        try await withServer { services, url in
            let tonight = TonightClient(serverURL: url)
            let me = try await tonight.signUp(
                username: "wes", email: "wes@example.com", password: "a long enough passphrase")
            let received = Mutex<[String]>([])
            try await tonight.live { message, sender in
                received.withLock { $0.append(message.type) }
                if message.type == "ready" {
                    await services.live.deliver(
                        LiveMessage(type: "notice", data: try OpenAPIObjectContainer(unvalidatedValue: ["n": 1])),
                        to: me.id)
                } else {
                    try await sender.close()
                }
            }
            #expect(received.withLock { $0 } == ["ready", "notice"])
        }
    }

    @Test("writes queued offline are sent later, once, with their idempotency key")
    func offlineWrites() async throws {
        try await withServer { _, url in
            let store = InMemoryTokenStore()
            let queueFile = FileManager.default.temporaryDirectory.appendingPathComponent("pending-\(UUID()).json")
            let online = TonightClient(serverURL: url, tokenStore: store)
            try await online.signUp(username: "xena", email: "xena@example.com", password: "a long enough passphrase")

            // Offline: the server cannot be reached; the write stays queued (and on disk).
            let offline = TonightClient(
                serverURL: URL(string: "http://127.0.0.1:1")!, tokenStore: store,
                pendingWrites: PendingWrites(fileURL: queueFile))
            let body = try JSONSerialization.data(withJSONObject: [
                "currentPassword": "a long enough passphrase", "newPassword": "another long passphrase",
            ])
            let write = await offline.enqueueWrite(path: "/v1/me/password", json: body)
            #expect(await offline.flushPendingWrites(timeout: .seconds(2)).remaining == 1)

            // Back online (a relaunch reads the same queue file): sent once.
            let back = TonightClient(
                serverURL: url, tokenStore: store, pendingWrites: PendingWrites(fileURL: queueFile))
            let result = await back.flushPendingWrites()
            #expect(result.sent.map(\.id) == [write.id])
            #expect(result.remaining == 0)
            #expect(await PendingWrites(fileURL: queueFile).all.isEmpty)
            let check = TonightClient(serverURL: url)
            try await check.logIn(username: "xena", password: "another long passphrase")
        }
    }

    @Test("people: friends, a wall match, invitations, notifications, push tokens")
    func people() async throws {
        try await withServer { services, url in
            _ = try await services.createUser(
                username: "mod", email: "mod@example.com", password: "a long enough passphrase", role: .moderator)
            let moderator = TonightClient(serverURL: url)
            _ = try await moderator.logIn(username: "mod", password: "a long enough passphrase")
            let place = try await moderator.createPlace(
                .init(name: "Melkweg", category: .club, location: .init(lat: 52.3647, lon: 4.8811)))
            let ana = TonightClient(serverURL: url)
            let anaID = try await ana.signUp(
                username: "ana", email: "ana@example.com", password: "a long enough passphrase"
            ).id
            let ben = TonightClient(serverURL: url)
            let benID = try await ben.signUp(
                username: "ben", email: "ben@example.com", password: "a long enough passphrase"
            ).id

            #expect(try await ana.sendFriendRequest(to: benID).status == .pending)
            #expect(try await ben.friendRequests().items.map(\.user.id) == [anaID])
            try await ben.acceptFriendRequest(from: anaID)
            #expect(try await ana.friends().items.map(\.user.id) == [benID])

            let party = try await ana.createEvent(
                .init(name: "Late set", placeId: place.id, localDate: "2031-07-01", localTime: "23:00"))
            _ = try await ana.attend(eventID: party.id, as: .going)
            let invited = try await ana.invite([benID], to: party.id)
            #expect(invited.invited.count == 1)
            let invitation = try #require(try await ben.invitations().items.first)
            #expect(try await ben.answerInvitation(invitation.id, accept: true).status == .accepted)

            #expect(try await ana.wall(eventID: party.id).items.map(\.user.id) == [benID])
            #expect(try await ana.swipe(eventID: party.id, userID: benID, .like).match == nil)
            let matched = try await ben.swipe(eventID: party.id, userID: anaID, .like)
            #expect(matched.match?.user.id == anaID)
            #expect(try await ana.matches().items.first?.eventName == "Late set")

            let (inbox, unread) = try await ana.notifications()
            #expect(Set(inbox.items.map(\.kind)) == [.friendAccepted, .match])
            #expect(unread == 2)
            #expect(try await ana.markRead(inbox.items[0].id) == 1)
            #expect(try await ana.markRead() == 0)
            let settings = try await ana.setNotificationSettings(.init(muted: [.message]))
            #expect(try await ana.notificationSettings() == settings)
            #expect(try await ana.unreadNotificationCount() == 0)
            try await ana.registerPushToken(String(repeating: "ab", count: 32))
            #expect(try await ana.devices().map(\.token) == [String(repeating: "ab", count: 32)])
            try await ana.unregisterPushToken(String(repeating: "ab", count: 32))
            #expect(try await ana.devices().isEmpty)

            try await ben.unmatch(try #require(matched.match?.id))
            try await ben.setBlocked(anaID, true)
            #expect(try await ben.blockedUsers().items.map(\.user.id) == [anaID])
            #expect(try await ana.friends().items.isEmpty)
            do {
                _ = try await ana.sendFriendRequest(to: benID)
                Issue.record("a blocked user was reached")
            } catch let error as TonightError {
                #expect(error.status == 404)
            }
        }
    }

    @Test("chat: the device store syncs exactly the unseen messages, keeps them in a file, takes live events")
    func chatStore() async throws {
        try await withServer { _, url in
            let ana = TonightClient(serverURL: url)
            let anaID = try await ana.signUp(
                username: "ana", email: "ana@example.com", password: "a long enough passphrase"
            ).id
            let ben = TonightClient(serverURL: url)
            let benID = try await ben.signUp(
                username: "ben", email: "ben@example.com", password: "a long enough passphrase"
            ).id
            _ = try await ana.sendFriendRequest(to: benID)
            try await ben.acceptFriendRequest(from: anaID)
            let conversation = try await ana.openConversation(with: benID)
            for text in ["one", "two", "three"] { _ = try await ana.sendMessage(text, in: conversation.id) }

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("chat-\(UUID().uuidString).json")
            let store = ChatStore(client: ben, fileURL: file)
            #expect(try await store.sync(conversation.id).map(\.text) == ["one", "two", "three"])
            #expect(try await store.sync(conversation.id).isEmpty)
            // A restart reads the file; only what came since is fetched.
            for text in ["four", "five"] { _ = try await ana.sendMessage(text, in: conversation.id) }
            let reopened = ChatStore(client: ben, fileURL: file)
            #expect(await reopened.cursor(of: conversation.id) == 3)
            try await reopened.syncAll()
            #expect(await reopened.messages(in: conversation.id).map(\.seq) == [1, 2, 3, 4, 5])

            // Sending stores the message; the same message arriving live is not added twice.
            let sent = try await reopened.send("six", in: conversation.id)
            #expect(sent.seq == 6)
            let echo = try LiveMessage(
                type: LiveMessage.EventType.message,
                data: OpenAPIObjectContainer(unvalidatedValue: [
                    "message": [
                        "id": sent.id, "conversationId": sent.conversationId, "seq": 6, "senderId": benID,
                        "text": "six", "createdAt": "2031-01-01T00:00:00Z",
                    ] as [String: any Sendable]
                ]))
            #expect(await reopened.receive(echo)?.seq == 6)
            #expect(await reopened.messages(in: conversation.id).count == 6)
            let (list, unread) = try await ana.conversations()
            #expect(list.items.first?.lastMessage?.text == "six")
            #expect(unread == 1)
            #expect(try await ana.markRead(conversationID: conversation.id, upTo: 6).totalUnread == 0)
        }
    }

    @Test("places and events: geocode, create, search tonight, attend, suggest")
    func placesAndEvents() async throws {
        try await withServer { services, url in
            _ = try await services.createUser(
                username: "mod", email: "mod@example.com", password: "a long enough passphrase", role: .moderator)
            let moderator = TonightClient(serverURL: url)
            _ = try await moderator.logIn(username: "mod", password: "a long enough passphrase")
            let lisbon = try await moderator.geocode("lisboa").first
            #expect(lisbon?.countryCode == "PT")
            let city = try await moderator.city(latitude: 38.7223, longitude: -9.1393)
            #expect(city.timeZone == "Europe/Lisbon")
            let place = try await moderator.createPlace(
                .init(name: "Pensão Amor", category: .bar, location: .init(lat: 38.7071, lon: -9.1446)))
            #expect(place.cityKey == city.key)

            let guest = TonightClient(serverURL: url)
            _ = try await guest.signUp(
                username: "guest", email: "guest@example.com", password: "a long enough passphrase")
            let party = try await guest.createEvent(
                .init(name: "Fado late", placeId: place.id, localDate: "2031-07-01", localTime: "22:00"))
            let attendance = try await guest.attend(eventID: party.id, as: .going)
            #expect(attendance.counts.going == 1)
            let found = try await guest.events(.init(near: "38.7071,-9.1446", radius: 1000))
            #expect(found.items.map(\.id) == [party.id])
            #expect(try await guest.myEvents(status: .going).items.first?.myStatus == .going)
            #expect(try await guest.myEvents(status: .going, kinds: [.show, .party]).items.map(\.id) == [party.id])
            #expect(try await guest.myEvents(status: .going, kinds: [.session]).items.isEmpty)
            #expect(try await guest.attendees(eventID: party.id).items.map(\.user.username) == ["guest"])
            let moved = try await guest.updateEvent(id: party.id, .init(localTime: "23:00"))
            #expect(moved.changes?.map(\.field) == [.start])
            #expect(try await guest.categories().isEmpty)
            #expect(try await guest.favoriteArtists().items.isEmpty)
            #expect(try await guest.artists(inCategory: "none").items.isEmpty)
            try await guest.leave(eventID: party.id)
            #expect(try await guest.event(id: party.id).counts.going == 0)
            let nearby = try await guest.places(.init(near: "38.7071,-9.1446"))
            #expect(nearby.items.first?.name == "Pensão Amor")
            let renamed = try await moderator.updatePlace(id: place.id, .init(name: "Pensão Amor Lisboa"))
            #expect(renamed.name == "Pensão Amor Lisboa")
            #expect(try await guest.cancelEvent(id: party.id).status == .cancelled)
            do {
                _ = try await guest.places(.init(near: "91,0"))
                Issue.record("a bad point was accepted")
            } catch let error as TonightError {
                #expect(error.status == 400)
            }
        }
    }

    @Test("sessions: create at a spot, join until full, search, calendar feed, stats, recommendations")
    func sessions() async throws {
        try await withServer { _, url in
            // Ten days ahead on Lisbon's calendar: inside the feed's window.
            var lisbon = Foundation.Calendar(identifier: .gregorian)
            lisbon.timeZone = TimeZone(identifier: "Europe/Lisbon")!
            let parts = lisbon.dateComponents([.year, .month, .day], from: Date().addingTimeInterval(10 * 86_400))
            let day = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            let host = TonightClient(serverURL: url)
            _ = try await host.signUp(username: "host", email: "host@example.com", password: "a long enough passphrase")
            #expect(try await host.sports().count >= 40)
            let session = try await host.createSession(
                .init(
                    sport: "tennis", skill: .beginner,
                    spot: .init(location: .init(lat: 38.7071, lon: -9.1446), label: "Court 1"),
                    localDate: day, localTime: "18:00", durationMinutes: 60, capacity: 2))
            #expect(session.session?.openSpots == 1)
            #expect(session.place.googleMapsURL.hasPrefix("https://www.google.com/maps/"))
            let guest = TonightClient(serverURL: url)
            _ = try await guest.signUp(
                username: "guest", email: "guest@example.com", password: "a long enough passphrase")
            _ = try await guest.setPreferences(.init(sportsPlayed: ["tennis"]))
            let recommended = try await guest.recommendedSessions(near: "38.7071,-9.1446")
            #expect(recommended.map(\.event.id) == [session.id])
            #expect(recommended.first?.reasons.first == "You play tennis.")
            let third = TonightClient(serverURL: url)
            _ = try await third.signUp(
                username: "third", email: "third@example.com", password: "a long enough passphrase")
            #expect(try await guest.joinSession(id: session.id).counts.going == 2)
            do {
                _ = try await third.joinSession(id: session.id)
                Issue.record("a full session took another player")
            } catch let error as TonightError {
                #expect(error.code == "session_full")
            }
            #expect(try await guest.players(sessionID: session.id).map(\.username) == ["host", "guest"])
            #expect(try await third.sessions(.init(sport: "tennis")).items.map(\.id) == [session.id])
            #expect(try await third.sessions(.init(openOnly: true)).items.isEmpty)
            let calendar = try await guest.calendar(from: day, to: day, timeZone: "Europe/Lisbon")
            #expect(calendar.days.first?.items.map(\.id) == [session.id])
            let feed = try await guest.calendarSubscriptionURL()
            let (data, _) = try await URLSession.shared.data(from: feed)
            #expect(String(decoding: data, as: UTF8.self).contains("BEGIN:VEVENT"))
            #expect(try await host.stats(username: "guest").sessionsPlayed == 0)
            let cards = try await guest.exploreCards(near: "38.7071,-9.1446")
            #expect(cards.coldStart)
            try await guest.dismiss(eventID: session.id, reason: .time)
            try await guest.leaveSession(id: session.id)
            #expect(try await third.joinSession(id: session.id).counts.going == 2)
            try await host.deleteSession(id: session.id)
        }
    }

    @Test("sports: admins add one to the catalogue; a taken slug is a typed error")
    func addSport() async throws {
        try await withServer { services, url in
            _ = try await services.createUser(
                username: "boss", email: "boss@example.com", password: "a long enough passphrase", role: .admin)
            let admin = TonightClient(serverURL: url)
            _ = try await admin.logIn(username: "boss", password: "a long enough passphrase")
            let sport = try await admin.createSport(slug: "kabaddi", name: "Kabaddi")
            #expect(sport.icon == "sportscourt" && !sport.builtIn)
            #expect(try await admin.sports().contains { $0.slug == "kabaddi" })
            do {
                _ = try await admin.createSport(slug: "tennis", name: "Tennis again")
                Issue.record("a built-in slug was taken")
            } catch let error as TonightError {
                #expect(error.code == "sport_exists")
            }
        }
    }

    @Test("posts: upload a still from a file, processed, in the venue feed; vote, comment, bookmark, follow")
    func posts() async throws {
        try await withServer { services, url in
            _ = try await services.createUser(
                username: "mod", email: "mod@example.com", password: "a long enough passphrase", role: .moderator)
            let moderator = TonightClient(serverURL: url)
            _ = try await moderator.logIn(username: "mod", password: "a long enough passphrase")
            let place = try await moderator.createPlace(
                .init(name: "Paradiso", category: .club, location: .init(lat: 52.3622, lon: 4.8838)))
            let ana = TonightClient(serverURL: url)
            _ = try await ana.signUp(username: "ana", email: "ana@example.com", password: "a long enough passphrase")
            let ben = TonightClient(serverURL: url)
            _ = try await ben.signUp(username: "ben", email: "ben@example.com", password: "a long enough passphrase")

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-\(UUID().uuidString).jpg")
            _ = try await ChildProcess(
                "/usr/bin/env",
                arguments: [
                    "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120", "-frames:v", "1", file.path,
                ],
                standardError: 2
            ).exited()
            defer { try? FileManager.default.removeItem(at: file) }

            var draft = PostDraft(placeID: place.id, caption: "Doors open #live")
            draft.songTitle = "Song"
            let post = try await ana.createPost(file: file, draft: draft)
            #expect(post.status == .processing)
            #expect(post.tags == ["live"])
            let worker = JobWorker(
                queue: services.jobs, handlers: services.jobHandlers, kinds: .except(["mail"]), logger: services.logger)
            #expect(try await worker.runOnce() == 1)
            #expect(try await ana.post(post.id).status == .ready)
            #expect(try await ben.feed(.place(place.id)).items.map(\.id) == [post.id])
            let vote = try await ben.vote(1, on: post.id)
            #expect(vote.up == 1 && vote.value == 1)
            try await ben.comment(on: post.id, "Looks great")
            #expect(try await ana.comments(on: post.id).items.map(\.text) == ["Looks great"])
            try await ben.bookmark(post.id)
            #expect(try await ben.feed(.bookmarks).items.map(\.id) == [post.id])
            #expect(try await ben.follow("ana").following)
            #expect(try await ben.feed(.following).items.map(\.id) == [post.id])
            #expect(try await ben.searchUsers("an").map(\.username) == ["ana"])
            #expect(try await ben.searchSongs("song").map(\.title) == ["Song"])
            let city = try #require(place.cityKey)
            #expect(try await ben.cityHub(city).items.first?.clips == 1)
            #expect(try await ben.recordAnalytics([.init(name: "feed.open", time: Date(), city: city)]) == 1)
            try await ben.sendFeedback("Love the venue feed")
            try await ana.deletePost(post.id)
            #expect(try await ben.feed(.place(place.id)).items.isEmpty)
        }
    }
}
