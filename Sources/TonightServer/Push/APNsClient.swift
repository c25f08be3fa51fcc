import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Settings for Apple's push service with token-based authentication.
public struct APNsConfiguration: Sendable {
    /// The 10-character key identifier of the `.p8` signing key.
    public var keyID: String
    /// The 10-character Apple developer team identifier.
    public var teamID: String
    /// The contents of the `.p8` file: a PKCS#8 PEM encoded P-256 private key.
    public var privateKeyPEM: String
    /// The app's bundle identifier, sent as `apns-topic`.
    public var topic: String
    /// Base URL of the push service: `APNsConfiguration.production`, `APNsConfiguration.sandbox`, or a test server.
    public var endpoint: String

    /// The production push endpoint.
    public static let production = "https://api.push.apple.com"
    /// The development (sandbox) push endpoint.
    public static let sandbox = "https://api.sandbox.push.apple.com"

    /// Creates a configuration; `endpoint` defaults to production.
    public init(
        keyID: String, teamID: String, privateKeyPEM: String, topic: String,
        endpoint: String = APNsConfiguration.production
    ) {
        self.keyID = keyID
        self.teamID = teamID
        self.privateKeyPEM = privateKeyPEM
        self.topic = topic
        self.endpoint = endpoint
    }
}

/// One notification to one device token.
public struct APNsNotification: Sendable, Equatable {
    /// The device token as a hexadecimal string.
    public var deviceToken: String
    /// Alert title (ignored for background pushes).
    public var title: String?
    /// Alert body (ignored for background pushes).
    public var body: String?
    /// App icon badge count (ignored for background pushes).
    public var badge: Int?
    /// Sound name, usually `"default"` (ignored for background pushes).
    public var sound: String?
    /// Notification category identifier (`aps.category`).
    public var category: String?
    /// Thread identifier used to group notifications (`aps.thread-id`).
    public var threadID: String?
    /// Extra top-level payload keys (e.g. `"kind"`, `"id"`); a key named `"aps"` is ignored.
    public var custom: [String: String]
    /// `apns-priority`: 10 sends immediately, 5 is power-considerate. Background pushes always use 5.
    public var priority: Int
    /// `apns-collapse-id`, at most 64 bytes; notifications with the same id replace each other.
    public var collapseID: String?
    /// `apns-expiration`: when APNs stops retrying delivery. `Date(timeIntervalSince1970: 0)` sends `0`
    /// (deliver once, never store); `nil` omits the header and leaves APNs' default storage policy.
    public var expiration: Date?
    /// `apns-push-type`: `"alert"` or `"background"` (background adds `content-available: 1` and uses priority 5).
    public var pushType: String

    /// Creates a notification; only the device token is required.
    public init(
        deviceToken: String, title: String? = nil, body: String? = nil, badge: Int? = nil, sound: String? = nil,
        category: String? = nil, threadID: String? = nil, custom: [String: String] = [:], priority: Int = 10,
        collapseID: String? = nil, expiration: Date? = nil, pushType: String = "alert"
    ) {
        self.deviceToken = deviceToken
        self.title = title
        self.body = body
        self.badge = badge
        self.sound = sound
        self.category = category
        self.threadID = threadID
        self.custom = custom
        self.priority = priority
        self.collapseID = collapseID
        self.expiration = expiration
        self.pushType = pushType
    }
}

/// What the caller should do after a send.
public enum APNsResult: Sendable, Equatable {
    /// APNs accepted the notification; `apnsID` is the `apns-id` response header.
    case delivered(apnsID: String?)
    /// The token is no longer valid (410, or 400 `BadDeviceToken`): the caller drops it.
    case unregistered
    /// Temporary failure (429, 5xx, connection error): retry with backoff, not before `after` if set (`Retry-After`).
    case retry(after: Duration?)
    /// Permanent failure for this notification (other 4xx, oversized payload, bad token format): do not retry.
    case rejected(reason: String)
}

/// Errors thrown while creating an ``APNsClient``.
public enum APNsClientError: Error, Sendable, Equatable {
    /// `privateKeyPEM` is not a PEM encoded P-256 private key.
    case invalidPrivateKey
}

/// Sends notifications to APNs over HTTP/2 with a cached ES256 provider token.
///
/// The `HTTPClient` must allow HTTP/2 (the default `httpVersion: .automatic` negotiates it via ALPN).
public final class APNsClient: Sendable {
    /// Largest payload APNs accepts for alert and background notifications.
    public static let maxPayloadSize = 4096
    /// Age after which the cached provider token is replaced (Apple: valid 1 h, refresh at most every 20 min).
    public static let tokenLifetime: TimeInterval = 50 * 60

    private struct CachedToken {
        var jwt: String
        var issuedAt: Date
    }

    private let configuration: APNsConfiguration
    private let httpClient: HTTPClient
    private let privateKey: P256.Signing.PrivateKey
    private let cachedToken = Mutex<CachedToken?>(nil)

    /// Creates a client; throws ``APNsClientError/invalidPrivateKey`` when the PEM cannot be parsed.
    public init(configuration: APNsConfiguration, httpClient: HTTPClient) throws {
        do {
            self.privateKey = try P256.Signing.PrivateKey(pemRepresentation: configuration.privateKeyPEM)
        } catch {
            throw APNsClientError.invalidPrivateKey
        }
        self.configuration = configuration
        self.httpClient = httpClient
    }

