import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import OpenAPIHummingbird
import OpenAPIRuntime
import ServiceLifecycle
import TonightAPI
import TonightCore

/// Everything the application is made of, built once from ``AppConfig`` and passed in through
/// initialisers. Tests build it to reach services the HTTP API does not expose.
public struct AppServices: Sendable {
    public let config: AppConfig
    public let logger: Logger
    public let database: Database
    public let tokens: TokenService
    public let live: LiveHub
    public let jobs: JobQueue
    let hasher: PasswordHasher
    let users: any UserRepository
    let logins: any LoginRepository
    let idempotency: any IdempotencyRepository
    let accounts: AccountService
    let geo: GeoService
    let places: any PlaceRepository
    let events: any EventRepository
    let catalog: any CatalogRepository
    let suggester: ArtistSuggester
    let cities: any CityRepository
    let social: any SocialRepository
    let wall: any WallRepository
    let notifications: any NotificationRepository
    let notifier: Notifier
    let oidc: OIDCVerifier
    let devices: any DeviceRepository
    let push: PushService
    let invitations: any InvitationRepository
    let chat: any ChatRepository
    /// Live delivery to sockets on every instance.
    let fanout: any LiveFanout
    let presence: PresenceService
    let posts: PostService
    /// Processes uploads (ffmpeg when installed).
    let media: MediaJob
    /// Deletes expired posts, orphan blobs and leftover files.
    let sweeper: PostSweeper
    /// Banned users.
    let bans: BanList
    /// Sessions beyond plain events: sports, players, recommendations, calendar feeds.
    let sessions: any SessionRepository
    /// Anonymous feed pages and artist suggestions kept in memory (SQLite only).
    let pages: PageCache?

    /// Opens the database (running pending migrations), loads or creates the signing key, and
    /// wires the services.
    public static func make(config: AppConfig, logger: Logger? = nil) async throws -> AppServices {
        var logger = logger ?? Logger(label: "tonight")
        logger.logLevel = config.logLevel
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        let sqlitePath = URL(fileURLWithPath: config.dataDirectory).appendingPathComponent("tonight.sqlite").path
        let database = try Database.open(
            url: config.databaseURL, sqlitePath: sqlitePath, poolSize: config.databasePoolSize,
            busyTimeoutMilliseconds: config.databaseBusyTimeoutMilliseconds, logger: logger)
        do {
            try await MigrationRunner(database: database, logger: logger).run()
            return try await wire(config: config, logger: logger, database: database)
        } catch {
            // Whatever failed after opening (migrations, the key, the gazetteer), close the pool.
            try? await database.shutdown()
            throw error
        }
    }

