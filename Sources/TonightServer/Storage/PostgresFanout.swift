import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresKit
import PostgresNIO
import ServiceLifecycle
import TonightAPI
import TonightCore

/// Several instances on one PostgreSQL: each message is a `NOTIFY` on `tonight_live`, and every
/// instance `LISTEN`s on its own connection and hands it to its sockets. Payloads over 7,000 bytes
/// go through a `live_outbox` row and the notification names the row (`#id`). The listener
/// reconnects after a lost connection (messages sent meanwhile are not replayed: clients sync
/// missed chat messages with `since`).
///
/// The same channel carries the database's change notifications (migration 0028): `feed` moves
/// this instance's ``ClusterFeedVersion``, `recs` (migration 0034) its recommendation version,
/// `places` (migration 0037) the version of its ``NearbyIndex``, and
/// `artists` has the ``ArtistSuggester`` check its index before its next answer. While the listener
/// is not subscribed every version is withheld, and subscribing again drops every cached page and
/// recommendation (see ``ClusterFeedVersion``).
final class PostgresFanout: LiveFanout, Service {
    static let channel = "tonight_live"
    static let inlineLimit = 7000
    /// The payloads of migration 0028's triggers.
    static let feedChanged = "feed"
    static let artistsChanged = "artists"
    static let recommendationsChanged = "recs"
    static let placesChanged = "places"

    private let outbox: LiveOutbox
    private let notifications: GroupQueue<Queued, Void>
    /// How long a notification may wait to be sent: the database busy timeout.
    private let deadline: Duration
    private let hub: LiveHub
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let listening = NIOLockedValueBox(false)
    private let feed: ClusterFeedVersion?
    private let recommendations: ClusterFeedVersion?
    private let places: ClusterFeedVersion?
    private let suggester: ArtistSuggester?
    /// The versions the notifications move, withheld together while the listener is away.
    private var versions: [ClusterFeedVersion] { [feed, recommendations, places].compactMap { $0 } }

    init(
        database: Database, hub: LiveHub, url: String, feed: ClusterFeedVersion? = nil,
        recommendations: ClusterFeedVersion? = nil, places: ClusterFeedVersion? = nil,
        suggester: ArtistSuggester? = nil, logger: Logger
    ) throws {
        let outbox = LiveOutbox(database: database)
        let deadline = Duration.milliseconds(max(1, database.busyTimeoutMilliseconds))
        self.outbox = outbox
        self.deadline = deadline
        self.notifications = GroupQueue(maxBatch: 64) { items in
            await Self.notify(items, through: outbox, deadline: deadline)
        }
        self.hub = hub
        self.feed = feed
        self.recommendations = recommendations
        self.places = places
        self.suggester = suggester
        self.configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        self.logger = logger
    }

    /// Notifies in groups: while one group's statement runs, the next messages queue and go
    /// together, each its own `pg_notify` in one statement (one round trip, and the listeners read
    /// them in one go), in order. A caller waits at most the busy timeout; one whose notification
    /// waited longer in the queue is failed without sending it, so a stalled database cannot
    /// build up a backlog.
    func send(_ frame: LiveFrame, to userIDs: [String]) async {
        do {
            var payload = try LiveEnvelope.encode(frame, to: Array(Set(userIDs)))
            if payload.utf8.count > Self.inlineLimit {
                payload = "#" + (try await outbox.store(payload, now: Clock.millis()))
            }
            let item = Queued(payload: payload, since: .now)
            try await withDeadline(deadline) { try await self.notifications.submit(item) }
        } catch {
            logger.warning("live fan-out failed", metadata: LoggedError.metadata(error))
        }
    }

    /// A notification waiting to be sent.
    struct Queued: Sendable {
        var payload: String
        var since: ContinuousClock.Instant
    }

