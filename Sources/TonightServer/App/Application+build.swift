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
    // Venues, sessions and home cities resolve through it: built while the server starts.
    services.geo.warm()
    let router = Router(context: AppRequestContext.self)
    let proxies = try config.trustedProxyList()
    router.add(middleware: RequestMiddleware(proxies: proxies))
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: TusMiddleware())
    router.add(
        middleware: BodyLimitMiddleware(
            limit: config.bodyLimit,
            // The multipart envelope around the file: fields and headers, at most 64 kB.
            streamingLimits: ["/v1/posts": config.mediaMaxBytes + 65_536, "/v1/me/photo": ProfilePhotos.maxBytes],
            streamingPatchPrefixes: [TusMiddleware.prefix + "/": config.mediaMaxBytes]))
    let pages = services.pages
    if let pages { router.add(middleware: PageCacheMiddleware(database: services.database, cache: pages)) }
    // PostgreSQL: this instance's writes move the versions its caches stand on (both
    // recommendation caches share one) before their notifications arrive.
    let localVersions = [
        services.recommendationCache.cluster.map { ($0, nil as String?) },
        services.nearby?.cluster.map { ($0, "/v1/places" as String?) },
    ].compactMap { $0 }
    if !localVersions.isEmpty { router.add(middleware: LocalWritesMiddleware(versions: localVersions)) }
    router.add(middleware: AuthMiddleware(tokens: services.tokens, bans: services.bans))
    router.add(middleware: OwnWritesMiddleware(caches: [services.recommendationCache, services.cardCache]))
    router.add(middleware: IdempotencyMiddleware(repository: services.idempotency, ttl: config.idempotencyTTL))
    // Inside the idempotency middleware: refusals are answers that a retry gets replayed.
    router.add(middleware: ProblemMiddleware())

    let handlers = APIHandlers(
        services: services, metrics: Observability.registry, openAPIDocument: (try? APIDocument.yaml()) ?? "")
    try handlers.registerHandlers(
        on: router,
        configuration: EncodedAnswer.configuration, middlewares: [SpecLimitMiddleware(), EncodedAnswerMiddleware()])
    let live = LiveRoutes(
        hub: services.live, tokens: services.tokens, presence: services.presence, chat: services.chat,
        fanout: services.fanout, bans: services.bans, pingInterval: .seconds(max(1, config.livePingSeconds)))
    live.register(on: router)
    WebRoutes(
        source: webSource(config, logger: services.logger), mapTileURL: config.mapTileURL,
        mediaOrigin: config.mediaStorage == "s3" ? config.s3Endpoint : ""
    ).register(on: router)
    services.images.register(on: router)
    let (postRepository, bans) = (services.posts.posts, services.bans)
    MediaRoutes(
        blobs: services.posts.blobs, urls: services.posts.urls,
        hiddenPost: { id in
            guard let post = try await postRepository.moderation(of: id) else { return true }
            return post.state != .visible || (post.authorID.map(bans.contains) ?? false)
        },
        memory: config.mediaMemoryMB > 0
            ? MediaMemoryCache(capacity: config.mediaMemoryMB << 20, largestFile: min(64, config.mediaMemoryMB) << 20)
            : nil
    ).register(on: router)

    var serviceList: [any Service] = [
        DatabaseCloser(database: services.database),
        Housekeeping(
            idempotency: services.idempotency,
            rateBuckets: services.rateBuckets,
            ttl: config.idempotencyTTL, logger: services.logger),
        services.presence,
        services.posts.views,
        services.bans,
    ]
    if let listener = services.fanout as? PostgresFanout { serviceList.append(listener) }
    serviceList.append(ArtistSuggester.Watch(suggester: services.suggester, logger: services.logger))
    serviceList.append(LiveHub.Watchdog(hub: services.live, logger: services.logger))
    // Every instance sweeps the unfinished uploads whose files it holds, workers or not.
    serviceList.append(services.uploadSweeper)
    if config.jobsEnabled {
        serviceList.append(services.sweeper)
        serviceList.append(
            EventChangeNotifier(
                events: services.events, notifier: services.notifier,
                interval: .milliseconds(max(10, config.jobPollMilliseconds) * 10), logger: services.logger))
        if config.sessionReminderMinutes > 0 {
            serviceList.append(services.reminder(interval: .milliseconds(max(10, config.jobPollMilliseconds) * 30)))
        }
        if (0...DigestSchedule.lastHour).contains(config.digestHour) {
            serviceList.append(services.digest(interval: .seconds(300)))
        }
        // Media processing has workers of its own (`media.workers`), so a long transcode never
        // holds up push notifications and reminders, nor another member's clip.
        let handlers = services.jobHandlers.merging(jobHandlers) { $1 }
        let poll = Duration.milliseconds(max(10, config.jobPollMilliseconds))
        for _ in 0..<config.mediaWorkers {
            serviceList.append(
                JobWorker(
                    queue: services.jobs, handlers: handlers, pollInterval: poll, batchSize: 1,
                    lockDuration: 900, kinds: .only([PostService.processJob]), logger: services.logger))
        }
        serviceList.append(
            JobWorker(
                queue: services.jobs, handlers: handlers, pollInterval: poll, batchSize: 16,
                kinds: .except([PostService.processJob]), concurrent: true, logger: services.logger))
    }
    let logger = services.logger
    FileLimit.raise(logger: logger)
    let idleTimeout = TimeAmount.seconds(Int64(max(1, config.idleTimeout)))
    let connections = ConnectionPolicy(
        perAddress: config.connectionsPerAddress, exempt: proxies, firstRequestTimeout: idleTimeout, logger: logger)
    return Application(
        router: router,
        server: server(live: live, idleTimeout: idleTimeout, connections: connections, pages: pages),
        configuration: .init(address: .hostname(config.host, port: config.port), serverName: "Tonight"),
        services: serviceList,
        onServerRunning: { channel in
            logger.info("Tonight is listening", metadata: ["address": "\(channel.localAddress?.description ?? "?")"])
        },
        logger: logger
    )
}