    /// The services over an open, migrated database.
    private static func wire(config: AppConfig, logger: Logger, database: Database) async throws -> AppServices {
        let key = try TokenService.loadKey(configured: config.jwtKey, dataDirectory: config.dataDirectory)
        let tokens = await TokenService(key: key, accessTTL: config.accessTokenTTL)
        let hasher = PasswordHasher(cost: config.bcryptCost)
        let users = SQLUserRepository(db: database.sql)
        let named = try await users.backfillNameKeys()
        if named > 0 { logger.info("user search: indexed \(named) display names") }
        let logins = SQLLoginRepository(database: database)
        let accounts = AccountService(
            users: users, logins: logins, identities: SQLIdentityRepository(db: database.sql), tokens: tokens,
            hasher: hasher, limiter: RateLimiter(), config: config)
        let cities = SQLCityRepository(db: database.sql)
        let notifications = SQLNotificationRepository(db: database.sql)
        let live = LiveHub()
        let fanout: any LiveFanout =
            database.kind == .postgres
            ? try PostgresFanout(database: database, hub: live, url: config.databaseURL, logger: logger)
            : LocalFanout(hub: live)
        let devices = SQLDeviceRepository(db: database.sql)
        let jobs = JobQueue(repository: SQLJobRepository(db: database.sql, kind: database.kind))
        let apns = try config.apnsConfiguration().map { try APNsClient(configuration: $0, httpClient: .shared) }
        logger.info(
            apns == nil ? "push: off (set APNS_KEY_ID, APNS_TEAM_ID, APNS_KEY_FILE, APNS_TOPIC)" : "push: APNs on")
        let notifier = Notifier(fanout: fanout, users: users, notifications: notifications, logger: logger)
        let bans = BanList(db: database.sql, logger: logger)
        try await bans.reload()
        let postRepository = SQLPostRepository(db: database.sql, database: database)
        let posts = PostService(
            posts: postRepository, blobs: try config.blobStore(httpClient: .shared),
            urls: MediaURLs(secret: config.mediaSigningKey, ttl: config.mediaURLTTL),
            votes: VoteBatcher(repository: postRepository, flagThreshold: config.flagThreshold, notifier: notifier),
            views: ViewCounter(repository: postRepository, logger: logger),
            storageClass: config.s3StorageClass.isEmpty ? nil : config.s3StorageClass,
            retentionDays: config.mediaRetentionDays, logger: logger)
        logger.info("media: \(config.mediaStorage == "s3" ? "S3 bucket \(config.s3Bucket)" : "local folder")")
        let tools = MediaTools.locate(
            ffmpeg: config.ffmpegPath.isEmpty ? nil : config.ffmpegPath,
            ffprobe: config.ffprobePath.isEmpty ? nil : config.ffprobePath)
        logger.info(
            tools.map { "media processing: ffmpeg at \($0.ffmpeg)" }
                ?? "media processing: ffmpeg not found; posts are served as uploaded, without posters or tempo")
        let media = MediaJob(
            service: posts,
            processor: MediaProcessor(
                tools: tools,
                limits: MediaLimits(maxDuration: config.mediaMaxSeconds, maxBytes: Int64(config.mediaMaxBytes))),
            workRoot: config.dataDirectory + "/tmp/media-work", logger: logger)
        let suggestions = SuggestionGeneration()
        return AppServices(
            config: config, logger: logger, database: database, tokens: tokens, live: live,
            jobs: jobs, hasher: hasher,
            users: users, logins: logins, idempotency: SQLIdempotencyRepository(db: database.sql),
            accounts: accounts, geo: try await GeoService.load(cities: cities, logger: logger),
            places: SQLPlaceRepository(db: database.sql),
            events: SQLEventRepository(db: database.sql, database: database),
            catalog: SQLCatalogRepository(db: database.sql, database: database),
            suggester: ArtistSuggester(db: database.sql, generation: suggestions), cities: cities,
            social: SQLSocialRepository(db: database.sql, database: database),
            wall: SQLWallRepository(db: database.sql, database: database), notifications: notifications,
            notifier: notifier,
            oidc: OIDCVerifier(providers: config.oidcProviders, httpClient: .shared), devices: devices,
            push: PushService(
                client: apns, devices: devices, notifications: notifications, jobs: jobs, retry: RetryPolicy(),
                logger: logger),
            invitations: SQLInvitationRepository(db: database.sql, database: database),
            chat: SQLChatRepository(db: database.sql, database: database), fanout: fanout,
            presence: PresenceService(db: database.sql, hub: live, logger: logger), posts: posts,
            media: media,
            sweeper: PostSweeper(
                service: posts, uploadDirectory: config.uploadDirectory,
                workDirectory: config.dataDirectory + "/tmp/media-work",
                interval: .seconds(max(10, config.mediaSweepMinutes * 60)), logger: logger),
            bans: bans, sessions: SQLSessionRepository(db: database.sql, database: database),
            pages: database.kind == .sqlite
                ? PageCache(
                    signsMedia: posts.urls.signs, suggestions: suggestions,
                    trust: .milliseconds(config.feedCacheTrustMilliseconds)) : nil)
    }

    /// The job handlers by kind.
    public var jobHandlers: [String: JobHandler] {
        [PushJob.kind: push.run, PostService.processJob: media.run]
    }

    /// The daily report of the last `days` days (the CLI's `admin report`).
    public func report(days: Int) async throws -> [ReportRow] {
        try await SQLAnalyticsRepository(db: database.sql, database: database).report(
            since: Clock.millis() - Int64(max(1, days)) * 86_400_000)
    }

    /// Creates an account with a role (the CLI's `admin create-user`).
    public func createUser(username: String, email: String, password: String, role: Role) async throws -> String {
        try await accounts.createUser(username: username, email: email, password: password, role: role).id
    }
}

