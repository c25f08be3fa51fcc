import Foundation
import TonightClient
import TonightServer

/// Fills a database with ``DemoCity``: venues, shows, artists and affinity through the importers
/// (as an operator would), then people, friendships, promotions, clips, votes, a party and sports
/// sessions through the public API with the Swift SDK (as the apps would).
///
/// Running it again changes nothing: the importers are idempotent and the people step stops when
/// the demo accounts exist. Clips need ffmpeg; without it the demo has no clips and says so.
public struct DemoSeeder: Sendable {
    /// What one run did.
    public struct Summary: Sendable, Equatable {
        public var alreadySeeded = false
        public var places = 0
        public var shows = 0
        public var users = 0
        public var clips = 0
        public var sessions = 0

        public init(
            alreadySeeded: Bool = false, places: Int = 0, shows: Int = 0, users: Int = 0, clips: Int = 0,
            sessions: Int = 0
        ) {
            self.alreadySeeded = alreadySeeded
            self.places = places
            self.shows = shows
            self.users = users
            self.clips = clips
            self.sessions = sessions
        }
    }

    let services: AppServices
    let serverURL: URL
    let log: @Sendable (String) -> Void

    /// - Parameters:
    ///   - services: The running server's services (the importers write through them).
    ///   - serverURL: Where that server listens, for the SDK.
    public init(services: AppServices, serverURL: URL, log: @escaping @Sendable (String) -> Void = DemoSeeder.printLine)
    {
        self.services = services
        self.serverURL = serverURL
        self.log = log
    }