/// HTTP/1.1 with the `/v1/live` WebSocket (``LiveUpgradeChannel``) behind the ``ConnectionGuard``:
/// idle connections are closed after `idleTimeout`, and connections are capped per address and
/// their heads limited as `connections` says. With `pages`, cached feed pages and suggestions are
/// answered on the event loop (``CachedPageHandler``).
func server(
    live: LiveRoutes, idleTimeout: TimeAmount, connections: ConnectionPolicy, pages: PageCache?
) -> HTTPServerBuilder {
    HTTPServerBuilder { responder in
        ConnectionGuard(
            base: LiveUpgradeChannel(
                responder: responder,
                http1: .init(
                    additionalChannelHandlers: [CachedPageHandler(cache: pages, idleTimeout: idleTimeout)],
                    idleTimeout: nil, httpDecoderConfiguration: ConnectionPolicy.decoderLimits),
                live: live),
            policy: connections)
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
                logger.warning("\(failure)", metadata: LoggedError.metadata(error))
            }
            try await Task.sleep(for: interval)
        }
    }
}

/// Periodic clean-up: forgets idempotency keys past their lifetime, and rate-limit buckets
/// untouched for two hours (full again by then: the longest limit period is an hour).
struct Housekeeping: Service {
    let idempotency: IdempotencyRepository
    var rateBuckets: RateBucketRepository? = nil
    let ttl: Int
    let logger: Logger

    func run() async throws {
        try await runEvery(.seconds(600), logger: logger, failure: "housekeeping failed") {
            try await idempotency.purge(before: Clock.millis() - Int64(ttl) * 1000)
            try await rateBuckets?.purge(before: Clock.millis() - 2 * 3_600_000)
        }
    }
}

/// The web app's files: the built-in copy, or the `web.dir` folder; the log says which.
private func webSource(_ config: AppConfig, logger: Logger) -> WebRoutes.Source {
    guard !config.webDirectory.isEmpty else {
        logger.info("web app: built in (\(EmbeddedWeb.count) files)")
        return .embedded
    }
    let folder = URL(fileURLWithPath: config.webDirectory).standardizedFileURL.path
    if FileManager.default.fileExists(atPath: folder + "/index.html") {
        logger.info("web app: from the folder \(folder) (WEB_DIR)")
    } else {
        logger.warning("web app: the folder \(folder) (WEB_DIR) has no index.html; / answers 404")
    }
    return .folder(folder)
}
