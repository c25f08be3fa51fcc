import AsyncHTTPClient
import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import JWTKit
import Synchronization
import Testing

@testable import TonightServer

private typealias RSAPrivateKey = JWTKit.Insecure.RSA.PrivateKey

// MARK: - Fixtures

private let issuer = "https://issuer.example"
private let audience = "com.example.app"
private let now = Date(timeIntervalSince1970: 1_800_000_000)

/// A JSON value for building arbitrary claim sets.
private enum Flex: Codable, Sendable {
    case s(String), b(Bool), n(Double), a([String])

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .s(let v): try c.encode(v)
        case .b(let v): try c.encode(v)
        case .n(let v): try c.encode(v)
        case .a(let v): try c.encode(v)
        }
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let v = try? c.decode(Bool.self) {
            self = .b(v)
        } else if let v = try? c.decode(Double.self) {
            self = .n(v)
        } else if let v = try? c.decode(String.self) {
            self = .s(v)
        } else {
            self = .a(try c.decode([String].self))
        }
    }
}

private struct TestPayload: JWTPayload {
    var claims: [String: Flex]
    init(_ claims: [String: Flex]) { self.claims = claims }
    init(from decoder: any Decoder) throws { claims = try decoder.singleValueContainer().decode([String: Flex].self) }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(claims)
    }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

private func claims(_ overrides: [String: Flex?] = [:]) -> [String: Flex] {
    var c: [String: Flex] = [
        "iss": .s(issuer), "sub": .s("user-1"), "aud": .s(audience),
        "iat": .n(now.timeIntervalSince1970), "exp": .n(now.timeIntervalSince1970 + 600),
        "email": .s("a@example.com"), "email_verified": .s("true"), "name": .s("Ann"),
    ]
    for (key, value) in overrides { c[key] = value }
    return c
}

private let expectedIdentity = OIDCIdentity(
    provider: "example", subject: "user-1", email: "a@example.com", emailVerified: true, name: "Ann", issuedAt: now)

