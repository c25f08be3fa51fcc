import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing

@testable import TonightServer

/// The push-service stand-in (`Tests/Push/push_service.py`): it makes browser-like subscriptions,
/// checks each push's VAPID JWT and headers and decrypts it with PyPI's `http_ece`.
private struct PushServiceStandIn {
    let service: PythonService
    var base: String { "http://127.0.0.1:\(service.port)" }

    static let available = PythonService.available(
        ["http_ece", "cryptography"], requiredBy: "TONIGHT_TEST_REQUIRE_PUSH_SERVICE")

    static func with(_ body: (PushServiceStandIn) async throws -> Void) async throws {
        guard available else { return }
        let service = try await PythonService.start("Push/push_service.py")
        defer { service.stop() }
        try await body(PushServiceStandIn(service: service))
    }

    /// A new browser-like subscription whose pushes are answered `answers` first, then 201.
    func subscribe(answers: [Int] = []) async throws -> [String: Any] {
        try await json(.POST, "/subscriptions", body: ["answers": answers])
    }

    /// What the subscription at `endpoint` received.
    func messages(_ endpoint: String) async throws -> [[String: Any]] {
        let id = endpoint.split(separator: "/").last.map(String.init) ?? ""
        return try await json(.GET, "/subscriptions/\(id)/messages")
    }

    private func json<T>(_ method: HTTPMethod, _ path: String, body: [String: Any]? = nil) async throws -> T {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let body { request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body))) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let data = Data(buffer: try await response.body.collect(upTo: 1 << 20))
        return try #require(try JSONSerialization.jsonObject(with: data) as? T)
    }
}

