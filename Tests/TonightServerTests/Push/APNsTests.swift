import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import JWTKit
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import ServiceLifecycle
import SwiftASN1
import Synchronization
import Testing
import X509

@testable import TonightServer

// MARK: - Fixtures

enum Fixture {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"
    static let topic = "com.example.chat"
}

/// Device tokens that script the fake server's answer.
enum Tokens {
    static let ok = String(repeating: "a1", count: 32)
    static let gone = String(repeating: "b2", count: 32)
    static let badToken = String(repeating: "c3", count: 32)
    static let throttled = String(repeating: "d4", count: 32)
    static let broken = String(repeating: "e5", count: 32)
}

/// What the fake APNs saw for one request.
struct SeenRequest: Sendable {
    var method: String
    var path: String
    var headers: [String: String]
    var body: Data
    var isHTTP2: Bool
    var jwt: String?
    var jwtHeader: [String: String] = [:]
    var iat: Date?
    var status: Int = 0
    var apnsID: String?
}

final class Recorder: Sendable {
    private let state = Mutex<(count: Int, seen: [SeenRequest])>((0, []))
    func countRequest() { state.withLock { $0.count += 1 } }
    func append(_ request: SeenRequest) { state.withLock { $0.seen.append(request) } }
    var requestCount: Int { state.withLock { $0.count } }
    var seen: [SeenRequest] { state.withLock { $0.seen } }
}

/// Request context that keeps the channel, so the handler can tell an HTTP/2 stream from an HTTP/1 connection.
struct APNsTestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

/// Counts every request that reaches the server, whatever its path or method.
struct CountingMiddleware: RouterMiddleware {
    typealias Context = APNsTestContext
    let recorder: Recorder
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        recorder.countRequest()
        return try await next(request, context)
    }
}