/// Builds the Tonight application: HTTP API, `/v1/live` WebSocket, job worker and housekeeping.
///
/// - Parameters:
///   - config: The settings.
///   - services: Prebuilt services (tests pass theirs); built from `config` when `nil`.
///   - jobHandlers: Handlers by job kind for the worker.
public func buildApplication(
    _ config: AppConfig, services: AppServices? = nil, jobHandlers: [String: JobHandler] = [:]
) async throws -> some ApplicationProtocol {
    let built: AppServices
    if let services { built = services } else { built = try await AppServices.make(config: config) }
    let services = built
    let router = Router(context: AppRequestContext.self)
    router.add(middleware: RequestMiddleware(trustProxy: config.trustProxy))
    router.add(middleware: MetricsMiddleware())
    router.add(
        middleware: BodyLimitMiddleware(
            limit: config.bodyLimit,
            // The multipart envelope around the file: fields and headers, at most 64 kB.
            streamingLimits: ["/v1/posts": config.mediaMaxBytes + 65_536]))
    let pages = services.pages
    if let pages { router.add(middleware: PageCacheMiddleware(database: services.database, cache: pages)) }
    router.add(middleware: AuthMiddleware(tokens: services.tokens, bans: services.bans))
    router.add(middleware: IdempotencyMiddleware(repository: services.idempotency, ttl: config.idempotencyTTL))

    let handlers = APIHandlers(
        accounts: services.accounts, users: services.users, geo: services.geo, places: services.places,
        events: services.events, catalog: services.catalog, suggester: services.suggester, social: services.social,
        wall: services.wall, notifications: services.notifications, notifier: services.notifier, oidc: services.oidc,
        devices: services.devices, invitations: services.invitations, chat: services.chat, fanout: services.fanout,
        postService: services.posts,
        songSearch: SongSearch(
            spotify: config.spotifyConfiguration.map { SpotifyClient(configuration: $0, httpClient: .shared) },
            posts: services.posts.posts, logger: services.logger),
        promotions: SQLPromotionRepository(db: services.database.sql, database: services.database),
        analytics: SQLAnalyticsRepository(db: services.database.sql, database: services.database),
        bans: services.bans, logins: services.logins, sessions: services.sessions,
        database: services.database, config: config,
        metrics: Observability.registry, openAPIDocument: (try? APIDocument.yaml()) ?? "")
    try handlers.registerHandlers(
        on: router,
        configuration: .init(dateTranscoder: RFC3339Transcoder(), jsonEncodingOptions: [.withoutEscapingSlashes]))
    LiveRoutes(
        hub: services.live, tokens: services.tokens, presence: services.presence, chat: services.chat,
        fanout: services.fanout
    ).register(on: router)
    WebRoutes(
        directory: URL(fileURLWithPath: config.webDirectory).standardizedFileURL.path, mapTileURL: config.mapTileURL
    ).register(on: router)
    MediaRoutes(
        blobs: services.posts.blobs, urls: services.posts.urls,
        memory: config.mediaMemoryMB > 0
            ? MediaMemoryCache(capacity: config.mediaMemoryMB << 20, largestFile: min(64, config.mediaMemoryMB) << 20)
            : nil
    ).register(on: router)

    var serviceList: [any Service] = [
        DatabaseCloser(database: services.database),
        Housekeeping(idempotency: services.idempotency, ttl: config.idempotencyTTL, logger: services.logger),
        services.presence,
        services.posts.views,
        services.bans,
    ]
    if let listener = services.fanout as? PostgresFanout { serviceList.append(listener) }
    serviceList.append(ArtistSuggester.Watch(suggester: services.suggester, logger: services.logger))
    if config.jobsEnabled {
        serviceList.append(services.sweeper)
        serviceList.append(
            EventChangeNotifier(
                database: services.database, notifier: services.notifier,
                interval: .milliseconds(max(10, config.jobPollMilliseconds) * 10), logger: services.logger))
        if config.sessionReminderMinutes > 0 {
            serviceList.append(services.reminder(interval: .milliseconds(max(10, config.jobPollMilliseconds) * 30)))
        }
        if (0...DigestSchedule.lastHour).contains(config.digestHour) {
            serviceList.append(services.digest(interval: .seconds(300)))
        }
        // Media processing has a worker of its own, so a long transcode never holds up push
        // notifications and reminders queued behind it.
        let handlers = services.jobHandlers.merging(jobHandlers) { $1 }
        let poll = Duration.milliseconds(max(10, config.jobPollMilliseconds))
        serviceList.append(
            JobWorker(
                queue: services.jobs, handlers: handlers, pollInterval: poll, batchSize: 1,
                lockDuration: 900, kinds: .only([PostService.processJob]), logger: services.logger))
        serviceList.append(
            JobWorker(
                queue: services.jobs, handlers: handlers, pollInterval: poll, kinds: .except([PostService.processJob]),
                logger: services.logger))
    }
    let logger = services.logger
    return Application(
        router: router,
        server: server(router: router, idleTimeout: .seconds(Int64(max(1, config.idleTimeout))), pages: pages),
        configuration: .init(address: .hostname(config.host, port: config.port), serverName: "Tonight"),
        services: serviceList,
        onServerRunning: { channel in
            logger.info("Tonight is listening", metadata: ["address": "\(channel.localAddress?.description ?? "?")"])
        },
        logger: logger
    )
}

