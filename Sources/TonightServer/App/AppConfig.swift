import Foundation
import Logging
import TonightCore

/// Every setting of the server, read in one place (``load(from:)``, in AppConfig+Loading.swift) and
/// passed in from there; what the settings build is in AppConfig+Services.swift.
///
/// Sources, highest first: command line, environment, `.env`, defaults. The environment name of
/// a key is its dotted name upper-cased with `_` (`http.port` → `HTTP_PORT`); every key is listed
/// in `.env.example` and the README.
public struct AppConfig: Sendable {
    /// Address to bind (`http.host`, default `127.0.0.1`).
    public var host: String = "127.0.0.1"
    /// Port to bind (`http.port`, default 8080; 0 picks a free port).
    public var port: Int = 8080
    /// Directory for the SQLite file, the signing key and media (`data.dir`, default `./data`).
    public var dataDirectory: String = "./data"
    /// `postgres://…` to use PostgreSQL; empty means SQLite in the data directory (`database.url`).
    public var databaseURL: String = ""
    /// Most open database connections (`database.pool.size`, default 8).
    public var databasePoolSize: Int = 8
    /// How long a request waits for the database (SQLite: another process's write to end;
    /// PostgreSQL: a free pooled connection) before it is answered 503 `database_busy`
    /// (`database.busy.timeout.ms`, default 10000).
    public var databaseBusyTimeoutMilliseconds: Int = 10_000
    /// On PostgreSQL, the longest one query, or one transaction, holds its connection
    /// (`database.query.timeout.ms`, default 30000; 0: no limit): past it the connection is closed
    /// and the request answered 503 `database_unavailable` (see ``BoundedPostgresDatabase``).
    /// Migrations and command-line imports are not limited.
    public var databaseQueryTimeoutMilliseconds: Int = 30_000
    /// How long `tonight serve` may take to stop after SIGTERM or SIGINT
    /// (`shutdown.timeout.seconds`, default 9; see ``runUntilStopped(_:config:logger:)``).
    public var shutdownTimeoutSeconds: Int = 9
    /// How long an instance's presence lease for a connected user holds without renewal
    /// (`presence.lease.seconds`, default 15; renewed every third of it): how long a user whose
    /// socket was on a crashed instance still counts as online (see ``PresenceService``).
    public var presenceLeaseSeconds: Int = 15
    /// Base64 HMAC key for access tokens (`jwt.key`); generated into the data directory if empty.
    public var jwtKey: String = ""
    /// Access token lifetime in seconds (`auth.access.ttl`, default 900).
    public var accessTokenTTL: Int = 900
    /// Refresh token lifetime in seconds (`auth.refresh.ttl`, default 30 days).
    public var refreshTokenTTL: Int = 30 * 24 * 3600
    /// bcrypt cost (`auth.bcrypt.cost`, default 11).
    public var bcryptCost: Int = 11
    /// Largest accepted request body in bytes (`http.body.limit`, default 1 MiB).
    public var bodyLimit: Int = 1 << 20
    /// Sign-ups per IP per hour (`rate.signup.per.hour`, default 20; 0 turns the limit off).
    public var signupsPerHourPerIP: Int = 20
    /// Login attempts per IP per minute (`rate.login.ip.per.minute`, default 30; 0 = off).
    public var loginsPerMinutePerIP: Int = 30
    /// Wrong passwords per account per minute, per address and from all addresses together
    /// (`rate.login.account.per.minute`, default 10; 0 = off): see
    /// ``AccountService/checkPassword(_:hash:account:clientAddress:)``.
    public var loginsPerMinutePerAccount: Int = 10
    /// Feedback messages per hour, per address and per member (`rate.feedback.per.hour`, default
    /// 10; 0 = off): the one write anyone may make without an account.
    public var feedbackPerHour: Int = 10
    /// Analytics batches per minute, per address and per member (`rate.analytics.per.minute`,
    /// default 120; 0 = off).
    public var analyticsPerMinute: Int = 120
    /// Uploads (`POST /v1/posts`) per member per hour (`rate.uploads.per.hour`, default 30; 0 =
    /// off): each takes disk, and a clip minutes of CPU. Counted when the upload starts, before a
    /// byte is stored.
    public var uploadsPerHour: Int = 30
    /// Seconds before an idle connection (or one that sends no request) is closed
    /// (`http.idle.timeout`, default 60).
    public var idleTimeout: Int = 60
    /// Seconds between the server's WebSocket pings on `/v1/live` (`live.ping.seconds`, default
    /// 30, at least 1). A socket whose pong has not come by the next ping is closed (going away):
    /// a phone that lost its network without a FIN is reaped within two intervals.
    public var livePingSeconds: Int = 30
    /// The proxies whose `X-Forwarded-For` names the client (`http.trusted.proxies`: addresses and
    /// CIDR ranges, comma-separated; default none). See ``TrustedProxies``.
    public var trustedProxies: String = ""
    /// Older switch (`http.trust.proxy`, default false): with no `trustedProxies`, trusts loopback
    /// and private networks as proxies.
    public var trustProxy: Bool = false
    /// Open connections one client address may hold (`http.connections.per.address`, default 256;
    /// 0 = no cap). Further connections are answered 503 `too_many_connections` and closed. Not
    /// applied to trusted proxies: their connections carry many clients, and the proxy enforces its
    /// own per-client cap (nginx `limit_conn`).
    public var connectionsPerAddress: Int = 256
    /// How often the job worker looks for due jobs, in milliseconds (`jobs.poll.ms`, default 1000).
    public var jobPollMilliseconds: Int = 1000
    /// Run the job worker in this process (`jobs.enabled`, default true).
    public var jobsEnabled: Bool = true
    /// How long an idempotency key is remembered, in seconds (`idempotency.ttl`, default 24 h).
    public var idempotencyTTL: Int = 24 * 3600
    /// Log level (`log.level`, default `info`).
    public var logLevel: Logger.Level = .info
    /// Public links and settings for clients (`/v1/config`).
    public var feedbackURL: String = ""
    /// App store link shown by clients (`app.store.url`).
    public var appStoreURL: String = ""
    /// Map tile URL template for clients (`map.tile.url`), e.g. `https://tile.example/{z}/{x}/{y}.png`:
    /// OpenStreetMap's standard tiles unless configured (``osmTiles``); `off` (or empty) turns maps off.
    /// OpenStreetMap's tile usage policy asks heavy users to run their own tile server.
    public var mapTileURL: String = AppConfig.osmTiles
    /// The credit the tile provider requires, shown on every map (`map.attribution`); see
    /// ``mapCredit``.
    public var mapAttribution: String = ""