@Suite("Web Push: RFC 8291 encryption, VAPID, subscriptions and delivery")
struct WebPushTests {
    @Test("encryption matches RFC 8291's Appendix A example")
    func rfc8291Vector() throws {
        let raw = try #require(Base64URL.decode("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        let serverKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: raw)
        #expect(
            Base64URL.encode(serverKey.publicKey.x963Representation)
                == "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8")
        let p256dh = try #require(
            Base64URL.decode("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"))
        let auth = try #require(Base64URL.decode("BTBZMqHH6r4Tts7J_aSIgg"))
        let salt = try #require(Base64URL.decode("DGv6ra1nlYgDCS1FRnbzlw"))
        let body = try WebPushCrypto.encrypt(
            Data("When I grow up, I want to be a watermelon".utf8), p256dh: p256dh, auth: auth, salt: salt,
            serverKey: serverKey)
        #expect(
            Base64URL.encode(body)
                == "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        )
    }

    @Test("the VAPID header is an ES256 JWT for the push service's origin, verifiable with its k")
    func vapid() throws {
        let vapid = VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:ops@tonight.example")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let header = try vapid.authorization(
            for: try #require(URL(string: "https://push.example.net:8443/wpush/v2/abc")), now: now)
        let parts = header.dropFirst("vapid ".count).components(separatedBy: ", ")
        let jwt = try #require(parts.first { $0.hasPrefix("t=") }).dropFirst(2)
        let key = try #require(parts.first { $0.hasPrefix("k=") }).dropFirst(2)
        #expect(String(key) == vapid.publicKey)
        let pieces = jwt.split(separator: ".").map(String.init)
        #expect(pieces.count == 3)
        let keyBytes = try #require(Base64URL.decode(String(key)))
        let signatureBytes = try #require(Base64URL.decode(pieces[2]))
        let publicKey = try P256.Signing.PublicKey(x963Representation: keyBytes)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        #expect(publicKey.isValidSignature(signature, for: Data((pieces[0] + "." + pieces[1]).utf8)))
        let claimBytes = try #require(Base64URL.decode(pieces[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: claimBytes) as? [String: Any])
        #expect(claims["aud"] as? String == "https://push.example.net:8443")
        #expect(claims["sub"] as? String == "mailto:ops@tonight.example")
        #expect(claims["exp"] as? Int == 1_800_000_000 + 12 * 3600)
        // The origin as push services compare it: lower case, no default port.
        let plain = try vapid.authorization(
            for: try #require(URL(string: "HTTPS://Push.Example.NET:443/x")), now: now)
        let plainClaims = try #require(
            plain.split(separator: ".").dropFirst().first.flatMap { Base64URL.decode(String($0)) })
        #expect(String(decoding: plainClaims, as: UTF8.self).contains(#""aud":"https://push.example.net""#))
    }

    @Test("a VAPID token is signed once per push service and signed again when half its life is left")
    func vapidReuse() throws {
        let vapid = VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:ops@tonight.example")
        let endpoint = try #require(URL(string: "https://push.example.net/wpush/v2/abc"))
        let other = try #require(URL(string: "https://push.example.net/wpush/v2/other-browser"))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try vapid.authorization(for: endpoint, now: now)
        // ECDSA signatures are randomized: an equal header is the cached one.
        #expect(try vapid.authorization(for: other, now: now.addingTimeInterval(6 * 3600 - 1)) == first)
        #expect(try vapid.signedAuthorization(for: endpoint, now: now) != first)
        let renewed = try vapid.authorization(for: endpoint, now: now.addingTimeInterval(6 * 3600))
        #expect(renewed != first)
        let claims = try #require(
            renewed.split(separator: ".").dropFirst().first.flatMap { Base64URL.decode(String($0)) })
        let exp = try #require(try JSONSerialization.jsonObject(with: claims) as? [String: Any])["exp"] as? Int
        #expect(exp == 1_800_000_000 + 6 * 3600 + 12 * 3600)
        #expect(try vapid.authorization(for: try #require(URL(string: "https://fcm.example.com/x")), now: now) != first)
    }

    @Test("only https endpoints of plain hosts on port 443, unless the host is listed as insecure")
    func endpoints() {
        let sender = WebPushSender(
            vapid: VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:a@b.c"), insecureHosts: ["127.0.0.1"])
        #expect(sender.acceptable("https://fcm.googleapis.com/fcm/send/abc"))
        #expect(sender.acceptable("https://updates.push.services.mozilla.com:443/wpush/v2/x"))
        #expect(!sender.acceptable("http://fcm.googleapis.com/fcm/send/abc"))
        #expect(!sender.acceptable("https://push.example.com:8443/x"))
        #expect(!sender.acceptable("https://user:pass@push.example.com/x"))
        #expect(!sender.acceptable("ftp://push.example.com/x"))
        #expect(!sender.acceptable("not a url"))
        #expect(sender.acceptable("http://127.0.0.1:8080/push/1"))
        #expect(!sender.acceptable("http://127.0.0.2:8080/push/1"))
    }

    @Test(
        "a private or loopback endpoint is never posted to",
        arguments: ["https://127.0.0.1/push/x", "https://localhost/push/x", "https://10.1.2.3/push/x"])
    func privateEndpoint(endpoint: String) async throws {
        let sender = WebPushSender(
            vapid: VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:a@b.c"), insecureHosts: [])
        let key = Base64URL.encode(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        let outcome = await sender.send(
            Data("{}".utf8),
            to: WebPushSubscriptionRecord(
                endpoint: endpoint, userID: "u", p256dh: key, auth: Base64URL.encode(Data(count: 16)), createdAt: 0),
            ttl: 60, urgency: "normal", topic: nil)
        guard case .refused = outcome else {
            Issue.record("\(endpoint): \(outcome)")
            return
        }
    }

    @Test("a notification reaches the browser's push service, encrypted and signed; 410 forgets it; 429 retries")
    func delivery() async throws {
        try await PushServiceStandIn.with { stand in
            try await withApp(.sqlite, configure: { $0.webPushInsecureHosts = ["127.0.0.1"] }) { services, client in
                let ana = try await client.signUp("ana")
                let ben = try await client.signUp("ben")
                let config = try await client.send(.get, "/v1/config")
                #expect(config.json["webPushPublicKey"] as? String == services.push.webPush.vapid.publicKey)

                let browser = try await stand.subscribe()
                let gone = try await stand.subscribe(answers: [410])
                let busy = try await stand.subscribe(answers: [429])
                let picky = try await stand.subscribe(answers: [413])
                for subscription in [browser, gone, busy, picky] {
                    let added = try await client.send(
                        .post, "/v1/me/web-push", json: subscription, token: ana.accessToken)
                    #expect(added.status == .noContent, "\(added.text)")
                }
                let bad = try await client.send(
                    .post, "/v1/me/web-push",
                    json: [
                        "endpoint": "http://push.example.com/x",
                        "keys": ["p256dh": String(repeating: "A", count: 87), "auth": "not base64 at all!!!!!"],
                    ],
                    token: ana.accessToken)
                #expect(bad.status == .badRequest)
                #expect(Set(bad.json.fieldErrors) == ["endpoint", "keys.p256dh", "keys.auth"])

                let request = try await client.send(
                    .post, "/v1/me/friend-requests", json: ["userId": ana.user["id"] as? String ?? ""],
                    token: ben.accessToken)
                #expect(request.status == .ok)
                let worker = JobWorker(
                    queue: services.jobs, handlers: services.jobHandlers, kinds: .only([PushJob.kind]),
                    logger: services.logger)
                #expect(try await worker.runOnce() == 1)

                let received = try await stand.messages(browser["endpoint"] as? String ?? "")
                let message = try #require(received.first)
                #expect(message["error"] is NSNull)
                #expect(message["ttl"] as? Int == 86_400)
                #expect(message["urgency"] as? String == "normal")
                #expect((message["topic"] as? String)?.count == 32)
                #expect(
                    (message["vapid"] as? [String: Any])?["sub"] as? String == "mailto:no-reply@localhost.localdomain")
                let payloadText = Data((message["payload"] as? String ?? "").utf8)
                let payload = try #require(try JSONSerialization.jsonObject(with: payloadText) as? [String: Any])
                #expect((payload["body"] as? String)?.contains("ben") == true)
                #expect((payload["notification"] as? [String: Any])?["kind"] as? String == "friendRequest")

                // 410: forgotten. 429: the same browser again, later, alone.
                let left = try await services.push.subscriptions.subscriptions(of: ana.user["id"] as? String ?? "")
                // 413 (this message not taken) keeps the browser.
                #expect(
                    Set(left.map(\.endpoint))
                        == [browser["endpoint"] as? String, busy["endpoint"] as? String, picky["endpoint"] as? String])
                #expect(try await stand.messages(busy["endpoint"] as? String ?? "").count == 1)
                #expect(try await worker.runOnce(now: Date().addingTimeInterval(120)) == 1)
                #expect(try await stand.messages(busy["endpoint"] as? String ?? "").count == 2)
                #expect(try await stand.messages(browser["endpoint"] as? String ?? "").count == 1)

                // Unsubscribed: nothing more.
                let endpoint = browser["endpoint"] as? String ?? ""
                let removed = try await client.send(
                    .delete,
                    "/v1/me/web-push?endpoint=\(endpoint.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
                    token: ana.accessToken)
                #expect(removed.status == .noContent)
                #expect(try await services.push.subscriptions.subscription(endpoint: endpoint) == nil)
            }
        }
    }
}