    /// Sends one notification and classifies APNs' answer; never throws. `now` drives the token cache and `iat`.
    public func send(_ notification: APNsNotification, now: Date = Date()) async -> APNsResult {
        let token = notification.deviceToken
        guard !token.isEmpty, token.utf8.count <= 200, token.utf8.allSatisfy({ Self.isHexDigit($0) }) else {
            return .rejected(reason: "BadDeviceToken")
        }
        if let collapseID = notification.collapseID, collapseID.utf8.count > 64 {
            return .rejected(reason: "BadCollapseId")
        }
        guard let payload = Self.payload(for: notification) else {
            return .rejected(reason: "PayloadTooLarge")
        }
        let jwt: String
        do {
            jwt = try self.providerToken(now: now)
        } catch {
            return .rejected(reason: "InvalidProviderToken")
        }

        let isBackground = notification.pushType == "background"
        var endpoint = self.configuration.endpoint
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        var request = HTTPClientRequest(url: "\(endpoint)/3/device/\(token)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(jwt)")
        request.headers.add(name: "apns-topic", value: self.configuration.topic)
        request.headers.add(name: "apns-push-type", value: notification.pushType)
        request.headers.add(name: "apns-priority", value: String(isBackground ? 5 : notification.priority))
        if let expiration = notification.expiration {
            let seconds = max(0, Int64(expiration.timeIntervalSince1970.rounded(.down)))
            request.headers.add(name: "apns-expiration", value: String(seconds))
        }
        if let collapseID = notification.collapseID {
            request.headers.add(name: "apns-collapse-id", value: collapseID)
        }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: payload))

        do {
            let response = try await self.httpClient.execute(request, timeout: .seconds(30))
            let status = response.status.code
            if (200..<300).contains(status) {
                return .delivered(apnsID: response.headers.first(name: "apns-id"))
            }
            let body = try await response.body.collect(upTo: 64 * 1024)
            let reason = Self.reason(from: body) ?? "HTTP \(status)"
            switch status {
            case 410:
                return .unregistered
            case 400 where reason == "BadDeviceToken":
                return .unregistered
            case 429, 500...599:
                let after = response.headers.first(name: "retry-after")
                    .flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                    .flatMap { $0 >= 0 ? Duration.seconds($0) : nil }
                return .retry(after: after)
            default:
                return .rejected(reason: reason)
            }
        } catch {
            return .retry(after: nil)
        }
    }

    /// The JSON body APNs receives (`{"aps":{...}, ...custom}`), or nil when it would exceed 4096 bytes.
    public static func payload(for notification: APNsNotification) -> Data? {
        var aps: [String: Any] = [:]
        if notification.pushType == "background" {
            aps["content-available"] = 1
        } else {
            var alert: [String: Any] = [:]
            if let title = notification.title { alert["title"] = title }
            if let body = notification.body { alert["body"] = body }
            if !alert.isEmpty { aps["alert"] = alert }
            if let badge = notification.badge { aps["badge"] = badge }
            if let sound = notification.sound { aps["sound"] = sound }
        }
        if let threadID = notification.threadID { aps["thread-id"] = threadID }
        if let category = notification.category { aps["category"] = category }

        var root: [String: Any] = [:]
        for (key, value) in notification.custom where key != "aps" {
            root[key] = value
        }
        root["aps"] = aps
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: root, options: [.sortedKeys, .withoutEscapingSlashes]),
            data.count <= maxPayloadSize
        else { return nil }
        return data
    }

    // MARK: - Provider token

    /// Returns the cached JWT, or signs a new one when none exists or the cached one is 50 minutes old.
    private func providerToken(now: Date) throws -> String {
        try self.cachedToken.withLock { cached in
            if let cached {
                let age = now.timeIntervalSince(cached.issuedAt)
                // A slightly earlier `now` (concurrent senders) reuses the token; a clock far behind re-signs.
                if age < Self.tokenLifetime, age > -60 {
                    return cached.jwt
                }
            }
            let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            let jwt = try self.signToken(issuedAt: issuedAt)
            cached = CachedToken(jwt: jwt, issuedAt: issuedAt)
            return jwt
        }
    }

    private struct JWTHeader: Encodable {
        var alg = "ES256"
        var kid: String
    }

    private struct JWTClaims: Encodable {
        var iss: String
        var iat: Int64
    }

    private func signToken(issuedAt: Date) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let header = try encoder.encode(JWTHeader(kid: self.configuration.keyID))
        let claims = try encoder.encode(
            JWTClaims(iss: self.configuration.teamID, iat: Int64(issuedAt.timeIntervalSince1970)))
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        let signature = try self.privateKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    // MARK: - Helpers

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private struct ErrorBody: Decodable {
        var reason: String
    }

    private static func reason(from body: ByteBuffer) -> String? {
        guard body.readableBytes > 0 else { return nil }
        return try? JSONDecoder().decode(ErrorBody.self, from: Data(body.readableBytesView)).reason
    }
}