    /// Writes a progress line to standard output at once (it is not a terminal under a supervisor).
    public static func printLine(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Seeds everything relative to `now`.
    public func run(now: Date = Date()) async throws -> Summary {
        var summary = Summary()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tonight-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let files: [(ImportKind, String, String)] = [
            (.osm, "venues.osm", DemoCity.osm()), (.feed, "feed.xml", DemoCity.feed(now: now)),
            (.affinity, "affinity.txt", DemoCity.affinityText()),
        ]
        for (kind, name, text) in files {
            let path = folder.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try await Importer.run(kind, path: path, dryRun: false, services: services)
            log(
                "demo: imported \(name): \(result.tallies.map { "\($0.key) \($0.value.inserted) new" }.sorted().joined(separator: ", "))"
            )
        }
        summary.places = DemoCity.venues.count + DemoCity.halls.count
        summary.shows = DemoCity.shows.count

        do {
            _ = try await services.createUser(
                username: "mia", email: "mia@demo.tonight", password: DemoCity.password, role: .user)
        } catch {
            log("demo: the demo people are already here; leaving them as they are")
            summary.alreadySeeded = true
            return summary
        }
        _ = try? await services.createUser(
            username: "admin", email: "admin@demo.tonight", password: DemoCity.password, role: .admin)
        for person in DemoCity.people where person.username != "mia" {
            _ = try await services.createUser(
                username: person.username, email: "\(person.username)@demo.tonight", password: DemoCity.password,
                role: .user)
        }
        var clients: [String: TonightClient] = [:]
        var ids: [String: String] = [:]
        for person in DemoCity.people {
            let client = TonightClient(serverURL: serverURL)
            let me = try await client.logIn(username: person.username, password: DemoCity.password)
            clients[person.username] = client
            ids[person.username] = me.id
            _ = try await client.updateMe(
                ProfileChange(
                    displayName: person.displayName, showNameOnPosts: true,
                    gender: Components.Schemas.Gender(rawValue: person.gender), birthDate: person.birthDate,
                    bio: person.bio, homeCity: "Berlin",
                    preferences: Preferences(
                        genderPreference: person.wants.compactMap(Components.Schemas.Gender.init(rawValue:)),
                        sportsPlayed: person.sports, radiusMeters: 15_000, budget: 40)))
        }
        summary.users = DemoCity.people.count + 1
        for (a, b) in DemoCity.friendships {
            _ = try await clients[a]!.sendFriendRequest(to: ids[b]!)
            try await clients[b]!.acceptFriendRequest(from: ids[a]!)
        }
        try await promote()
        summary.clips = try await postClips(clients, folder: folder)
        try await party(clients, now: now)
        summary.sessions = try await createSessions(clients, now: now)
        _ = try await clients["mia"]!.setFavorite(artistID: "feed:DEMO-A3", true)
        _ = try await clients["zoe"]!.attend(eventID: "feed:DEMO-E2", as: .going)
        _ = try await clients["sam"]!.attend(eventID: "feed:DEMO-E2", as: .going)
        log(
            "demo: \(summary.users) accounts (password \(DemoCity.password)), \(summary.places) places, "
                + "\(summary.shows) shows, \(summary.clips) clips, \(summary.sessions) sessions")
        return summary
    }

    /// The venues' promotions, set by the admin through the SDK.
    private func promote() async throws {
        let admin = TonightClient(serverURL: serverURL)
        _ = try await admin.logIn(username: "admin", password: DemoCity.password)
        for venue in DemoCity.venues {
            guard let promotion = venue.promotion else { continue }
            _ = try await admin.setPromotion(
                placeID: venue.placeID, PromotionInput(tier: promotion.tier, tagline: promotion.tagline))
        }
    }

    /// Clips made by ffmpeg (when installed), posted by their authors, voted, commented, followed.
    private func postClips(_ clients: [String: TonightClient], folder: URL) async throws -> Int {
        guard Self.ffmpegAvailable() else {
            log("demo: ffmpeg is not installed, so the demo has no clips")
            return 0
        }
        var posts: [(index: Int, id: String)] = []
        for (index, clip) in DemoCity.clips.enumerated() {
            let file = folder.appendingPathComponent("clip\(index).mp4")
            try Self.makeClip(source: clip.source, to: file)
            var draft = PostDraft(
                placeID: clip.venue.map { "osm:node/\($0)" },
                cityKey: clip.venue == nil ? "Berlin$State of Berlin$DE" : nil,
                caption: clip.caption)
            if let song = clip.song {
                draft.songTitle = song.title
                draft.songArtist = song.artist
                draft.songURI = song.uri
            }
            posts.append((index, try await clients[clip.author]!.createPost(file: file, draft: draft).id))
        }
        // Others react once a clip is processed (a clip is nobody else's business before).
        for (index, id) in posts {
            let clip = DemoCity.clips[index]
            guard try await waitUntilProcessed(id, by: clients[clip.author]!) else { continue }
            for (offset, person) in DemoCity.people.enumerated() where person.username != clip.author {
                let client = clients[person.username]!
                _ = try await client.vote((index + offset) % 4 == 0 ? -1 : 1, on: id)
                if (index + offset) % 3 == 0 { try await client.bookmark(id) }
            }
            let commenter = DemoCity.people[(index + 1) % DemoCity.people.count].username
            if commenter != clip.author {
                _ = try await clients[commenter]!.comment(on: id, "This looks amazing, on my way!")
            }
        }
        for (follower, followed) in [("leo", "ana"), ("ben", "ana"), ("zoe", "mia"), ("sam", "ana"), ("ana", "mia")] {
            _ = try await clients[follower]!.follow(followed)
        }
        return posts.count
    }

    /// Waits up to two minutes for the server to process a clip; false if it failed or took longer.
    private func waitUntilProcessed(_ id: String, by author: TonightClient) async throws -> Bool {
        for _ in 0..<240 {
            switch try await author.post(id).status {
            case .ready: return true
            case .failed: return false
            case .processing: try await Task.sleep(for: .milliseconds(500))
            }
        }
        log("demo: clip \(id) is still processing after two minutes; left without votes")
        return false
    }

    /// Mia's party tonight at the club, with people going (the event wall has someone to meet).
    private func party(_ clients: [String: TonightClient], now: Date) async throws {
        let when = DemoCity.local(day: 0, time: nil, now: now)
        let event = try await clients["mia"]!.createEvent(
            EventInput(
                name: "Mia's Birthday Rave", description: "Dress code: glitter. Guest list at the door.",
                placeId: "osm:node/9100001", localDate: when.date, localTime: when.time, durationMinutes: 360,
                categoryId: "feed:DEMO-C1", minPrice: 10, maxPrice: 10, currency: "EUR"))
        for name in ["mia", "leo", "ana", "ben", "zoe"] {
            _ = try await clients[name]!.attend(eventID: event.id, as: .going)
        }
    }

    private func createSessions(_ clients: [String: TonightClient], now: Date) async throws -> Int {
        for plan in DemoCity.sessions {
            let when = DemoCity.local(day: plan.day, time: plan.time, now: now)
            let session = try await clients[plan.creator]!.createSession(
                SessionInput(
                    sport: plan.sport, skill: Components.Schemas.SkillLevel(rawValue: plan.skill)!, notes: plan.notes,
                    placeId: "osm:node/\(plan.venue)", localDate: when.date, localTime: when.time,
                    durationMinutes: 90, capacity: plan.capacity))
            for player in plan.players { _ = try await clients[player]!.joinSession(id: session.id) }
        }
        return DemoCity.sessions.count
    }

    static func ffmpegAvailable() -> Bool { (try? run(["ffmpeg", "-version"])) != nil }

    /// A 4-second 360×640 H.264/AAC clip from an ffmpeg test source, with clicks at 120 BPM.
    static func makeClip(source: String, to file: URL) throws {
        try run([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-f", "lavfi", "-i",
            "aevalsrc=0.8*sin(2*PI*880*t)*lt(mod(t\\,0.5)\\,0.05):s=44100", "-t", "4", "-c:v", "libx264", "-preset",
            "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", file.path,
        ])
    }

    private static func run(_ arguments: [String]) throws {
        guard try ChildProcess.run("/usr/bin/env", arguments: arguments).succeeded else {
            throw DemoError("\(arguments[0]) failed")
        }
    }
}

/// Why the demo could not be seeded.
public struct DemoError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
