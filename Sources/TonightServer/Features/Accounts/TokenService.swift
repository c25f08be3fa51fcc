import Crypto
import Foundation
import JWTKit
import Synchronization

/// Issues and verifies access tokens (HS256 JWTs, short-lived) and makes opaque refresh tokens.
public struct TokenService: Sendable {
    private let keys: JWTKeyCollection
    private let verified = VerifiedTokens()
    /// Access token lifetime in seconds.
    public let accessTTL: Int

    /// The claims of an access token.
    struct AccessClaims: JWTPayload {
        var sub: SubjectClaim
        var sid: String
        var role: String
        var anon: Bool
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {
            try exp.verifyNotExpired()
            guard iss.value == TokenService.issuer else {
                throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "wrong issuer")
            }
        }
    }

    static let issuer = "tonight"

    /// Creates the service with a symmetric key (at least 32 bytes).
    public init(key: [UInt8], accessTTL: Int) async {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(key: SymmetricKey(data: key)), digestAlgorithm: .sha256)
        self.keys = keys
        self.accessTTL = accessTTL
    }

    /// A signed access token for `principal`, valid for ``accessTTL`` seconds from `now`.
    public func accessToken(for principal: Principal, now: Date = Date()) async throws -> String {
        let claims = AccessClaims(
            sub: .init(value: principal.userID), sid: principal.loginID, role: principal.role.rawValue,
            anon: principal.isAnonymous, iss: .init(value: Self.issuer), iat: .init(value: now),
            exp: .init(value: now.addingTimeInterval(TimeInterval(accessTTL))))
        return try await keys.sign(claims)
    }

    /// The principal of a valid access token, or `nil` if the token is malformed, tampered with,
    /// expired, or uses another algorithm (including `none`).
    ///
    /// Verified tokens are remembered until they expire, so a client's repeated requests skip the
    /// signature check (jwt-kit's key collection is an actor, which serialised every request).
    public func verify(_ token: String, now: Date = Date()) async -> Principal? {
        if let principal = verified.lookup(token, now: now) { return principal }
        guard let claims = try? await keys.verify(token, as: AccessClaims.self),
            let role = Role(rawValue: claims.role), claims.exp.value > now
        else { return nil }
        let principal = Principal(
            userID: claims.sub.value, loginID: claims.sid, role: role, isAnonymous: claims.anon)
        verified.remember(token, principal: principal, expiresAt: claims.exp.value)
        return principal
    }

    /// A new opaque refresh token (256 random bits, base64url) and the hash to store.
    public static func makeRefreshToken() -> (token: String, hash: String) {
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        let token = Base64URL.encode(bytes)
        return (token, hash(token))
    }

    /// Whether `token` has the shape of one of ours (43 base64url characters).
    public static func looksLikeRefreshToken(_ token: String) -> Bool {
        token.utf8.count == 43
            && token.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                    || byte == 0x2d || byte == 0x5f
            }
    }

    /// SHA-256 of a token, hex: what the database stores instead of the token.
    public static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The signing key: `configured` (base64) if set, else the key file in `dataDirectory`,
    /// created with 32 random bytes on first run.
    public static func loadKey(configured: String, dataDirectory: String) throws -> [UInt8] {
        if !configured.isEmpty {
            guard let data = Data(base64Encoded: configured), data.count >= 32 else {
                throw ConfigurationError("jwt.key must be base64 of at least 32 bytes")
            }
            return [UInt8](data)
        }
        let path = URL(fileURLWithPath: dataDirectory).appendingPathComponent("jwt.key").path
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
            let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), data.count >= 32
        {
            return [UInt8](data)
        }
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        FileManager.default.createFile(
            atPath: path, contents: Data((Data(bytes).base64EncodedString() + "\n").utf8),
            attributes: [.posixPermissions: 0o600])
        return bytes
    }
}

/// A configuration value that cannot be used.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A bounded memory of tokens whose signature was already checked, with their expiry.
final class VerifiedTokens: Sendable {
    private let entries = Mutex<[String: (principal: Principal, expiresAt: Date)]>([:])
    private let capacity = 50_000

    func lookup(_ token: String, now: Date) -> Principal? {
        entries.withLock { entries in
            guard let entry = entries[token] else { return nil }
            if entry.expiresAt <= now {
                entries[token] = nil
                return nil
            }
            return entry.principal
        }
    }

    func remember(_ token: String, principal: Principal, expiresAt: Date) {
        entries.withLock { entries in
            if entries.count >= capacity {
                let now = Date()
                entries = entries.filter { $0.value.expiresAt > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[token] = (principal, expiresAt)
        }
    }
}