    /// Hosts the image cache (``RemoteImages``) fetches from even on loopback or private
    /// addresses (`image.proxy.private.hosts`, comma-separated; tests, an image server on the LAN).
    public var imageProxyPrivateHosts: [String] = []

    /// Where mail goes (`smtp.url`): `smtp://user:password@host:587` (STARTTLS, required with a
    /// login) or `smtps://host:465`; empty writes mail into ``mailFolder`` instead (see
    /// ``SMTPConfiguration``).
    public var smtpURL: String = ""
    /// A PEM file of certificates to trust for the SMTP server besides the system's (`smtp.ca.file`).
    public var smtpCAFile: String = ""
    /// The sender of every mail (`mail.from`, default `Tonight <no-reply@HOST>`, HOST from
    /// ``publicURL``), as `Name <address>` or a bare address.
    public var mailFrom: String = ""
    /// The address people reach the web app at (`public.url`, e.g. `https://tonight.example`), for
    /// links in mail; default `http://<http.host>:<http.port>`.
    public var publicURL: String = ""
    /// Mails one account may be sent per hour by its own requests (`rate.mail.per.hour`, default
    /// 5; 0 = off): verification, change and reset links together.
    public var mailsPerHourPerAccount: Int = 5
    /// Password-reset requests per client address per hour (`rate.password.reset.per.hour`,
    /// default 10; 0 = off).
    public var passwordResetsPerHourPerIP: Int = 10