private func base64URL(_ data: some DataProtocol) -> String {
    Data(data).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

private func makeRSAKey() throws -> RSAPrivateKey {
    try RSAPrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
}

private func rsaJWK(_ key: RSAPrivateKey, kid: String) throws -> [String: String] {
    let (n, e) = try key.publicKey.getKeyPrimitives()
    return ["kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "n": base64URL(n), "e": base64URL(e)]
}

private func ecJWK(_ key: ES256PrivateKey, kid: String) throws -> [String: String] {
    let p = try #require(key.parameters)
    return ["kty": "EC", "kid": kid, "crv": "P-256", "x": p.x, "y": p.y]  // no "alg": inferred as ES256
}

/// A JWKS document; always includes a symmetric key that the verifier must skip.
private func jwksJSON(_ keys: [[String: String]]) throws -> String {
    let all = keys + [["kty": "oct", "kid": "sym", "k": "c2VjcmV0"]]
    return String(decoding: try JSONEncoder().encode(["keys": all]), as: UTF8.self)
}

private func sign(_ claims: [String: Flex], rsa key: RSAPrivateKey, kid: String) async throws -> String {
    let keys = JWTKeyCollection()
    await keys.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
    return try await keys.sign(TestPayload(claims), kid: JWKIdentifier(string: kid))
}

private func sign(_ claims: [String: Flex], ec key: ES256PrivateKey, kid: String) async throws -> String {
    let keys = JWTKeyCollection()
    await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
    return try await keys.sign(TestPayload(claims), kid: JWKIdentifier(string: kid))
}

private func writeTempFile(_ contents: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID().uuidString).json").path
    try contents.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

private func provider(_ source: OIDCProvider.Source) -> OIDCProvider {
    OIDCProvider(name: "example", issuer: issuer, audiences: ["other.app", audience], jwks: source)
}

/// An RSA key, its file-backed verifier, and a signer for tokens under kid "rsa-1".
private struct FileFixture {
    fileprivate let key: RSAPrivateKey
    let verifier: OIDCVerifier

    init() throws {
        key = try makeRSAKey()
        let path = try writeTempFile(try jwksJSON([try rsaJWK(key, kid: "rsa-1")]))
        verifier = OIDCVerifier(providers: [provider(.file(path))], httpClient: .shared)
    }

    func token(_ overrides: [String: Flex?] = [:]) async throws -> String {
        try await sign(claims(overrides), rsa: key, kid: "rsa-1")
    }

    func error(_ token: String, nonce: String? = nil) async -> OIDCError? {
        do {
            _ = try await verifier.verify(idToken: token, nonce: nonce, now: now)
            return nil
        } catch {
            return error
        }
    }
}

// MARK: - JWKS test server

/// What the test server answers, and how many JWKS requests it has seen.
private final class ServerState: Sendable {
    struct Value { var status = 200; var body = ""; var requests = 0; var delay: Duration = .zero }
    let value = Mutex(Value())
    var requests: Int { value.withLock { $0.requests } }
    func serve(_ body: String, status: Int = 200) {
        value.withLock {
            $0.body = body; $0.status = status
        }
    }
}

/// Runs a Hummingbird app on 127.0.0.1 (ephemeral port) serving `GET /jwks`, and calls `body` with its URL.
private func withJWKSServer<T: Sendable>(
    _ state: ServerState, _ body: @Sendable (String) async throws -> T
) async throws -> T {
    let router = Router()
    router.get("jwks") { _, _ -> Response in
        let answer = state.value.withLock { value in
            value.requests += 1
            return value
        }
        try await Task.sleep(for: answer.delay)
        return Response(
            status: .init(code: answer.status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: answer.body)))
    }
    return try await withLocalServer(router) { port in try await body("http://127.0.0.1:\(port)/jwks") }
}

// MARK: - Tests

@Suite("OpenID Connect ID token verification")
struct OIDCVerifierTests {
    @Test func validRS256TokenFromFileJWKS() async throws {
        let f = try FileFixture()
        let identity = try await f.verifier.verify(idToken: try await f.token(), nonce: nil, now: now)
        #expect(identity == expectedIdentity)
    }

    @Test func validES256TokenFromHTTPJWKS() async throws {
        let key = ES256PrivateKey()
        let state = ServerState()
        state.serve(try jwksJSON([try ecJWK(key, kid: "ec-1")]))
        let token = try await sign(
            claims(["aud": .a(["someone.else", audience]), "email_verified": .b(false)]), ec: key, kid: "ec-1")
        let identity = try await withJWKSServer(state) { url in
            let verifier = OIDCVerifier(providers: [provider(.url(url))], httpClient: .shared)
            return try await verifier.verify(idToken: token, nonce: nil, now: now)
        }
        var expected = expectedIdentity
        expected.emailVerified = false
        #expect(identity == expected)
        #expect(state.requests == 1)
    }

    @Test func wrongAudienceIsRejected() async throws {
        let f = try FileFixture()
        #expect(await f.error(try await f.token(["aud": .a(["not.ours"])])) == .wrongAudience)
    }

    @Test func expiredTokenIsRejectedButSkewIsAllowed() async throws {
        let f = try FileFixture()
        #expect(await f.error(try await f.token(["exp": .n(now.timeIntervalSince1970 - 61)])) == .expired)
        #expect(await f.error(try await f.token(["exp": .n(now.timeIntervalSince1970 - 30)])) == nil)
    }

    @Test func notYetValidTokenIsRejected() async throws {
        let f = try FileFixture()
        #expect(await f.error(try await f.token(["iat": .n(now.timeIntervalSince1970 + 120)])) == .notYetValid)
        #expect(await f.error(try await f.token(["nbf": .n(now.timeIntervalSince1970 + 120)])) == .notYetValid)
        #expect(await f.error(try await f.token(["nbf": .n(now.timeIntervalSince1970 + 30)])) == nil)
    }

    @Test func tokenSignedByAnotherKeyWithSameKidIsRejected() async throws {
        let f = try FileFixture()
        let forged = try await sign(claims(), rsa: try makeRSAKey(), kid: "rsa-1")
        #expect(await f.error(forged) == .badSignature)
    }

    @Test func tamperedPayloadIsRejected() async throws {
        let f = try FileFixture()
        let parts = try await f.token().split(separator: ".").map(String.init)
        let evil = base64URL(try JSONEncoder().encode(TestPayload(claims(["sub": .s("admin")]))))
        #expect(await f.error([parts[0], evil, parts[2]].joined(separator: ".")) == .badSignature)
    }

    @Test func algNoneIsRejected() async throws {
        let f = try FileFixture()
        let header = base64URL(Data(#"{"alg":"none","kid":"rsa-1","typ":"JWT"}"#.utf8))
        let payload = base64URL(try JSONEncoder().encode(TestPayload(claims())))
        #expect(await f.error("\(header).\(payload).") == .unsupportedAlgorithm)
    }

    @Test func hs256TokenIsRejected() async throws {
        let f = try FileFixture()
        let keys = JWTKeyCollection()
        await keys.add(hmac: "0123456789abcdef0123456789abcdef", digestAlgorithm: .sha256, kid: "rsa-1")
        let token = try await keys.sign(TestPayload(claims()), kid: "rsa-1")
        #expect(await f.error(token) == .unsupportedAlgorithm)
    }

    @Test func unknownIssuerUnknownKidAndGarbageAreRejected() async throws {
        let f = try FileFixture()
        #expect(await f.error(try await f.token(["iss": .s("https://evil.example")])) == .unknownIssuer)
        #expect(await f.error(try await sign(claims(), rsa: f.key, kid: "rsa-2")) == .unknownKey)
        #expect(await f.error("not-a-jwt") == .malformed)
        #expect(await f.error("a.b.c") == .malformed)
    }

    @Test func nonceRules() async throws {
        let f = try FileFixture()
        let withNonce = try await f.token(["nonce": .s("n-123")])
        #expect(await f.error(withNonce, nonce: "n-123") == nil)
        #expect(await f.error(withNonce, nonce: "n-456") == .nonceMismatch)
        #expect(await f.error(withNonce, nonce: nil) == nil)
        #expect(await f.error(try await f.token(), nonce: "n-123") == .nonceMismatch)
    }

    @Test func nonceEqualToSHA256HexOfGivenNonceIsAccepted() async throws {
        let f = try FileFixture()
        let hex = SHA256.hash(data: Data("raw-nonce".utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(await f.error(try await f.token(["nonce": .s(hex)]), nonce: "raw-nonce") == nil)
        #expect(await f.error(try await f.token(["nonce": .s(hex.uppercased())]), nonce: "raw-nonce") == .nonceMismatch)
    }

    @Test func keyRotationRefetchesJWKS() async throws {
        let (oldKey, newKey) = (try makeRSAKey(), try makeRSAKey())
        let state = ServerState()
        state.serve(try jwksJSON([try rsaJWK(oldKey, kid: "old")]))
        let oldToken = try await sign(claims(), rsa: oldKey, kid: "old")
        let newToken = try await sign(claims(), rsa: newKey, kid: "new")
        try await withJWKSServer(state) { url in
            // Default cooldown: an unknown kid right after a fetch does not refetch.
            let patient = OIDCVerifier(providers: [provider(.url(url))], httpClient: .shared)
            #expect(try await patient.verify(idToken: oldToken, nonce: nil, now: now) == expectedIdentity)
            #expect(await OIDCVerifierTestsHelpers.error(patient, newToken) == .unknownKey)
            #expect(state.requests == 1)

            let verifier = OIDCVerifier(providers: [provider(.url(url))], httpClient: .shared, refetchCooldown: .zero)
            #expect(try await verifier.verify(idToken: oldToken, nonce: nil, now: now) == expectedIdentity)
            #expect(state.requests == 2)
            state.serve(try jwksJSON([try rsaJWK(newKey, kid: "new")]))
            #expect(try await verifier.verify(idToken: newToken, nonce: nil, now: now) == expectedIdentity)
            #expect(state.requests == 3)
            #expect(try await verifier.verify(idToken: newToken, nonce: nil, now: now) == expectedIdentity)
            #expect(state.requests == 3)  // cached
        }
    }

    @Test func concurrentVerificationsFetchJWKSOnce() async throws {
        let key = try makeRSAKey()
        let state = ServerState()
        state.serve(try jwksJSON([try rsaJWK(key, kid: "rsa-1")]))
        state.value.withLock { $0.delay = .milliseconds(200) }
        let token = try await sign(claims(), rsa: key, kid: "rsa-1")
        let identities = try await withJWKSServer(state) { url in
            let verifier = OIDCVerifier(providers: [provider(.url(url))], httpClient: .shared)
            return try await withThrowingTaskGroup(of: OIDCIdentity.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await verifier.verify(idToken: token, nonce: nil, now: now) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(identities.count == 50)
        #expect(identities.allSatisfy { $0 == expectedIdentity })
        #expect(state.requests == 1)
    }

    @Test func serverErrorGivesKeysUnavailable() async throws {
        let key = try makeRSAKey()
        let state = ServerState()
        state.serve("oops", status: 500)
        let token = try await sign(claims(), rsa: key, kid: "rsa-1")
        let error = try await withJWKSServer(state) { url in
            await OIDCVerifierTestsHelpers.error(
                OIDCVerifier(providers: [provider(.url(url))], httpClient: .shared), token)
        }
        guard case .keysUnavailable(let message) = error else {
            Issue.record("expected keysUnavailable, got \(String(describing: error))")
            return
        }
        #expect(message.contains("500"))
    }

    @Test func wellKnownProviders() {
        let apple = OIDCProvider.apple(audiences: ["com.example.app"])
        #expect(apple.issuer == "https://appleid.apple.com")
        #expect(apple.jwks == .url("https://appleid.apple.com/auth/keys"))
        let facebook = OIDCProvider.facebook(audiences: ["1234"])
        #expect(facebook.issuer == "https://www.facebook.com")
        #expect(facebook.jwks == .url("https://limited.facebook.com/.well-known/oauth/openid/jwks/"))
        #expect(facebook.name == "facebook" && facebook.audiences == ["1234"])
    }

    private enum OIDCVerifierTestsHelpers {
        static func error(_ verifier: OIDCVerifier, _ token: String) async -> OIDCError? {
            do {
                _ = try await verifier.verify(idToken: token, nonce: nil, now: now)
                return nil
            } catch {
                return error
            }
        }
    }
}

/// `POST /v1/auth/oidc` on the real application, with a provider whose keys are in a file.
@Suite("Sign in with an ID token")
struct OIDCRouteTests {
    fileprivate let key: RSAPrivateKey
    let jwksPath: String

    init() throws {
        key = try makeRSAKey()
        jwksPath = try writeTempFile(try jwksJSON([try rsaJWK(key, kid: "rsa-1")]))
    }

    func configure(_ config: inout AppConfig) {
        config.oidcIssuer = issuer
        config.oidcAudiences = [audience]
        config.oidcJWKS = jwksPath
        config.oidcName = "example"
    }

    /// A token valid now for `subject`, with claim overrides.
    fileprivate func token(_ subject: String, _ overrides: [String: Flex?] = [:]) async throws -> String {
        let current = Date().timeIntervalSince1970
        var all: [String: Flex?] = ["sub": .s(subject), "iat": .n(current), "exp": .n(current + 600)]
        for (key, value) in overrides { all[key] = value }
        return try await sign(claims(all), rsa: key, kid: "rsa-1")
    }

    @Test("a new identity gets an account; signing in again reaches the same one", arguments: Backend.available)
    func newAccount(backend: Backend) async throws {
        try await withApp(backend, configure: configure) { _, client in
            let first = try await client.send(
                .post, "/v1/auth/oidc",
                json: ["idToken": try await token("sub-1", ["nonce": .s("n-1")]), "nonce": "n-1"])
            #expect(first.status == .created, "\(first.text)")
            let user = first.json.user
            #expect(user["username"] as? String == "ann")
            #expect(user["displayName"] as? String == "Ann")
            #expect(user["email"] as? String == "a@example.com")
            let me = try await client.send(.get, "/v1/me", token: first.json.accessToken)
            #expect(me.json["id"] as? String == user["id"] as? String)

            let again = try await client.send(.post, "/v1/auth/oidc", json: ["idToken": try await token("sub-1")])
            #expect(again.status == .ok)
            #expect(again.json.user["id"] as? String == user["id"] as? String)
            // Another person called Ann gets another username; an unverified email is not taken over.
            let other = try await client.send(
                .post, "/v1/auth/oidc", json: ["idToken": try await token("sub-2", ["email_verified": .s("false")])])
            #expect(other.status == .created)
            #expect(other.json.user["id"] as? String != user["id"] as? String)
            #expect((other.json.user["username"] as? String)?.hasPrefix("ann") == true)
            #expect(other.json.user["username"] as? String != "ann")
            #expect(other.json.user["email"] == nil)
        }
    }

    /// Failed before: an account signed up with someone else's address (and its maker's password)
    /// took over the address owner's first provider sign-in.
    @Test("a provider-verified email joins only an account that verified that address", arguments: Backend.available)
    func joinsOnlyVerifiedAccounts(backend: Backend) async throws {
        try await withApp(backend, configure: configure) { services, client in
            _ = try await client.send(
                .post, "/v1/auth/signup",
                json: ["username": "squatter", "email": "a@example.com", "password": "a long enough passphrase"])
            let first = try await client.send(.post, "/v1/auth/oidc", json: ["idToken": try await token("sub-30")])
            #expect(first.status == .created, "\(first.text)")
            #expect(first.json.user["username"] as? String != "squatter")
            #expect(first.json.user["email"] == nil)

            _ = try await client.send(
                .post, "/v1/auth/signup",
                json: ["username": "owner", "email": "b@example.com", "password": "a long enough passphrase"])
            try await services.database.sql.raw(
                "UPDATE users SET email_verified_at = 1 WHERE username_key = 'owner'"
            ).run()
            let joined = try await client.send(
                .post, "/v1/auth/oidc", json: ["idToken": try await token("sub-31", ["email": .s("b@example.com")])])
            #expect(joined.status == .ok, "\(joined.text)")
            #expect(joined.json.user["username"] as? String == "owner")
        }
    }

    @Test(
        "an account without a password is deleted with a fresh ID token of its own identity only",
        arguments: Backend.available)
    func deleteWithIDToken(backend: Backend) async throws {
        try await withApp(backend, configure: configure) { _, client in
            let signedIn = try await client.send(.post, "/v1/auth/oidc", json: ["idToken": try await token("sub-9")])
            let access = signedIn.json.accessToken
            let other = ["email": Flex.s("b@example.com")]
            _ = try await client.send(.post, "/v1/auth/oidc", json: ["idToken": try await token("sub-10", other)])
            let now = Date().timeIntervalSince1970
            let refusals: [JSON] = [
                [:],  // no confirmation: 400
                ["password": "anything"],  // it has no password: still 400, the ID token is asked for
                ["idToken": try await token("sub-10", other)],  // another account's identity
                ["idToken": try await token("sub-9", ["iat": .n(now - 1200)])],  // an old sign-in
                ["idToken": "not-a-token"],
            ]
            for body in refusals {
                let refused = try await client.send(.delete, "/v1/me", json: body, token: access)
                #expect(refused.status == .badRequest || refused.status == .unauthorized, "\(body): \(refused.text)")
            }
            #expect(try await client.send(.get, "/v1/me", token: access).status == .ok)
            let deleted = try await client.send(
                .delete, "/v1/me", json: ["idToken": try await token("sub-9")], token: access)
            #expect(deleted.status == .noContent, "\(deleted.text)")
            #expect(try await client.send(.get, "/v1/me", token: access).status == .unauthorized)
        }
    }

    @Test("refused tokens: wrong audience, expired, bad signature, wrong nonce", arguments: Backend.available)
    func refused(backend: Backend) async throws {
        try await withApp(backend, configure: configure) { services, client in
            let impostor = try makeRSAKey()
            let forged = try await sign(
                claims(["iat": .n(Date().timeIntervalSince1970), "exp": .n(Date().timeIntervalSince1970 + 600)]),
                rsa: impostor, kid: "rsa-1")
            let cases: [(String, String?)] = [
                (try await token("x", ["aud": .s("someone.else")]), nil),
                (try await token("x", ["exp": .n(Date().timeIntervalSince1970 - 3600)]), nil),
                (forged, nil),
                (try await token("x", ["nonce": .s("expected")]), "other"),
                ("not-a-token", nil),
            ]
            for (idToken, nonce) in cases {
                var body: JSON = ["idToken": idToken]
                if let nonce { body["nonce"] = nonce }
                let response = try await client.send(.post, "/v1/auth/oidc", json: body)
                #expect(response.status == .unauthorized, "\(response.text)")
                #expect(response.json["code"] as? String == "invalid_id_token")
            }
            #expect(try await rowCount("identities", in: services) == 0)
            let signedUp = try await rowCount("users", in: services)
            #expect(signedUp == 0)
        }
    }

    @Test("linking: a member's token links the identity, a device becomes the account", arguments: Backend.available)
    func linking(backend: Backend) async throws {
        try await withApp(backend, configure: configure) { _, client in
            let member = try await client.signUp("pia")
            let linked = try await client.send(
                .post, "/v1/auth/oidc", json: ["idToken": try await token("sub-pia")], token: member.accessToken)
            #expect(linked.status == .ok, "\(linked.text)")
            #expect(linked.json.user["id"] as? String == member.user["id"] as? String)
            let later = try await client.send(.post, "/v1/auth/oidc", json: ["idToken": try await token("sub-pia")])
            #expect(later.json.user["username"] as? String == "pia")
            // The same identity cannot be linked to a second account.
            let other = try await client.signUp("quinn")
            let taken = try await client.send(
                .post, "/v1/auth/oidc", json: ["idToken": try await token("sub-pia")], token: other.accessToken)
            #expect(taken.status == .conflict)

            let device = try await client.send(.post, "/v1/auth/anonymous").json
            let upgraded = try await client.send(
                .post, "/v1/auth/oidc",
                json: ["idToken": try await token("sub-device", ["email": nil, "name": .s("Dev Ice")])],
                token: device.accessToken)
            #expect(upgraded.status == .created, "\(upgraded.text)")
            #expect(upgraded.json.user["id"] as? String == device.user["id"] as? String)
            #expect(upgraded.json.user["isAnonymous"] as? Bool == false)
            #expect(upgraded.json.user["username"] as? String == "device")
        }
    }
}