struct ProviderClaims: JWTPayload {
    var iss: IssuerClaim
    var iat: IssuedAtClaim
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

func base64URLDecode(_ text: Substring) -> Data? {
    var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while s.count % 4 != 0 { s += "=" }
    return Data(base64Encoded: s)
}

// MARK: - Fake APNs

/// Checks what APNs checks, then answers according to the device token.
enum FakeAPNs {
    static func reply(_ status: HTTPResponse.Status, reason: String? = nil, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        var body = ResponseBody()
        if let reason {
            headers[.contentType] = "application/json"
            body = .init(byteBuffer: ByteBuffer(string: #"{"reason":"\#(reason)","timestamp":1700000000000}"#))
        }
        return Response(status: status, headers: headers, body: body)
    }

    static func handle(_ request: Request, context: APNsTestContext, keys: JWTKeyCollection, recorder: Recorder)
        async throws -> Response
    {
        // An HTTP/2 stream channel hangs off the TLS connection channel, which hangs off the listening channel;
        // an HTTP/1.1 connection is one level shallower. Only stream channels answer the streamID option
        // (asking a socket channel for it traps), so check the depth first.
        var isHTTP2 = false
        if context.channel.parent?.parent != nil {
            isHTTP2 = (try? await context.channel.getOption(HTTP2StreamChannelOptions.streamID).get()) != nil
        }
        let body = try await request.body.collect(upTo: 1 << 20)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        var seen = SeenRequest(
            method: request.method.rawValue, path: request.uri.path, headers: headers,
            body: Data(body.readableBytesView), isHTTP2: isHTTP2
        )
        let response = await check(request, headers: headers, body: seen.body, keys: keys, seen: &seen)
        seen.status = Int(response.status.code)
        seen.apnsID = response.headers[HTTPField.Name("apns-id")!]
        recorder.append(seen)
        return response
    }

    static func check(
        _ request: Request, headers: [String: String], body: Data, keys: JWTKeyCollection, seen: inout SeenRequest
    ) async -> Response {
        let path = request.uri.path
        let prefix = "/3/device/"
        let token = path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : ""
        guard request.method == .post, token.count == 64, token.allSatisfy({ $0.isHexDigit }) else {
            return reply(.notFound, reason: "BadPath")
        }
        // Provider token: ES256 signature, kid, iss, iat not older than an hour.
        guard let auth = headers["authorization"], auth.hasPrefix("bearer ") else {
            return reply(.forbidden, reason: "MissingProviderToken")
        }
        let jwt = String(auth.dropFirst("bearer ".count))
        seen.jwt = jwt
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = base64URLDecode(parts[0]),
            let jwtHeader = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: String]
        else { return reply(.forbidden, reason: "InvalidProviderToken") }
        seen.jwtHeader = jwtHeader
        guard jwtHeader["alg"] == "ES256", jwtHeader["kid"] == Fixture.keyID else {
            return reply(.forbidden, reason: "InvalidProviderToken")
        }
        guard let claims = try? await keys.verify(jwt, as: ProviderClaims.self), claims.iss.value == Fixture.teamID
        else {
            return reply(.forbidden, reason: "InvalidProviderToken")
        }
        seen.iat = claims.iat.value
        let age = Date().timeIntervalSince(claims.iat.value)
        guard age <= 3600 else { return reply(.forbidden, reason: "ExpiredProviderToken") }
        guard age >= -60 else { return reply(.forbidden, reason: "InvalidProviderToken") }

        guard headers["apns-topic"] == Fixture.topic else {
            return reply(.badRequest, reason: "DeviceTokenNotForTopic")
        }
        guard let pushType = headers["apns-push-type"], ["alert", "background"].contains(pushType) else {
            return reply(.badRequest, reason: "InvalidPushType")
        }
        if let priority = headers["apns-priority"] {
            guard ["1", "5", "10"].contains(priority), !(pushType == "background" && priority != "5") else {
                return reply(.badRequest, reason: "BadPriority")
            }
        }
        if let expiration = headers["apns-expiration"], Int(expiration) == nil {
            return reply(.badRequest, reason: "BadExpirationDate")
        }
        if let collapseID = headers["apns-collapse-id"], collapseID.utf8.count > 64 {
            return reply(.badRequest, reason: "BadCollapseId")
        }
        guard body.count <= 4096 else { return reply(.contentTooLarge, reason: "PayloadTooLarge") }
        guard !body.isEmpty else { return reply(.badRequest, reason: "PayloadEmpty") }
        guard let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], json["aps"] is [String: Any]
        else {
            return reply(.badRequest, reason: "BadPayload")
        }

        switch token {
        case Tokens.gone: return reply(.gone, reason: "Unregistered")
        case Tokens.badToken: return reply(.badRequest, reason: "BadDeviceToken")
        case Tokens.throttled: return reply(.tooManyRequests, reason: "TooManyRequests", headers: [.retryAfter: "3"])
        case Tokens.broken: return reply(.internalServerError, reason: "InternalServerError")
        default:
            return reply(.ok, headers: [HTTPField.Name("apns-id")!: UUID().uuidString])
        }
    }
}

// MARK: - TLS + server harness

/// A self-signed P-256 certificate for 127.0.0.1 / localhost, made fresh for each server.
func makeSelfSignedCertificate() throws -> (certificate: NIOSSLCertificate, key: NIOSSLPrivateKey) {
    let pem = try selfSignedPEM()
    return (
        try NIOSSLCertificate(bytes: Array(pem.certificate.utf8), format: .pem),
        try NIOSSLPrivateKey(bytes: Array(pem.key.utf8), format: .pem)
    )
}

struct TestServer: Sendable {
    let endpoint: String
    let recorder: Recorder
    let httpClient: HTTPClient
    /// The .p8 the fake APNs knows the public half of.
    let p8: String