    /// The VAPID key Web Push messages are signed with (`web.push.vapid.key`: base64url of the raw
    /// P-256 private key, or a PEM); empty: `vapid.key` in the data directory, made on first run.
    /// Every instance of a cluster needs the same key (browsers subscribed with its public half).
    public var webPushVAPIDKey: String = ""
    /// The contact push services see (`web.push.subject`, `mailto:` or `https:`); default
    /// `mailto:` and the ``mailSender``'s address.
    public var webPushSubject: String = ""
    /// Hosts a Web Push endpoint may name on loopback or private addresses, any port, and over
    /// plain `http://` (`web.push.insecure.hosts`, comma-separated; tests set `127.0.0.1`).
    public var webPushInsecureHosts: [String] = []

    /// Where mail is written without ``smtpURL``.
    public var mailFolder: String { dataDirectory + "/mail" }

    /// ``publicURL``, or the server's own address when it is not set.
    public var linkBase: String {
        if !publicURL.isEmpty { return publicURL }
        let host = host == "0.0.0.0" || host == "::" ? "localhost" : host
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// The sender of mail, from ``mailFrom``.
    var mailSender: MailAddress {
        let raw = mailFrom.trimmingCharacters(in: .whitespaces)
        if let open = raw.lastIndex(of: "<"), raw.hasSuffix(">") {
            let name = raw[..<open].trimmingCharacters(in: .whitespaces).trimmingCharacters(
                in: CharacterSet(charactersIn: "\""))
            return MailAddress(
                address: String(raw[raw.index(after: open)..<raw.index(before: raw.endIndex)]),
                name: name.isEmpty ? nil : name)
        }
        if !raw.isEmpty { return MailAddress(address: raw, name: nil) }
        let host = URLComponents(string: linkBase)?.host ?? "localhost"
        // A DNS name with a dot; an address or a bare name gets a placeholder domain.
        let named = host.contains(".") && host.contains(where: \.isLetter) && !host.contains(":")
        return MailAddress(address: "no-reply@\(named ? host : "localhost.localdomain")", name: "Tonight")
    }

    /// OpenStreetMap's standard tiles, the default map.
    public static let osmTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    /// The credit OpenStreetMap's licence asks for.
    public static let osmAttribution = "© OpenStreetMap contributors"

    /// The credit clients show on maps: ``mapAttribution`` when set, else OpenStreetMap's with its
    /// tiles; nil without maps or with another server that asks for none.
    public var mapCredit: String? {
        guard !mapTileURL.isEmpty else { return nil }
        if !mapAttribution.isEmpty { return mapAttribution }
        return mapTileURL == Self.osmTiles ? Self.osmAttribution : nil
    }

    /// Sign in with Apple: accepted audiences (bundle / services ids), comma-separated
    /// (`oidc.apple.audiences`; empty turns Apple sign-in off).
    public var appleAudiences: [String] = []
    /// Facebook Limited Login: accepted app ids, comma-separated (`oidc.facebook.audiences`).
    public var facebookAudiences: [String] = []
    /// Any other OpenID Connect issuer: its exact `iss` (`oidc.issuer`; empty = off), accepted
    /// audiences (`oidc.audiences`), JWKS as an https URL or a file path (`oidc.jwks`), and the
    /// provider name stored with linked identities (`oidc.name`, default `oidc`).
    public var oidcIssuer: String = ""
    /// See ``oidcIssuer``.
    public var oidcAudiences: [String] = []
    /// See ``oidcIssuer``.
    public var oidcJWKS: String = ""
    /// See ``oidcIssuer``.
    public var oidcName: String = "oidc"

    /// APNs token authentication: key id (`apns.key.id`), team id (`apns.team.id`), the `.p8`
    /// key file (`apns.key.file`) and the app's bundle id as topic (`apns.topic`). Push is off
    /// unless all four are set.
    public var apnsKeyID: String = ""
    /// See ``apnsKeyID``.
    public var apnsTeamID: String = ""
    /// See ``apnsKeyID``.
    public var apnsKeyFile: String = ""
    /// See ``apnsKeyID``.
    public var apnsTopic: String = ""
    /// `production` (default) or `sandbox`, or an https URL of another endpoint (`apns.endpoint`).
    public var apnsEndpoint: String = "production"

    /// Largest upload in bytes (`media.max.bytes`, default 100 MB).
    public var mediaMaxBytes: Int = 100 * 1024 * 1024
    /// Longest clip in seconds (`media.max.seconds`, default 60).
    public var mediaMaxSeconds: Double = 60
    /// Media jobs processed at once (`media.workers`, default: the cores, at least 2, at most 4):
    /// one slow clip never holds everyone else's.
    public var mediaWorkers: Int = min(4, max(2, ProcessInfo.processInfo.activeProcessorCount))
    /// Where media lives (`media.storage`): `local` (default, `<data dir>/media`) or `s3`.
    public var mediaStorage: String = "local"
    /// S3-compatible storage: endpoint URL (`s3.endpoint`, e.g. `https://s3.eu-west-1.amazonaws.com`),
    /// bucket (`s3.bucket`), region (`s3.region`), keys (`s3.access.key`, `s3.secret.key`) and the
    /// storage class new objects get (`s3.storage.class`, e.g. `REDUCED_REDUNDANCY`; empty = the
    /// bucket's default).
    public var s3Endpoint: String = ""
    /// See ``s3Endpoint``.
    public var s3Bucket: String = ""
    /// See ``s3Endpoint``.
    public var s3Region: String = "us-east-1"
    /// See ``s3Endpoint``.
    public var s3AccessKey: String = ""
    /// See ``s3Endpoint``.
    public var s3SecretKey: String = ""
    /// See ``s3Endpoint``.
    public var s3StorageClass: String = ""
    /// Deadline of an S3 request in milliseconds (`s3.timeout.ms`, default 10000), plus one second
    /// per `s3.min.bytes.per.second` bytes it moves (default 1,000,000): past it the request is
    /// abandoned and answered 503 `storage_unavailable` (see ``S3Configuration``).
    public var s3TimeoutMilliseconds: Int = 10_000
    /// See ``s3TimeoutMilliseconds``.
    public var s3MinBytesPerSecond: Int = 1_000_000
    /// Secret for signed media URLs (`media.signing.key`). Empty (default): media URLs are plain
    /// and public; set: they carry `expires` and an HMAC `sig` and unsigned requests answer 403.
    public var mediaSigningKey: String = ""
    /// How long a signed media URL stays valid, in seconds (`media.url.ttl`, default 6 hours).
    public var mediaURLTTL: Int = 6 * 3600
    /// Megabytes of recently served media held in memory (`media.memory.mb`, default 256; 0: off);
    /// files up to 64 MB are held.
    public var mediaMemoryMB: Int = 256
    /// How long a feed version read from the database is trusted for answering cached pages on
    /// the event loop (`feed.cache.trust.ms`, default 250): the longest a change written by
    /// another process (a CLI import) takes to show on an anonymous feed page. SQLite only: on
    /// PostgreSQL changes arrive by notification (see ``ClusterFeedVersion``).
    public var feedCacheTrustMilliseconds: Int = 250
    /// How long a member's session recommendations and explore cards are answered from memory
    /// while nothing they were made from has changed (`recs.cache.seconds`, default 60; 0: off).
    /// See ``RecommendationCache``.
    public var recommendationCacheSeconds: Int = 60
    /// How long a kept recommendation is still given after others' changes (`recs.stale.seconds`,
    /// default 10; 0: every change counts at once). The member's own writes, and blocks, count at
    /// once. See ``RecommendationCache``.
    public var recommendationStaleSeconds: Int = 10
    /// How many places nearby searches keep in memory, positions and rows (`nearby.cache.places`,
    /// default 500,000, about 140 MB when full; 0: every search reads the database). See
    /// ``NearbyIndex``.
    public var nearbyCachePlaces: Int = 500_000
    /// Paths of ffmpeg and ffprobe (`media.ffmpeg`, `media.ffprobe`); found on PATH when empty.
    /// Without them posts are served as uploaded, without posters (said at start-up).
    public var ffmpegPath: String = ""
    /// See ``ffmpegPath``.
    public var ffprobePath: String = ""
    /// Days a post in the `media` retention tier is kept (`media.retention.days`, default 30).
    public var mediaRetentionDays: Int = 30
    /// Minutes between media sweeps (`media.sweep.minutes`, default 10): expired posts, orphan
    /// blobs and leftover upload files.
    public var mediaSweepMinutes: Int = 10
    /// Hours an unfinished resumable upload (`/v1/uploads`) lives after its creation or its last
    /// `PATCH` (`upload.expiry.hours`, default 24): long enough to come back from a dead zone, short
    /// enough that abandoned bytes go the same day.
    public var uploadExpiryHours: Int = 24
    /// Megabytes of unfinished resumable uploads held at once, by the sum of their declared lengths
    /// (`uploads.held.mb`, default 10240); a creation beyond it answers 507.
    public var uploadsHeldMB: Int = 10240
    /// Seconds a resumable upload's `PATCH` may send nothing before it is ended, its bytes kept
    /// (`upload.idle.seconds`, default 60): a phone that lost its network without closing the
    /// connection must not hold the upload.
    public var uploadIdleSeconds: Int = 60
    /// Hours of clips a venue feed shows (`feed.place.window.hours`, default 24).
    public var placeFeedWindowHours: Int = 24
    /// Distinct users whose flags hide a post pending review (`moderation.flag.threshold`, default 3).
    public var flagThreshold: Int = 3
    /// Spotify client credentials for song search (`spotify.client.id`, `spotify.client.secret`);
    /// without them songs come from Tonight's own posts. `spotify.accounts.url` and
    /// `spotify.api.url` point elsewhere (tests).
    public var spotifyClientID: String = ""
    /// See ``spotifyClientID``.
    public var spotifyClientSecret: String = ""
    /// See ``spotifyClientID``.
    public var spotifyAccountsURL: String = "https://accounts.spotify.com"
    /// See ``spotifyClientID``.
    public var spotifyAPIURL: String = "https://api.spotify.com"
    /// Weights of the session recommendation formula and its dismissal penalty
    /// (`sessions.weight.sport`, `.friends`, `.genders`, `.ages`, `.dismissal`).
    public var sessionWeights = SessionWeights()
    /// Minutes before a session's start its players are reminded (`sessions.reminder.minutes`,
    /// default 60; 0: no reminders).
    public var sessionReminderMinutes: Int = 60
    /// Local hour from which the "Tonight" digest goes out (`digest.hour`, default 16; −1: never).
    public var digestHour: Int = 16
    /// A folder to serve the web app from instead of the copy built into the binary (`web.dir`,
    /// `WEB_DIR`; empty, the default: the built-in copy). For working on the app without
    /// rebuilding: `WEB_DIR=Web swift run tonight serve` from the checkout.
    public var webDirectory: String = ""
    /// Trending score constants (`trending.*`), see ``TrendingScore``.
    public var trending = TrendingScore()

    /// The defaults.
    public init() {}
}
