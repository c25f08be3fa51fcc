import AsyncHTTPClient
import Foundation
import JWTKit

import struct Crypto.SHA256

/// One configured OpenID Connect provider (Sign in with Apple, Facebook Limited Login, or any issuer with a JWKS).
public struct OIDCProvider: Sendable, Equatable {
    /// Short provider name stored with the linked identity, e.g. "apple", "facebook".
    public var name: String
    /// The exact `iss` value expected in this provider's ID tokens.
    public var issuer: String
    /// Accepted `aud` values (client ids / bundle ids); a token's `aud` must contain at least one of them.
    public var audiences: [String]
    /// Where this provider's JSON Web Key Set comes from.
    public var jwks: Source

    /// The location of a JWKS document.
    public enum Source: Sendable, Equatable {
        /// An `https://` (or, in tests, `http://`) URL fetched with an HTTP GET.
        case url(String)
        /// A path to a local file holding the JWKS JSON.
        case file(String)
    }

    /// Creates a provider from its name, issuer, accepted audiences and key source.
    public init(name: String, issuer: String, audiences: [String], jwks: Source) {
        self.name = name
        self.issuer = issuer
        self.audiences = audiences
        self.jwks = jwks
    }

    /// Sign in with Apple, accepting tokens issued to any of `audiences` (bundle ids / services ids).
    public static func apple(audiences: [String]) -> OIDCProvider {
        OIDCProvider(
            name: "apple", issuer: "https://appleid.apple.com", audiences: audiences,
            jwks: .url("https://appleid.apple.com/auth/keys"))
    }

    /// Facebook Limited Login, accepting tokens issued to any of `audiences` (Facebook app ids).
    public static func facebook(audiences: [String]) -> OIDCProvider {
        OIDCProvider(
            name: "facebook", issuer: "https://www.facebook.com", audiences: audiences,
            jwks: .url("https://limited.facebook.com/.well-known/oauth/openid/jwks/"))
    }
}

/// The verified identity an ID token carries.
public struct OIDCIdentity: Sendable, Equatable {
    /// The ``OIDCProvider/name`` of the provider that issued the token.
    public var provider: String
    /// The provider's stable user identifier (`sub`).
    public var subject: String
    /// The user's e-mail address, if the token carries one.
    public var email: String?
    /// Whether the provider says the e-mail address is verified (`false` when absent).
    public var emailVerified: Bool
    /// The user's display name, if the token carries one.
    public var name: String?
    /// When the token was issued (`iat`), if it says.
    public var issuedAt: Date?

    /// Creates an identity from its parts.
    public init(
        provider: String, subject: String, email: String? = nil, emailVerified: Bool = false, name: String? = nil,
        issuedAt: Date? = nil
    ) {
        self.provider = provider
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
        self.issuedAt = issuedAt
    }
}

/// Why an ID token was rejected.
public enum OIDCError: Error, Equatable, Sendable {
    /// Not a JWT, bad base64url, bad JSON, or a required claim (`iss`, `sub`, `aud`, `exp`) is missing.
    case malformed
    /// The token's `iss` matches no configured provider.
    case unknownIssuer
    /// The header's `alg` is anything other than RS256 or ES256.
    case unsupportedAlgorithm
    /// The header's `kid` is missing or not in the provider's JWKS, even after one refresh.
    case unknownKey
    /// The signature does not verify with the key named by `kid` (or the key does not fit `alg`).
    case badSignature
    /// No `aud` value is one of the provider's audiences.
    case wrongAudience
    /// `exp` is more than 60 s in the past.
    case expired
    /// `iat` or `nbf` is more than 60 s in the future.
    case notYetValid
    /// A nonce was required and the token's `nonce` is missing or different.
    case nonceMismatch
    /// The JWKS could not be fetched or parsed; the message says why.
    case keysUnavailable(String)
}