    func makeClient(privateKeyPEM: String? = nil) throws -> APNsClient {
        let configuration = APNsConfiguration(
            keyID: Fixture.keyID, teamID: Fixture.teamID, privateKeyPEM: privateKeyPEM ?? p8,
            topic: Fixture.topic, endpoint: endpoint
        )
        return try APNsClient(configuration: configuration, httpClient: httpClient)
    }
}

/// Runs a Hummingbird HTTP/2-over-TLS fake APNs on 127.0.0.1:0 and an HTTPClient that trusts its certificate.
func withFakeAPNs(_ body: (TestServer) async throws -> Void) async throws {
    let tls = try makeSelfSignedCertificate()
    let signingKey = P256.Signing.PrivateKey()
    let p8 = signingKey.pemRepresentation
    let keys = JWTKeyCollection()
    await keys.add(ecdsa: try ES256PublicKey(backing: signingKey.publicKey), kid: JWKIdentifier(string: Fixture.keyID))
    let recorder = Recorder()

    let router = Router(context: APNsTestContext.self)
    router.add(middleware: CountingMiddleware(recorder: recorder))
    router.post("/3/device/:token") { request, context in
        try await FakeAPNs.handle(request, context: context, keys: keys, recorder: recorder)
    }
    let serverTLS = TLSConfiguration.makeServerConfiguration(
        certificateChain: [.certificate(tls.certificate)], privateKey: .privateKey(tls.key)
    )
    var logger = Logger(label: "fake-apns")
    logger.logLevel = .warning
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
        router: router,
        server: try .http2Upgrade(tlsConfiguration: serverTLS),
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
            portContinuation.finish()
        },
        logger: logger
    )

    var clientTLS = TLSConfiguration.makeClientConfiguration()
    clientTLS.trustRoots = .certificates([tls.certificate])  // full chain + hostname (IP SAN) verification
    var configuration = HTTPClient.Configuration(tlsConfiguration: clientTLS)
    configuration.httpVersion = .automatic  // ALPN offers h2 (what APNs requires) and http/1.1
    let httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)

    let serviceGroup = ServiceGroup(configuration: .init(services: [app], logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await serviceGroup.run() }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        try #require(port > 0, "server did not start")
        let server = TestServer(
            endpoint: "https://127.0.0.1:\(port)", recorder: recorder, httpClient: httpClient, p8: p8)
        var failure: (any Error)?
        do { try await body(server) } catch { failure = error }
        try? await httpClient.shutdown()
        await serviceGroup.triggerGracefulShutdown()
        if let failure { throw failure }
    }
}

