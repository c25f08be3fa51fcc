import Foundation
import TonightCore

/// What the settings build: push, sign-in providers, song search, storage paths, the blob store and
/// the trusted proxies.
extension AppConfig {
    /// The APNs settings, or nil when push is not configured.
    func apnsConfiguration() throws -> APNsConfiguration? {
        guard !apnsKeyID.isEmpty, !apnsTeamID.isEmpty, !apnsKeyFile.isEmpty, !apnsTopic.isEmpty else { return nil }
        let endpoint =
            switch apnsEndpoint {
            case "production": APNsConfiguration.production
            case "sandbox": APNsConfiguration.sandbox
            default: apnsEndpoint
            }
        return APNsConfiguration(
            keyID: apnsKeyID, teamID: apnsTeamID,
            privateKeyPEM: try String(contentsOfFile: apnsKeyFile, encoding: .utf8),
            topic: apnsTopic, endpoint: endpoint)
    }

    /// The OpenID Connect providers these settings turn on.
    public var oidcProviders: [OIDCProvider] {
        var providers: [OIDCProvider] = []
        if !appleAudiences.isEmpty { providers.append(.apple(audiences: appleAudiences)) }
        if !facebookAudiences.isEmpty { providers.append(.facebook(audiences: facebookAudiences)) }
        if !oidcIssuer.isEmpty, !oidcJWKS.isEmpty {
            let source: OIDCProvider.Source =
                oidcJWKS.hasPrefix("https://") || oidcJWKS.hasPrefix("http://") ? .url(oidcJWKS) : .file(oidcJWKS)
            providers.append(.init(name: oidcName, issuer: oidcIssuer, audiences: oidcAudiences, jwks: source))
        }
        return providers
    }

    /// The Spotify settings, or nil when song search answers from posts only.
    var spotifyConfiguration: SpotifyClient.Configuration? {
        guard !spotifyClientID.isEmpty, !spotifyClientSecret.isEmpty else { return nil }
        return .init(
            clientID: spotifyClientID, clientSecret: spotifyClientSecret, accountsURL: spotifyAccountsURL,
            apiURL: spotifyAPIURL)
    }

    /// The embedded SQLite database: `<data dir>/tonight.sqlite`.
    public var sqlitePath: String {
        URL(fileURLWithPath: dataDirectory).appendingPathComponent("tonight.sqlite").path
    }

    /// Where uploads are written while they arrive: `<data dir>/tmp/uploads`.
    public var uploadDirectory: String { dataDirectory + "/tmp/uploads" }

    /// Where unfinished resumable uploads live: `<data dir>/uploads` (kept across restarts, unlike
    /// ``uploadDirectory``).
    public var resumableUploadDirectory: String { dataDirectory + "/uploads" }

    /// The blob store these settings name: S3 when `media.storage` is `s3`, else the local folder
    /// `<data dir>/media`.
    func blobStore() throws -> any BlobStore {
        guard mediaStorage == "s3" else { return LocalBlobStore(root: dataDirectory + "/media") }
        guard let endpoint = URL(string: s3Endpoint), endpoint.host != nil, !s3Bucket.isEmpty, !s3AccessKey.isEmpty,
            !s3SecretKey.isEmpty
        else {
            throw ConfigurationError(
                "MEDIA_STORAGE=s3 needs S3_ENDPOINT (a URL), S3_BUCKET, S3_ACCESS_KEY and S3_SECRET_KEY")
        }
        return S3BlobStore(
            configuration: .init(
                endpoint: endpoint, bucket: s3Bucket, region: s3Region, accessKeyID: s3AccessKey,
                secretAccessKey: s3SecretKey, timeout: .milliseconds(Int64(max(1, s3TimeoutMilliseconds))),
                minimumBytesPerSecond: Int64(s3MinBytesPerSecond), largestObject: Int64(mediaMaxBytes)))
    }

    /// The trusted proxies these settings name (throws on an entry that is not an address or range).
    func trustedProxyList() throws -> TrustedProxies {
        if !trustedProxies.isEmpty { return try TrustedProxies(parsing: trustedProxies) }
        return trustProxy ? .privateNetworks : .none
    }

    /// Whether storage is PostgreSQL (`database.url` set) rather than the embedded SQLite.
    public var usesPostgres: Bool { !databaseURL.isEmpty }
}