    /// Sends a group: those that waited past `deadline` fail unsent; the rest go in statements
    /// that each hold no payload twice, since PostgreSQL delivers one of identical notifications
    /// in a transaction (a revocation, a reinstatement and a revocation again would arrive as
    /// two).
    static func notify(_ items: [Queued], through outbox: LiveOutbox, deadline: Duration) async
        -> [Result<Void, any Error>]
    {
        let now = ContinuousClock.now
        var results = [Result<Void, any Error>](repeating: .success(()), count: items.count)
        var runs: [[Int]] = [[]]
        var inRun = Set<String>()
        for (index, item) in items.enumerated() {
            if now - item.since > deadline {
                results[index] = .failure(DeadlineExceeded(limit: deadline))
                continue
            }
            if !inRun.insert(item.payload).inserted {
                runs.append([])
                inRun = [item.payload]
            }
            runs[runs.count - 1].append(index)
        }
        for run in runs where !run.isEmpty {
            do {
                try await withDeadline(deadline) { try await outbox.notify(channel, run.map { items[$0].payload }) }
            } catch {
                for index in run { results[index] = .failure(error) }
            }
        }
        return results
    }

    /// Listens until graceful shutdown, reconnecting after failures.
    func run() async throws {
        try await runUntilShutdown { try await self.listenLoop() }
    }

    private func listenLoop() async throws {
        var attempt = 0
        var subscribedBefore = false
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration, id: 1, logger: logger)
                defer { Task { try? await connection.close() } }
                try await connection.listen(on: Self.channel) { notifications in
                    self.listening.withLockedValue { $0 = true }
                    for version in self.versions { version.listening(true) }
                    // Every subscription but the first may have missed notifications, however the
                    // last one ended.
                    if subscribedBefore { self.catchUp() }
                    subscribedBefore = true
                    attempt = 0
                    // A failed heartbeat closes the connection, which ends the notifications.
                    let beat = Task { try await self.heartbeat(connection) }
                    defer { beat.cancel() }
                    for try await notification in notifications { await self.deliver(notification.payload) }
                }
            } catch is CancellationError {
                return
            } catch {
                attempt += 1
                logger.warning("live listener lost its connection", metadata: LoggedError.metadata(error))
            }
            listening.withLockedValue { $0 = false }
            for version in versions { version.listening(false) }
            try await Task.sleep(for: .milliseconds(min(5000, 100 * (1 << min(attempt, 6)))))
        }
    }

    /// Asks the listening connection for `SELECT 1` every second. Each answer renews the feed
    /// version's trust (``ClusterFeedVersion/heartbeat()``), so while the connection hangs the page
    /// cache is off after ``ClusterFeedVersion/staleAfter``. Only a connection that has not answered
    /// for ``deadConnection`` is closed (ending the listen, so the loop connects again): closing it
    /// sooner, on a process that is merely slow, would lose the notifications in flight.
    private func heartbeat(_ connection: PostgresConnection) async throws {
        while true {
            try await Task.sleep(for: .seconds(1))
            do {
                try await withDeadline(Self.deadConnection) {
                    for try await _ in try await connection.query("SELECT 1", logger: self.logger) {}
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                Task { try? await connection.close() }
                throw error
            }
            for version in versions { version.heartbeat() }
        }
    }

    /// How long the listening connection may leave a heartbeat unanswered before it is closed.
    static let deadConnection = Duration.seconds(15)

    /// Waits (up to `timeout`) until the listener is subscribed; for tests and start-up checks.
    func waitUntilListening(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if listening.withLockedValue({ $0 }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// After a lost connection: what was notified meanwhile is lost, so the ban list is read again
    /// (the page cache has been dropped by ``ClusterFeedVersion/listening(_:)``, and the artist
    /// index is checked before its next answer).
    private func catchUp() {
        Task {
            await suggester?.invalidate()
            do { try await hub.bans?.reload() } catch {
                logger.warning("ban list reload failed", metadata: LoggedError.metadata(error))
            }
        }
    }

    private func deliver(_ payload: String) async {
        switch payload {
        case Self.feedChanged: return feed?.advance() ?? ()
        case Self.recommendationsChanged: return recommendations?.advance() ?? ()
        case Self.placesChanged: return places?.advance() ?? ()
        case Self.artistsChanged: return await suggester?.invalidate() ?? ()
        default: break
        }
        var text = payload
        if payload.hasPrefix("#") {
            let id = String(payload.dropFirst())
            guard let stored = try? await outbox.payload(id: id) else { return }
            text = stored
        }
        guard let envelope = LiveEnvelope.decode(text) else { return }
        await hub.deliver(envelope.frame, to: envelope.users)
    }
}