func json(_ data: Data?) throws -> [String: Any] {
    let data = try #require(data)
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

// MARK: - Tests

@Suite("APNsClient against a fake HTTP/2 APNs")
struct APNsClientTests {
    @Test func deliveredOverHTTP2WithAPNsHeaders() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            let notification = APNsNotification(
                deviceToken: Tokens.ok, title: "Hi", body: "New message", badge: 2, sound: "default",
                custom: ["kind": "message", "id": "42"], priority: 10, collapseID: "chat-7",
                expiration: Date(timeIntervalSince1970: 1_900_000_000)
            )
            let result = await client.send(notification)
            let seen = try #require(server.recorder.seen.first)
            #expect(seen.apnsID != nil)
            #expect(result == .delivered(apnsID: seen.apnsID))
            #expect(server.recorder.requestCount == 1)
            #expect(seen.isHTTP2, "server must see an HTTP/2 stream")
            #expect(seen.method == "POST")
            #expect(seen.path == "/3/device/\(Tokens.ok)")
            #expect(seen.headers["apns-topic"] == Fixture.topic)
            #expect(seen.headers["apns-push-type"] == "alert")
            #expect(seen.headers["apns-priority"] == "10")
            #expect(seen.headers["apns-expiration"] == "1900000000")
            #expect(seen.headers["apns-collapse-id"] == "chat-7")
            #expect(seen.headers["content-type"] == "application/json")
            #expect(seen.jwtHeader == ["alg": "ES256", "kid": Fixture.keyID])

            // The same HTTPClient negotiates HTTP/2 from the client's side too.
            let probe = try await server.httpClient.execute(
                HTTPClientRequest(url: server.endpoint + "/"), timeout: .seconds(10))
            #expect(probe.version == .http2)
        }
    }

    @Test func unregisteredOn410AndBadDeviceToken() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            #expect(await client.send(APNsNotification(deviceToken: Tokens.gone, body: "x")) == .unregistered)
            #expect(await client.send(APNsNotification(deviceToken: Tokens.badToken, body: "x")) == .unregistered)
            #expect(server.recorder.seen.map(\.status) == [410, 400])
        }
    }

    @Test func retryWithRetryAfterOn429() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            #expect(
                await client.send(APNsNotification(deviceToken: Tokens.throttled, body: "x"))
                    == .retry(after: .seconds(3)))
        }
    }

    @Test func retryOn500() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            #expect(await client.send(APNsNotification(deviceToken: Tokens.broken, body: "x")) == .retry(after: nil))
            #expect(server.recorder.seen.map(\.status) == [500])
        }
    }

    @Test func retryWhenServerUnreachable() async throws {
        // Connection refused; a short connect timeout bounds AsyncHTTPClient's connection retries.
        let httpClient = HTTPClient(configuration: .init(timeout: .init(connect: .seconds(1))))
        let configuration = APNsConfiguration(
            keyID: Fixture.keyID, teamID: Fixture.teamID, privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation,
            topic: Fixture.topic, endpoint: "https://127.0.0.1:1"
        )
        let client = try APNsClient(configuration: configuration, httpClient: httpClient)
        #expect(await client.send(APNsNotification(deviceToken: Tokens.ok, body: "x")) == .retry(after: nil))
        try await httpClient.shutdown()
    }

    @Test func rejectedWhenSignedWithAnotherKeyOfSameKid() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient(privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation)
            #expect(
                await client.send(APNsNotification(deviceToken: Tokens.ok, body: "x"))
                    == .rejected(reason: "InvalidProviderToken"))
            let seen = try #require(server.recorder.seen.first)
            #expect(seen.status == 403)
            #expect(seen.jwtHeader["kid"] == Fixture.keyID)
        }
    }

    @Test func serverRefusesTokenOlderThanAnHour() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            let note = APNsNotification(deviceToken: Tokens.ok, body: "x")
            #expect(await client.send(note, now: Date() - 2 * 3600) == .rejected(reason: "ExpiredProviderToken"))
            #expect(server.recorder.seen.map(\.status) == [403])
        }
    }

    @Test func oversizedPayloadIsNeverSent() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            let big = APNsNotification(deviceToken: Tokens.ok, body: String(repeating: "x", count: 5000))
            #expect(APNsClient.payload(for: big) == nil)
            #expect(await client.send(big) == .rejected(reason: "PayloadTooLarge"))
            #expect(server.recorder.requestCount == 0)
        }
    }

    @Test func invalidTokensAndCollapseIDAreNeverSent() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            for token in ["", "zz" + String(Tokens.ok.dropFirst(2)), "../../3/device/\(Tokens.ok)", "a1 b2"] {
                #expect(
                    await client.send(APNsNotification(deviceToken: token, body: "x"))
                        == .rejected(reason: "BadDeviceToken"))
            }
            let longCollapse = APNsNotification(
                deviceToken: Tokens.ok, body: "x", collapseID: String(repeating: "c", count: 65))
            #expect(await client.send(longCollapse) == .rejected(reason: "BadCollapseId"))
            #expect(server.recorder.requestCount == 0)
        }
    }

    @Test func tokenReusedWithin50MinutesAndRefreshedAfter() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 55 * 60).rounded(.down))
            let note = APNsNotification(deviceToken: Tokens.ok, body: "x")
            for offset: TimeInterval in [0, 10 * 60, 49 * 60 + 59] {
                guard case .delivered = await client.send(note, now: start + offset) else {
                    Issue.record("send at +\(offset)s not delivered"); return
                }
            }
            guard case .delivered = await client.send(note, now: start + 55 * 60) else {
                Issue.record("send after refresh not delivered"); return
            }
            let seen = server.recorder.seen
            try #require(seen.count == 4)
            #expect(seen[0].jwt == seen[1].jwt)
            #expect(seen[1].jwt == seen[2].jwt)
            #expect(seen[3].jwt != seen[0].jwt)
            #expect(seen[0].iat == start)
            #expect(seen[3].iat == start + 55 * 60)
        }
    }

    @Test func concurrentSendsShareOneToken() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            let now = Date()
            let results = await withTaskGroup(of: APNsResult.self) { group in
                for _ in 0..<20 {
                    group.addTask { await client.send(APNsNotification(deviceToken: Tokens.ok, body: "x"), now: now) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 20)
            #expect(results.allSatisfy { if case .delivered = $0 { true } else { false } })
            #expect(Set(server.recorder.seen.compactMap(\.jwt)).count == 1)
            #expect(server.recorder.seen.allSatisfy { $0.isHTTP2 })
        }
    }

    @Test func backgroundPushUsesPriority5AndContentAvailable() async throws {
        try await withFakeAPNs { server in
            let client = try server.makeClient()
            let note = APNsNotification(
                deviceToken: Tokens.ok, custom: ["kind": "sync"], priority: 10, pushType: "background")
            guard case .delivered = await client.send(note) else { Issue.record("not delivered"); return }
            let seen = try #require(server.recorder.seen.first)
            #expect(seen.headers["apns-push-type"] == "background")
            #expect(seen.headers["apns-priority"] == "5")
            #expect(seen.headers["apns-expiration"] == nil)
            let body = try json(seen.body)
            #expect(body["aps"] as? [String: Int] == ["content-available": 1])
            #expect(body["kind"] as? String == "sync")
        }
    }

    @Test func alertPayloadShape() throws {
        let note = APNsNotification(
            deviceToken: Tokens.ok, title: "T", body: "B", badge: 3, sound: "default", category: "MSG",
            threadID: "room-1", custom: ["kind": "message", "id": "9", "aps": "ignored"]
        )
        let body = try json(APNsClient.payload(for: note))
        #expect(Set(body.keys) == ["aps", "kind", "id"])
        #expect(body["kind"] as? String == "message")
        #expect(body["id"] as? String == "9")
        let aps = try #require(body["aps"] as? [String: Any])
        #expect(aps["alert"] as? [String: String] == ["title": "T", "body": "B"])
        #expect(aps["badge"] as? Int == 3)
        #expect(aps["sound"] as? String == "default")
        #expect(aps["category"] as? String == "MSG")
        #expect(aps["thread-id"] as? String == "room-1")
        #expect(aps["content-available"] == nil)
    }

    @Test func backgroundPayloadShape() throws {
        let note = APNsNotification(
            deviceToken: Tokens.ok, title: "dropped", badge: 1, sound: "default", pushType: "background")
        let body = try json(APNsClient.payload(for: note))
        #expect(Set(body.keys) == ["aps"])
        #expect(body["aps"] as? [String: Int] == ["content-available": 1])
    }

    @Test func badPrivateKeyThrows() {
        let httpClient = HTTPClient.shared
        let configuration = APNsConfiguration(
            keyID: Fixture.keyID, teamID: Fixture.teamID,
            privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----",
            topic: Fixture.topic
        )
        #expect(throws: APNsClientError.invalidPrivateKey) {
            try APNsClient(configuration: configuration, httpClient: httpClient)
        }
        // The test .p8 is PKCS#8, like Apple's.
        #expect(P256.Signing.PrivateKey().pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }
}

