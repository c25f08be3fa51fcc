import Foundation
import Hummingbird
import HummingbirdCore
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
    let users: UserRepository
    let logins: LoginRepository
    let idempotency: IdempotencyRepository
    let accounts: AccountService
    let geo: GeoService
    let places: PlaceRepository
    let events: EventRepository
    let catalog: CatalogRepository
    let suggester: ArtistSuggester
    let cities: CityRepository
    let social: SocialRepository
    let wall: WallRepository
    let notifications: NotificationRepository
    let notifier: Notifier
    let oidc: OIDCVerifier
    let devices: DeviceRepository
    let push: PushService
    let invitations: InvitationRepository
    let chat: ChatRepository
    /// Live delivery to sockets on every instance.
    let fanout: any LiveFanout
    let presence: PresenceService
    let posts: PostService
    /// Rate-limit buckets shared by every instance (PostgreSQL only; in memory on SQLite).
    let rateBuckets: RateBucketRepository?
    /// Profile photos (converted in the request, stored with the media).
    let images: RemoteImages
    let photos: ProfilePhotos
    /// Processes uploads (ffmpeg when installed).
    let media: MediaJob
    /// Deletes expired posts, orphan blobs and leftover files.
    let sweeper: PostSweeper
    /// Resumable uploads (tus) and their sweep.
    let uploads: ResumableUploads
    let uploadSweeper: UploadSweeper
    /// Banned users.
    let bans: BanList
    /// Sessions beyond plain events: sports, players, recommendations, calendar feeds.
    let sessions: SessionRepository
    /// Session recommendations kept in memory while nothing they read has changed.
    let recommendationCache: RecommendationCache<Components.Schemas.SessionRecommendationList>
    /// Explore cards kept the same way, under the same version.
    let cardCache: RecommendationCache<Components.Schemas.EventRecommendationList>
    /// Places kept in memory for nearby searches (`nil`: `NEARBY_CACHE_PLACES=0`).
    let nearby: NearbyIndex?
    /// Anonymous feed pages and artist suggestions kept in memory (suggestions on SQLite only).
    let pages: PageCache?
    /// Song search (Spotify when configured, else songs already used on posts).
    let songSearch: SongSearch
    let promotions: PromotionRepository
    let analytics: AnalyticsRepository
    /// People as a caller may see them.
    let people: People
    /// Posts as a viewer may see them.
    let postReader: PostReader
    /// The posts' storage (votes, comments, bookmarks, follows too).
    var postRepository: PostRepository { posts.posts }
    /// Event look-ups, edits and pages shared by several features.
    let eventService: EventService
    /// Ads placed on feed pages.
    let adPlacer: AdPlacer
    /// Verification, change-of-address and reset links by mail.
    let email: EmailService
    /// Sends mail jobs (SMTP, or the mail folder).
    let mailer: Mailer

    /// Opens the database (running pending migrations), loads or creates the signing key, and
    /// wires the services.
    public static func make(config: AppConfig, logger: Logger? = nil) async throws -> AppServices {
        var logger = logger ?? Logger(label: "tonight")
        logger.logLevel = config.logLevel
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        let database = try Database.open(
            url: config.databaseURL, sqlitePath: config.sqlitePath, poolSize: config.databasePoolSize,
            busyTimeoutMilliseconds: config.databaseBusyTimeoutMilliseconds,
            queryTimeoutMilliseconds: config.databaseQueryTimeoutMilliseconds, logger: logger)
        do {
            try await BoundedPostgresDatabase.$unbounded.withValue(true) {
                try await MigrationRunner(database: database, logger: logger).run()
            }
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
        let users = UserRepository(db: database.sql, database: database)
        let named = try await users.backfillNameKeys()
        if named > 0 { logger.info("user search: indexed \(named) display names") }
        let logins = LoginRepository(database: database)
        let bans = BanList(repository: BanRepository(database: database), logger: logger)
        try await bans.reload()
        let rateBuckets = database.kind == .postgres ? RateBucketRepository(database: database) : nil
        let accounts = AccountService(
            users: users, logins: logins, identities: IdentityRepository(db: database.sql, database: database),
            tokens: tokens,
            hasher: hasher,
            limiter: RateLimiter(store: rateBuckets),
            bans: bans, config: config)
        let cities = CityRepository(db: database.sql)
        let notifications = NotificationRepository(db: database.sql, database: database)
        let live = LiveHub(bans: bans)
        let suggestions = SuggestionGeneration()
        let catalog = CatalogRepository(db: database.sql, database: database)
        let suggester = ArtistSuggester(catalog: catalog, generation: suggestions)
        let feedVersion = database.kind == .postgres ? ClusterFeedVersion() : nil
        let recommendationVersion = database.kind == .postgres ? ClusterFeedVersion() : nil
        let placesVersion = database.kind == .postgres ? ClusterFeedVersion() : nil
        let fanout: any LiveFanout =
            database.kind == .postgres
            ? try PostgresFanout(
                database: database, hub: live, url: config.databaseURL, feed: feedVersion,
                recommendations: recommendationVersion, places: placesVersion, suggester: suggester,
                logger: logger)
            : LocalFanout(hub: live)
        let devices = DeviceRepository(db: database.sql, database: database)
        let jobs = JobQueue(repository: JobRepository(db: database.sql, kind: database.kind))
        let apns = try config.apnsConfiguration().map { try APNsClient(configuration: $0, httpClient: .shared) }
        logger.info(
            apns == nil ? "push: off (set APNS_KEY_ID, APNS_TEAM_ID, APNS_KEY_FILE, APNS_TOPIC)" : "push: APNs on")
        let notifier = Notifier(fanout: fanout, users: users, notifications: notifications, logger: logger)
        let postRepository = PostRepository(db: database.sql, database: database)
        let posts = PostService(
            posts: postRepository, blobs: try config.blobStore(),
            urls: MediaURLs(secret: config.mediaSigningKey, ttl: config.mediaURLTTL, reviewSecret: key),
            votes: VoteBatcher(
                repository: postRepository, flagThreshold: config.flagThreshold, notifier: notifier,
                deadline: database.groupDeadline),
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
        let social = SocialRepository(db: database.sql, database: database)
        let places = PlaceRepository(db: database.sql, database: database)
        let events = EventRepository(db: database.sql, database: database)
        let sessions = SessionRepository(db: database.sql, database: database)
        let promotions = PromotionRepository(db: database.sql, database: database)
        let links = EmailLinks(signingKey: key, publicURL: config.linkBase)
        let transport: any MailTransport =
            config.smtpURL.isEmpty
            ? MailFolder(path: config.mailFolder)
            : try SMTPClient(
                configuration: SMTPConfiguration.parse(
                    config.smtpURL, caFile: config.smtpCAFile,
                    heloName: URLComponents(string: config.linkBase)?.host ?? "localhost"))
        logger.info("\(transport.summary)")
        let webPush = WebPushSender(
            vapid: VAPID(
                key: try VAPID.loadKey(configured: config.webPushVAPIDKey, dataDirectory: config.dataDirectory),
                subject: config.webPushSubject.isEmpty ? "mailto:" + config.mailSender.address : config.webPushSubject),
            insecureHosts: Set(config.webPushInsecureHosts.map { $0.lowercased() }))
        let uploads = ResumableUploads(
            repository: UploadRepository(database: database), postService: posts,
            form: PostForm(places: places, events: events), limiter: accounts.limiter,
            directory: config.resumableUploadDirectory, maxBytes: config.mediaMaxBytes,
            uploadsPerHour: config.uploadsPerHour, expiry: .seconds(config.uploadExpiryHours * 3600),
            totalBytes: Int64(config.uploadsHeldMB) << 20, bodyIdle: .seconds(config.uploadIdleSeconds))
        return AppServices(
            config: config, logger: logger, database: database, tokens: tokens, live: live,
            jobs: jobs, hasher: hasher,
            users: users, logins: logins, idempotency: IdempotencyRepository(db: database.sql),
            accounts: accounts, geo: try await GeoService.load(cities: cities, logger: logger),
            places: places, events: events, catalog: catalog,
            suggester: suggester, cities: cities,
            social: social,
            wall: WallRepository(db: database.sql, database: database), notifications: notifications,
            notifier: notifier,
            oidc: OIDCVerifier(providers: config.oidcProviders, httpClient: .shared), devices: devices,
            push: PushService(
                client: apns, devices: devices, webPush: webPush, subscriptions: WebPushRepository(database: database),
                notifications: notifications, jobs: jobs, retry: RetryPolicy(), logger: logger),
            invitations: InvitationRepository(db: database.sql, database: database),
            chat: ChatRepository(
                db: database.sql, database: database,
                batcher: MessageBatcher(database: database, deadline: database.groupDeadline)),
            fanout: fanout,
            presence: PresenceService(
                database: database, hub: live, leaseSeconds: config.presenceLeaseSeconds, logger: logger), posts: posts,
            rateBuckets: rateBuckets,
            images: RemoteImages(
                blobs: posts.blobs, urls: posts.urls, tools: tools,
                workDirectory: config.dataDirectory + "/tmp/media-work", privateHosts: config.imageProxyPrivateHosts,
                source: { kind, id in
                    switch kind {
                    case .artists: try await catalog.artist(id: id)?.imageURL
                    case .places: try await places.find(id: id)?.imageURL
                    }
                }),
            photos: ProfilePhotos(
                users: users, blobs: posts.blobs, tools: tools, uploadDirectory: config.uploadDirectory,
                limiter: accounts.limiter, uploadsPerHour: config.uploadsPerHour, concurrency: config.mediaWorkers),
            media: media,
            sweeper: PostSweeper(
                service: posts, uploadDirectory: config.uploadDirectory,
                workDirectory: config.dataDirectory + "/tmp/media-work",
                interval: .seconds(max(10, config.mediaSweepMinutes * 60)), logger: logger),
            uploads: uploads,
            uploadSweeper: UploadSweeper(
                uploads: uploads, interval: .seconds(max(10, config.mediaSweepMinutes * 60)), logger: logger),
            bans: bans, sessions: sessions,
            recommendationCache: RecommendationCache(
                lifetime: .seconds(config.recommendationCacheSeconds),
                stale: .seconds(config.recommendationStaleSeconds), cluster: recommendationVersion,
                stored: { try? await database.recommendationVersion() }),
            cardCache: RecommendationCache(
                lifetime: .seconds(config.recommendationCacheSeconds),
                stale: .seconds(config.recommendationStaleSeconds), cluster: recommendationVersion,
                stored: { try? await database.recommendationVersion() }),
            nearby: config.nearbyCachePlaces > 0
                ? NearbyIndex(
                    capacity: config.nearbyCachePlaces, cluster: placesVersion,
                    stored: { try? await database.placesVersion() })
                : nil,
            pages: PageCache(
                signsMedia: posts.urls.signs, suggestions: suggestions, cluster: feedVersion,
                trust: .milliseconds(config.feedCacheTrustMilliseconds)),
            songSearch: SongSearch(
                spotify: config.spotifyConfiguration.map { SpotifyClient(configuration: $0, httpClient: .shared) },
                posts: posts.posts, logger: logger),
            promotions: promotions, analytics: AnalyticsRepository(db: database.sql, database: database),
            people: People(users: users, social: social),
            postReader: PostReader(posts: posts, repository: postRepository, social: social, bans: bans),
            eventService: EventService(events: events, places: places, catalog: catalog, sessions: sessions),
            adPlacer: AdPlacer(promotions: promotions),
            email: EmailService(
                accounts: accounts, tokens: EmailTokenRepository(database: database), links: links, logger: logger),
            mailer: Mailer(transport: transport, from: config.mailSender, links: links))
    }

    /// The job handlers by kind.
    public var jobHandlers: [String: JobHandler] {
        [PushJob.kind: push.run, PostService.processJob: media.run, MailJob.kind: mailer.run]
    }

    /// The daily report of the last `days` days (the CLI's `admin report`).
    public func report(days: Int) async throws -> [ReportRow] {
        try await analytics.report(
            since: Clock.millis() - Int64(max(1, days)) * 86_400_000)
    }

    /// Creates an account with a role (the CLI's `admin create-user`).
    public func createUser(username: String, email: String, password: String, role: Role) async throws -> String {
        try await accounts.createUser(username: username, email: email, password: password, role: role).id
    }
}

extension AppServices {
    /// Event recommendations (the routes and the digest use this one recipe).
    /// (Categories read afresh: its cards are kept under the recommendation version.)
    var eventRecommender: EventRecommender {
        EventRecommender(events: events, places: places, catalog: catalog.uncached)
    }

    /// Session recommendations, weighted as configured.
    var sessionRecommender: SessionRecommender {
        SessionRecommender(sessions: sessions, weights: config.sessionWeights)
    }

    /// The "Tonight" digest service over these services.
    func digest(interval: Duration) -> TonightDigest {
        TonightDigest(
            users: users, digests: DigestRepository(database: database), notifications: notifications, geo: geo,
            events: eventRecommender, sessions: sessionRecommender, places: places,
            notifier: notifier, hour: config.digestHour, interval: interval, logger: logger)
    }

    /// The session reminder service over these services.
    func reminder(interval: Duration = .seconds(30)) -> SessionReminder {
        SessionReminder(
            sessions: sessions, notifier: notifier, lead: .seconds(config.sessionReminderMinutes * 60),
            interval: interval, logger: logger)
    }
}
