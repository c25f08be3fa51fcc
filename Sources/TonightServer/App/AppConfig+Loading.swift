import Configuration
import Foundation
import Logging
import TonightCore

/// Reading the settings: every key, from the command line, the environment, `.env` and the defaults.
extension AppConfig {
    /// Reads every key from `reader`, falling back to the defaults above.
    public static func load(from reader: ConfigReader) -> AppConfig {
        var config = AppConfig()
        config.host = reader.string(forKey: "http.host", default: config.host)
        config.port = reader.int(forKey: "http.port", default: config.port)
        config.dataDirectory = reader.string(forKey: "data.dir", default: config.dataDirectory)
        config.databaseURL = reader.string(forKey: "database.url", isSecret: true, default: config.databaseURL)
        config.databasePoolSize = reader.int(forKey: "database.pool.size", default: config.databasePoolSize)
        config.databaseBusyTimeoutMilliseconds = max(
            0, reader.int(forKey: "database.busy.timeout.ms", default: config.databaseBusyTimeoutMilliseconds))
        config.databaseQueryTimeoutMilliseconds = max(
            0, reader.int(forKey: "database.query.timeout.ms", default: config.databaseQueryTimeoutMilliseconds))
        config.presenceLeaseSeconds = max(
            1, reader.int(forKey: "presence.lease.seconds", default: config.presenceLeaseSeconds))
        config.shutdownTimeoutSeconds = max(
            1, reader.int(forKey: "shutdown.timeout.seconds", default: config.shutdownTimeoutSeconds))
        config.jwtKey = reader.string(forKey: "jwt.key", isSecret: true, default: config.jwtKey)
        config.accessTokenTTL = reader.int(forKey: "auth.access.ttl", default: config.accessTokenTTL)
        config.refreshTokenTTL = reader.int(forKey: "auth.refresh.ttl", default: config.refreshTokenTTL)
        config.bcryptCost = reader.int(forKey: "auth.bcrypt.cost", default: config.bcryptCost)
        config.bodyLimit = reader.int(forKey: "http.body.limit", default: config.bodyLimit)
        config.signupsPerHourPerIP = reader.int(forKey: "rate.signup.per.hour", default: config.signupsPerHourPerIP)
        config.feedbackPerHour = reader.int(forKey: "rate.feedback.per.hour", default: config.feedbackPerHour)
        config.analyticsPerMinute = reader.int(forKey: "rate.analytics.per.minute", default: config.analyticsPerMinute)
        config.uploadsPerHour = reader.int(forKey: "rate.uploads.per.hour", default: config.uploadsPerHour)
        config.loginsPerMinutePerIP = reader.int(
            forKey: "rate.login.ip.per.minute", default: config.loginsPerMinutePerIP)
        config.loginsPerMinutePerAccount = reader.int(
            forKey: "rate.login.account.per.minute", default: config.loginsPerMinutePerAccount)
        config.idleTimeout = reader.int(forKey: "http.idle.timeout", default: config.idleTimeout)
        config.livePingSeconds = reader.int(forKey: "live.ping.seconds", default: config.livePingSeconds)
        config.trustProxy = reader.bool(forKey: "http.trust.proxy", default: config.trustProxy)
        config.trustedProxies = reader.string(forKey: "http.trusted.proxies", default: config.trustedProxies)
        config.connectionsPerAddress = reader.int(
            forKey: "http.connections.per.address", default: config.connectionsPerAddress)
        config.jobPollMilliseconds = reader.int(forKey: "jobs.poll.ms", default: config.jobPollMilliseconds)
        config.jobsEnabled = reader.bool(forKey: "jobs.enabled", default: config.jobsEnabled)
        config.idempotencyTTL = reader.int(forKey: "idempotency.ttl", default: config.idempotencyTTL)
        config.logLevel =
            Logger.Level(rawValue: reader.string(forKey: "log.level", default: "info").lowercased()) ?? .info
        config.feedbackURL = reader.string(forKey: "app.feedback.url", default: "")
        config.appStoreURL = reader.string(forKey: "app.store.url", default: "")
        config.smtpURL = reader.string(forKey: "smtp.url", isSecret: true, default: "")
        config.smtpCAFile = reader.string(forKey: "smtp.ca.file", default: "")
        config.mailFrom = reader.string(forKey: "mail.from", default: "")
        config.publicURL = reader.string(forKey: "public.url", default: "")
        config.webPushVAPIDKey = reader.string(forKey: "web.push.vapid.key", isSecret: true, default: "")
        config.webPushSubject = reader.string(forKey: "web.push.subject", default: "")
        config.mailsPerHourPerAccount = reader.int(forKey: "rate.mail.per.hour", default: config.mailsPerHourPerAccount)
        config.passwordResetsPerHourPerIP = reader.int(
            forKey: "rate.password.reset.per.hour", default: config.passwordResetsPerHourPerIP)
        let tiles = reader.string(forKey: "map.tile.url", default: osmTiles)
        config.mapTileURL = tiles.lowercased() == "off" ? "" : tiles
        config.mapAttribution = reader.string(forKey: "map.attribution", default: "")
        func list(_ key: ConfigKey) -> [String] {
            reader.string(forKey: key, default: "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        config.appleAudiences = list("oidc.apple.audiences")
        config.imageProxyPrivateHosts = list("image.proxy.private.hosts")
        config.webPushInsecureHosts = list("web.push.insecure.hosts")
        config.facebookAudiences = list("oidc.facebook.audiences")
        config.oidcIssuer = reader.string(forKey: "oidc.issuer", default: "")
        config.oidcAudiences = list("oidc.audiences")
        config.oidcJWKS = reader.string(forKey: "oidc.jwks", default: "")
        config.oidcName = reader.string(forKey: "oidc.name", default: config.oidcName)
        config.apnsKeyID = reader.string(forKey: "apns.key.id", default: "")
        config.apnsTeamID = reader.string(forKey: "apns.team.id", default: "")
        config.apnsKeyFile = reader.string(forKey: "apns.key.file", default: "")
        config.apnsTopic = reader.string(forKey: "apns.topic", default: "")
        config.apnsEndpoint = reader.string(forKey: "apns.endpoint", default: config.apnsEndpoint)
        config.mediaMaxBytes = reader.int(forKey: "media.max.bytes", default: config.mediaMaxBytes)
        config.mediaMaxSeconds = reader.double(forKey: "media.max.seconds", default: config.mediaMaxSeconds)
        config.mediaWorkers = max(1, reader.int(forKey: "media.workers", default: config.mediaWorkers))
        config.mediaStorage = reader.string(forKey: "media.storage", default: config.mediaStorage)
        config.s3Endpoint = reader.string(forKey: "s3.endpoint", default: "")
        config.s3Bucket = reader.string(forKey: "s3.bucket", default: "")
        config.s3Region = reader.string(forKey: "s3.region", default: config.s3Region)
        config.s3AccessKey = reader.string(forKey: "s3.access.key", isSecret: true, default: "")
        config.s3SecretKey = reader.string(forKey: "s3.secret.key", isSecret: true, default: "")
        config.s3StorageClass = reader.string(forKey: "s3.storage.class", default: "")
        config.s3TimeoutMilliseconds = reader.int(forKey: "s3.timeout.ms", default: config.s3TimeoutMilliseconds)
        config.s3MinBytesPerSecond = reader.int(
            forKey: "s3.min.bytes.per.second", default: config.s3MinBytesPerSecond)
        config.mediaSigningKey = reader.string(forKey: "media.signing.key", isSecret: true, default: "")
        config.mediaURLTTL = reader.int(forKey: "media.url.ttl", default: config.mediaURLTTL)
        config.mediaMemoryMB = reader.int(forKey: "media.memory.mb", default: config.mediaMemoryMB)
        config.feedCacheTrustMilliseconds = max(
            0, reader.int(forKey: "feed.cache.trust.ms", default: config.feedCacheTrustMilliseconds))
        config.recommendationCacheSeconds = max(
            0, reader.int(forKey: "recs.cache.seconds", default: config.recommendationCacheSeconds))
        config.recommendationStaleSeconds = max(
            0, reader.int(forKey: "recs.stale.seconds", default: config.recommendationStaleSeconds))
        config.nearbyCachePlaces = max(
            0, reader.int(forKey: "nearby.cache.places", default: config.nearbyCachePlaces))
        config.ffmpegPath = reader.string(forKey: "media.ffmpeg", default: "")
        config.ffprobePath = reader.string(forKey: "media.ffprobe", default: "")
        config.mediaRetentionDays = reader.int(forKey: "media.retention.days", default: config.mediaRetentionDays)
        config.spotifyClientID = reader.string(forKey: "spotify.client.id", default: "")
        config.spotifyClientSecret = reader.string(forKey: "spotify.client.secret", isSecret: true, default: "")
        config.spotifyAccountsURL = reader.string(forKey: "spotify.accounts.url", default: config.spotifyAccountsURL)
        config.spotifyAPIURL = reader.string(forKey: "spotify.api.url", default: config.spotifyAPIURL)
        config.mediaSweepMinutes = reader.int(forKey: "media.sweep.minutes", default: config.mediaSweepMinutes)
        config.uploadExpiryHours = max(1, reader.int(forKey: "upload.expiry.hours", default: config.uploadExpiryHours))
        config.uploadsHeldMB = max(1, reader.int(forKey: "uploads.held.mb", default: config.uploadsHeldMB))
        config.uploadIdleSeconds = max(1, reader.int(forKey: "upload.idle.seconds", default: config.uploadIdleSeconds))
        config.placeFeedWindowHours = reader.int(
            forKey: "feed.place.window.hours", default: config.placeFeedWindowHours)
        config.flagThreshold = reader.int(forKey: "moderation.flag.threshold", default: config.flagThreshold)
        config.trending.upWeight = reader.double(forKey: "trending.up.weight", default: config.trending.upWeight)
        config.trending.downWeight = reader.double(
            forKey: "trending.down.weight", default: config.trending.downWeight)
        config.trending.commentWeight = reader.double(
            forKey: "trending.comment.weight", default: config.trending.commentWeight)
        config.trending.viewWeight = reader.double(
            forKey: "trending.view.weight", default: config.trending.viewWeight)
        config.trending.gravity = reader.double(forKey: "trending.gravity", default: config.trending.gravity)
        config.trending.windowHours = reader.int(
            forKey: "trending.window.hours", default: config.trending.windowHours)
        config.sessionWeights.sport = reader.double(
            forKey: "sessions.weight.sport", default: config.sessionWeights.sport)
        config.sessionWeights.friends = reader.double(
            forKey: "sessions.weight.friends", default: config.sessionWeights.friends)
        config.sessionWeights.preferredGenders = reader.double(
            forKey: "sessions.weight.genders", default: config.sessionWeights.preferredGenders)
        config.sessionWeights.preferredAgeGroups = reader.double(
            forKey: "sessions.weight.ages", default: config.sessionWeights.preferredAgeGroups)
        config.sessionWeights.time = reader.double(forKey: "sessions.weight.time", default: config.sessionWeights.time)
        config.sessionWeights.dismissalPenalty = reader.double(
            forKey: "sessions.weight.dismissal", default: config.sessionWeights.dismissalPenalty)
        config.digestHour = reader.int(forKey: "digest.hour", default: config.digestHour)
        config.webDirectory = reader.string(forKey: "web.dir", default: config.webDirectory)
        config.sessionReminderMinutes = reader.int(
            forKey: "sessions.reminder.minutes", default: config.sessionReminderMinutes)
        return config
    }

    /// Reads the configuration the documented way: `overrides` (the command line, keyed by
    /// environment name such as `HTTP_PORT`) first, then the environment, then `.env` in the
    /// working directory (if present), then defaults.
    public static func load(overrides: [String: String] = [:], environmentFile: String = ".env") async throws
        -> AppConfig
    {
        let providers: [any ConfigProvider] = [
            EnvironmentVariablesProvider(environmentVariables: overrides),
            EnvironmentVariablesProvider(),
            try await EnvironmentVariablesProvider(environmentFilePath: .init(environmentFile), allowMissing: true),
        ]
        return load(from: ConfigReader(providers: providers))
    }
}