/// HTTP/1.1 with WebSocket upgrade; idle connections, and connections that never send a request,
/// are closed after `idleTimeout`. With `pages`, cached feed pages and suggestions are answered on
/// the event loop (``CachedPageHandler``).
func server(router: Router<AppRequestContext>, idleTimeout: TimeAmount, pages: PageCache?) -> HTTPServerBuilder {
    let webSocketResponder = router.buildResponder()
    return HTTPServerBuilder { responder in
        FirstRequestDeadline(
            base: HTTP1WebSocketUpgradeChannel(
                responder: responder, webSocketResponder: webSocketResponder,
                configuration: .init(
                    http1: .init(
                        additionalChannelHandlers: [CachedPageHandler(cache: pages, idleTimeout: idleTimeout)],
                        idleTimeout: nil))),
            timeout: idleTimeout)
    }
}

/// Closes the database pool when the application stops.
struct DatabaseCloser: Service {
    let database: Database

    func run() async throws {
        try? await gracefulShutdown()
        try await database.shutdown()
    }
}

/// Runs a service's loop until graceful shutdown. The cancellation that ends it is a clean stop,
/// not an error (otherwise `tonight serve` would exit with `CancellationError` on every SIGTERM).
func runUntilShutdown(_ loop: @escaping @Sendable () async throws -> Void) async throws {
    do {
        try await cancelWhenGracefulShutdown(loop)
    } catch is CancellationError {}
}

/// Runs `round` every `interval` until graceful shutdown; a failed round is logged as `failure`
/// and the next one comes as usual.
func runEvery(
    _ interval: Duration, logger: Logger, failure: String, _ round: @escaping @Sendable () async throws -> Void
) async throws {
    try await runUntilShutdown {
        while !Task.isCancelled {
            do {
                try await round()
            } catch {
                logger.warning("\(failure)", metadata: ["error": "\(error)"])
            }
            try await Task.sleep(for: interval)
        }
    }
}

/// Periodic clean-up: forgets idempotency keys past their lifetime.
struct Housekeeping: Service {
    let idempotency: any IdempotencyRepository
    let ttl: Int
    let logger: Logger

    func run() async throws {
        try await runEvery(.seconds(600), logger: logger, failure: "housekeeping failed") {
            try await idempotency.purge(before: Clock.millis() - Int64(ttl) * 1000)
        }
    }
}

extension AppServices {
    /// The "Tonight" digest service over these services.
    func digest(interval: Duration) -> TonightDigest {
        TonightDigest(
            database: database, users: users, geo: geo,
            events: EventRecommender(events: events, places: places, catalog: catalog),
            sessions: SessionRecommender(sessions: sessions, weights: config.sessionWeights), places: places,
            notifier: notifier, hour: config.digestHour, interval: interval, logger: logger)
    }

    /// The session reminder service over these services.
    func reminder(interval: Duration = .seconds(30)) -> SessionReminder {
        SessionReminder(
            database: database, notifier: notifier, lead: .seconds(config.sessionReminderMinutes * 60),
            interval: interval, logger: logger)
    }
}