/// Notifications → push jobs (the outbox) → APNs, on the real application's storage.
@Suite("Push through the outbox")
struct PushOutboxTests {
    @Test(
        "a notification becomes one APNs push per device with the unread badge; 410 drops the token; quiet hours push nothing",
        arguments: Backend.available)
    func outbox(backend: Backend) async throws {
        try await withFakeAPNs { server in
            try await withApp(backend) { services, client in
                let ana = try await client.member("ana")
                let ben = try await client.member("ben")
                let cyd = try await client.member("cyd")
                for (user, token) in [(ana, Tokens.ok), (ana, Tokens.gone)] {
                    let registered = try await client.send(
                        .post, "/v1/me/devices", json: ["token": token.uppercased(), "platform": "apns"],
                        token: user.token)
                    #expect(registered.status == .ok, "\(registered.text)")
                }
                let bad = try await client.send(
                    .post, "/v1/me/devices", json: ["token": "not hex", "platform": "apns"], token: ana.token)
                #expect(bad.status == .badRequest)
                #expect(
                    try await client.send(.get, "/v1/me/devices", token: ana.token).json["items"].map {
                        ($0 as? [Any])?.count
                    } == 2)

                _ = try await client.send(.post, "/v1/me/friend-requests", json: ["userId": ana.id], token: ben.token)
                let push = PushService(
                    client: try server.makeClient(), devices: services.devices, webPush: services.push.webPush,
                    subscriptions: services.push.subscriptions, notifications: services.notifications,
                    jobs: services.jobs, retry: .init(), logger: services.logger)
                let worker = JobWorker(
                    queue: services.jobs, handlers: [PushJob.kind: push.run], kinds: .only([PushJob.kind]),
                    logger: services.logger)
                #expect(try await worker.runOnce() == 1)
                let seen = server.recorder.seen
                #expect(Set(seen.map(\.path)) == ["/3/device/\(Tokens.ok)", "/3/device/\(Tokens.gone)"])
                let delivered = try #require(seen.first { $0.path.hasSuffix(Tokens.ok) })
                #expect(delivered.isHTTP2)
                let aps = try json(delivered.body)["aps"] as? [String: Any]
                #expect(aps?["badge"] as? Int == 1)
                #expect(
                    ((aps?["alert"] as? [String: Any])?["body"] as? String)?.contains("wants to be friends") == true)
                // APNs said the second token is gone: it is dropped.
                let left = try await services.devices.devices(of: ana.id).map(\.token)
                #expect(left == [Tokens.ok])

                // Read before the push goes out: nothing is sent. Quiet hours: no push job at all.
                _ = try await client.send(.post, "/v1/me/friend-requests", json: ["userId": ana.id], token: cyd.token)
                _ = try await client.send(.post, "/v1/notifications/read-all", token: ana.token)
                #expect(try await worker.runOnce() == 1)
                #expect(server.recorder.seen.count == 2)
                let now = Date()
                let hour = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: now)
                    .hour!
                let quiet = try await client.send(
                    .put, "/v1/me/notification-settings",
                    json: [
                        "muted": [],
                        "quietHours": [
                            "start": String(format: "%02d:00", hour), "end": String(format: "%02d:00", (hour + 2) % 24),
                        ],
                    ],
                    token: ana.token)
                #expect(quiet.status == .ok)
                _ = try await client.send(.delete, "/v1/me/friend-requests/\(ana.id)", token: cyd.token)
                _ = try await client.send(.post, "/v1/me/friend-requests", json: ["userId": ana.id], token: cyd.token)
                #expect(try await client.notificationKinds(ana).count == 3)
                #expect(try await worker.runOnce() == 0)
            }
        }
    }

    @Test("a throttled device is retried alone, not before Retry-After", arguments: Backend.available)
    func throttled(backend: Backend) async throws {
        try await withFakeAPNs { server in
            try await withApp(backend) { services, client in
                let ana = try await client.member("ana")
                let ben = try await client.member("ben")
                for token in [Tokens.ok, Tokens.throttled] {
                    _ = try await client.send(
                        .post, "/v1/me/devices", json: ["token": token, "platform": "apns"], token: ana.token)
                }
                _ = try await client.send(.post, "/v1/me/friend-requests", json: ["userId": ana.id], token: ben.token)
                let push = PushService(
                    client: try server.makeClient(), devices: services.devices, webPush: services.push.webPush,
                    subscriptions: services.push.subscriptions, notifications: services.notifications,
                    jobs: services.jobs, retry: .init(baseDelay: 1), logger: services.logger)
                let worker = JobWorker(
                    queue: services.jobs, handlers: [PushJob.kind: push.run], kinds: .only([PushJob.kind]),
                    logger: services.logger)
                // The retry is due 3 s (Retry-After) after the claim, which is after `started`: a second
                // after `started` is before it however long the first run takes on a loaded machine.
                let started = Date()
                #expect(try await worker.runOnce() == 1)
                #expect(server.recorder.seen.count == 2)
                // The retry waits for Retry-After (3 s), then goes to the throttled device only.
                #expect(try await worker.runOnce(now: started.addingTimeInterval(1)) == 0)
                #expect(try await worker.runOnce(now: Date().addingTimeInterval(4)) == 1)
                let paths = server.recorder.seen.map(\.path)
                #expect(paths.count == 3)
                #expect(paths.last == "/3/device/\(Tokens.throttled)")
                #expect(try await services.devices.devices(of: ana.id).count == 2)
            }
        }
    }
}