/// Verifies OpenID Connect ID tokens against configured providers, caching each provider's JWKS.
public actor OIDCVerifier {
    private struct KeySet: Sendable {
        let collection: JWTKeyCollection
        let algorithms: [String: String]  // kid -> "RS256" / "ES256"
        let fetchedAt: ContinuousClock.Instant
    }

    private let providers: [OIDCProvider]
    private let httpClient: HTTPClient
    private let keyLifetime: Duration
    private let refetchCooldown: Duration
    private let clockSkew: TimeInterval = 60
    private var cache: [String: KeySet] = [:]
    private var inFlight: [String: Task<Result<KeySet, OIDCError>, Never>] = [:]

    /// Creates a verifier.
    /// - Parameters:
    ///   - providers: The accepted providers; the first whose ``OIDCProvider/issuer`` equals a token's `iss` is used.
    ///   - httpClient: The client used to fetch URL key sets; the caller owns and shuts it down.
    ///   - keyLifetime: How long a fetched JWKS is used before it is fetched again.
    ///   - refetchCooldown: The minimum time between a JWKS fetch and a refetch triggered by an unknown `kid`.
    public init(
        providers: [OIDCProvider], httpClient: HTTPClient,
        keyLifetime: Duration = .seconds(3600), refetchCooldown: Duration = .seconds(60)
    ) {
        self.providers = providers
        self.httpClient = httpClient
        self.keyLifetime = keyLifetime
        self.refetchCooldown = refetchCooldown
    }

    /// Verifies `idToken`: picks the provider by the (unverified) `iss`, loads that provider's JWKS
    /// (cached for keyLifetime; if the token's kid is missing from the cache, refetch at most once per refetchCooldown —
    /// key rotation), verifies the signature with jwt-kit, then iss, aud, exp, nbf/iat, and nonce.
    ///
    /// Nonce rule: if `nonce` is given, the token's `nonce` claim must equal it, or equal the lowercase hex SHA-256 of it
    /// (Apple's sample code sends the SHA-256 of the raw nonce). If `nonce` is nil and the token carries one, accept.
    /// `email_verified` may be a bool or the string "true"/"false" (Apple sends strings).
    public func verify(idToken: String, nonce: String?, now: Date = Date()) async throws(OIDCError) -> OIDCIdentity {
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Self.base64URLDecode(parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            let payloadData = Self.base64URLDecode(parts[1]),
            let claims = try? JSONDecoder().decode(Claims.self, from: payloadData)
        else { throw .malformed }
        guard header.alg == "RS256" || header.alg == "ES256" else { throw .unsupportedAlgorithm }
        guard let provider = providers.first(where: { $0.issuer == claims.iss }) else { throw .unknownIssuer }
        guard let kid = header.kid else { throw .unknownKey }

        let keys = try await keySet(for: provider, kid: kid)
        guard let keyAlgorithm = keys.algorithms[kid] else { throw .unknownKey }
        guard keyAlgorithm == header.alg else { throw .badSignature }
        do {
            _ = try await keys.collection.verify(idToken, as: Claims.self)
        } catch let error as JWTError where error.errorType == .malformedToken {
            throw .malformed
        } catch {
            throw .badSignature
        }

        guard claims.aud.contains(where: provider.audiences.contains) else { throw .wrongAudience }
        let nowSeconds = now.timeIntervalSince1970
        guard claims.exp + clockSkew >= nowSeconds else { throw .expired }
        for start in [claims.iat, claims.nbf].compactMap({ $0 }) where start > nowSeconds + clockSkew {
            throw .notYetValid
        }
        if let nonce {
            let hashed = SHA256.hash(data: Data(nonce.utf8)).map { String(format: "%02x", $0) }.joined()
            guard let tokenNonce = claims.nonce, tokenNonce == nonce || tokenNonce == hashed else {
                throw .nonceMismatch
            }
        }
        return OIDCIdentity(
            provider: provider.name, subject: claims.sub, email: claims.email,
            emailVerified: claims.emailVerified ?? false, name: claims.name,
            issuedAt: claims.iat.map(Date.init(timeIntervalSince1970:)))
    }

    /// Returns the cached key set when it is fresh and knows `kid` (or was fetched too recently to refetch);
    /// otherwise fetches it, joining a fetch already in flight for the same provider.
    private func keySet(for provider: OIDCProvider, kid: String) async throws(OIDCError) -> KeySet {
        let clock = ContinuousClock()
        if let cached = cache[provider.name], cached.fetchedAt.duration(to: clock.now) < keyLifetime,
            cached.algorithms[kid] != nil || cached.fetchedAt.duration(to: clock.now) < refetchCooldown
        {
            return cached
        }
        if let running = inFlight[provider.name] {
            return try await running.value.get()
        }
        let task = Task { await Self.load(provider.jwks, httpClient: httpClient) }
        inFlight[provider.name] = task
        let result = await task.value
        inFlight[provider.name] = nil
        if case .success(let keys) = result { cache[provider.name] = keys }
        return try result.get()
    }

    /// Reads and parses a JWKS, keeping only RS256 (RSA) and ES256 (EC P-256) keys that have a `kid`.
    private static func load(_ source: OIDCProvider.Source, httpClient: HTTPClient) async -> Result<KeySet, OIDCError> {
        let data: Data
        switch source {
        case .file(let path):
            guard let contents = FileManager.default.contents(atPath: path) else {
                return .failure(.keysUnavailable("cannot read JWKS file \(path)"))
            }
            data = contents
        case .url(let url):
            do {
                var request = HTTPClientRequest(url: url)
                request.headers.add(name: "Accept", value: "application/json")
                let response = try await httpClient.execute(request, timeout: .seconds(10))
                guard response.status == .ok else {
                    return .failure(.keysUnavailable("JWKS \(url) answered HTTP \(response.status.code)"))
                }
                data = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
            } catch {
                return .failure(.keysUnavailable("cannot fetch JWKS \(url): \(error)"))
            }
        }
        guard let jwks = try? JSONDecoder().decode(LenientJWKS.self, from: data) else {
            return .failure(.keysUnavailable("JWKS is not valid JSON with a \"keys\" array"))
        }
        let collection = JWTKeyCollection()
        var algorithms: [String: String] = [:]
        for jwk in jwks.keys.compactMap(\.jwk) {
            guard let kid = jwk.keyIdentifier else { continue }
            do {
                switch (jwk.keyType, jwk.algorithm, jwk.modulus, jwk.exponent, jwk.x, jwk.y) {
                case (.rsa, nil, let n?, let e?, _, _), (.rsa, .rs256?, let n?, let e?, _, _):
                    let key = try Insecure.RSA.PublicKey(modulus: n, exponent: e)
                    await collection.add(rsa: key, digestAlgorithm: .sha256, kid: kid)
                    algorithms[kid.string] = "RS256"
                case (.ecdsa, nil, _, _, let x?, let y?), (.ecdsa, .es256?, _, _, let x?, let y?):
                    guard jwk.curve?.rawValue == "P-256" else { continue }
                    await collection.add(ecdsa: try ES256PublicKey(parameters: (x, y)), kid: kid)
                    algorithms[kid.string] = "ES256"
                default:
                    continue
                }
            } catch {
                continue  // an unusable key is skipped, not fatal
            }
        }
        return .success(KeySet(collection: collection, algorithms: algorithms, fetchedAt: ContinuousClock().now))
    }

    private static func base64URLDecode(_ part: Substring) -> Data? {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// The JOSE header fields the verifier needs.
private struct Header: Decodable {
    var alg: String
    var kid: String?
}

/// A JWKS whose entries jwt-kit cannot decode (e.g. `"kty":"oct"`) become `nil` instead of failing the whole set.
private struct LenientJWKS: Decodable {
    struct Entry: Decodable {
        var jwk: JWK?
        init(from decoder: any Decoder) throws { jwk = try? JWK(from: decoder) }
    }
    var keys: [Entry]
}

/// The ID token claims the verifier checks or returns.
private struct Claims: JWTPayload {
    var iss: String
    var sub: String
    var aud: [String]
    var exp: Double
    var iat: Double?
    var nbf: Double?
    var nonce: String?
    var email: String?
    var emailVerified: Bool?
    var name: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nbf, nonce, email, name
        case emailVerified = "email_verified"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        iss = try c.decode(String.self, forKey: .iss)
        sub = try c.decode(String.self, forKey: .sub)
        if let list = try? c.decode([String].self, forKey: .aud) {
            aud = list
        } else {
            aud = [try c.decode(String.self, forKey: .aud)]
        }
        exp = try c.decode(Double.self, forKey: .exp)
        iat = try c.decodeIfPresent(Double.self, forKey: .iat)
        nbf = try c.decodeIfPresent(Double.self, forKey: .nbf)
        nonce = try c.decodeIfPresent(String.self, forKey: .nonce)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        if let flag = try? c.decodeIfPresent(Bool.self, forKey: .emailVerified) {
            emailVerified = flag
        } else {
            emailVerified = try c.decodeIfPresent(String.self, forKey: .emailVerified).map { $0 == "true" }
        }
    }

    /// Claims are checked by ``OIDCVerifier`` against its own `now`, not by jwt-kit.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
