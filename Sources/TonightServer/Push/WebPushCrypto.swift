import Crypto
import Foundation
import Synchronization

/// Message encryption for Web Push (RFC 8291): ECDH on P-256 between a one-off key of ours and
/// the browser's key, HKDF-SHA-256 keyed by the browser's auth secret, one AES-128-GCM record in
/// the `aes128gcm` content coding (RFC 8188). Package-visible for the micro-benchmark
/// (`bench/WebPushBench`).
package enum WebPushCrypto {
    /// Why a subscription's keys cannot be used.
    struct BadKeys: Error, CustomStringConvertible {
        var description: String { "the subscription's p256dh or auth key is not valid" }
    }

    /// The record size written in the header: one record always holds a push (at most 4 kB).
    static let recordSize: UInt32 = 4096

    /// `plaintext` encrypted for the browser whose public key is `p256dh` (uncompressed point)
    /// and auth secret `auth` (16 bytes). `salt` and `serverKey` are fresh unless given (tests).
    package static func encrypt(
        _ plaintext: Data, p256dh: Data, auth: Data, salt: Data? = nil,
        serverKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey()
    ) throws -> Data {
        guard auth.count == 16, let browser = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh) else {
            throw BadKeys()
        }
        let salt = salt ?? Data((0..<16).map { _ in UInt8.random(in: .min ... .max) })
        let serverPublic = serverKey.publicKey.x963Representation
        let shared = try serverKey.sharedSecretFromKeyAgreement(with: browser)
        // IKM = HKDF(auth, ecdh_secret, "WebPush: info" ‖ 0 ‖ ua_public ‖ as_public, 32)
        let keyInfo = Data("WebPush: info".utf8) + [0] + browser.x963Representation + serverPublic
        let ikm = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        let cek = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0],
            outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // One record, its delimiter 2 (the last record), no padding.
        let sealed = try AES.GCM.seal(
            plaintext + [2], using: cek, nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }))
        var header = salt
        withUnsafeBytes(of: recordSize.bigEndian) { header.append(contentsOf: $0) }
        header.append(UInt8(serverPublic.count))
        header.append(serverPublic)
        return header + sealed.ciphertext + sealed.tag
    }
}

/// The server's identity towards push services (RFC 8292): a P-256 key whose public half is the
/// browsers' `applicationServerKey`, and short-lived ES256 JWTs naming each push service's origin.
///
/// A token is signed once per push service origin and reused until it has less than
/// ``renewal`` left of its 12 hours (signing cost about 170 µs, as much as encrypting the message;
/// a fan-out to thousands of browsers reaches a handful of origins).
package struct VAPID: Sendable {
    let key: P256.Signing.PrivateKey
    /// A contact for push services: `mailto:` or `https:`.
    let subject: String
    /// How long a token is valid.
    static let lifetime = 12 * 3600
    /// A cached token is signed again once less than this is left of it.
    static let renewal = 6 * 3600
    private let tokens = TokenCache()

    /// The identity of `key`, with `subject` as the contact.
    package init(key: P256.Signing.PrivateKey, subject: String) {
        self.key = key
        self.subject = subject
    }

    /// The public key as browsers take it: uncompressed, base64url.
    var publicKey: String { Base64URL.encode(key.publicKey.x963Representation) }

    /// The `Authorization` header for a push to `endpoint`'s origin: the cached one while it has
    /// more than ``renewal`` left, else a newly signed one valid ``lifetime``.
    package func authorization(for endpoint: URL, now: Date = Date()) throws -> String {
        let origin = try Self.origin(of: endpoint)
        let seconds = Int(now.timeIntervalSince1970)
        if let cached = tokens.token(for: origin, validPast: seconds + Self.renewal) { return cached }
        let header = try signed(origin: origin, expiry: seconds + Self.lifetime)
        tokens.keep(header, for: origin, expiry: seconds + Self.lifetime)
        return header
    }

    /// A newly signed header for `endpoint`'s origin, never the cached one (the micro-benchmark's
    /// measure of signing).
    package func signedAuthorization(for endpoint: URL, now: Date = Date()) throws -> String {
        try signed(origin: try Self.origin(of: endpoint), expiry: Int(now.timeIntervalSince1970) + Self.lifetime)
    }

    /// The origin as push services compare it: lower case, no default port.
    private static func origin(of endpoint: URL) throws -> String {
        guard let scheme = endpoint.scheme?.lowercased(), let host = endpoint.host?.lowercased() else {
            throw WebPushCrypto.BadKeys()
        }
        let port = endpoint.port.flatMap {
            ($0 == 443 && scheme == "https") || ($0 == 80 && scheme == "http") ? nil : $0
        }
        return "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }

    private func signed(origin: String, expiry: Int) throws -> String {
        let header = Base64URL.encode(Data(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        let claims = try JSONSerialization.data(
            withJSONObject: ["aud": origin, "exp": expiry, "sub": subject],
            options: [.sortedKeys, .withoutEscapingSlashes])
        let input = header + "." + Base64URL.encode(claims)
        let signature = try key.signature(for: Data(input.utf8)).rawRepresentation
        return "vapid t=\(input).\(Base64URL.encode(signature)), k=\(publicKey)"
    }

    /// Signed headers by origin, shared by the copies of one ``VAPID``; at most ``capacity``
    /// origins (then it starts over), since the origins come from subscriptions clients wrote.
    private final class TokenCache: Sendable {
        static let capacity = 256
        private let tokens = Mutex<[String: (header: String, expiry: Int)]>([:])

        func token(for origin: String, validPast time: Int) -> String? {
            tokens.withLock { $0[origin].flatMap { $0.expiry > time ? $0.header : nil } }
        }

        func keep(_ header: String, for origin: String, expiry: Int) {
            tokens.withLock {
                if $0.count >= Self.capacity { $0.removeAll() }
                $0[origin] = (header, expiry)
            }
        }
    }

    /// The key from `configured` (base64url of the raw 32-byte private key, or a PEM), else the
    /// key file `vapid.key` in `dataDirectory`, created on first run (as the signing key is).
    static func loadKey(configured: String, dataDirectory: String) throws -> P256.Signing.PrivateKey {
        if !configured.isEmpty {
            if configured.contains("-----BEGIN") { return try P256.Signing.PrivateKey(pemRepresentation: configured) }
            guard let raw = Base64URL.decode(configured.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw ConfigurationError("web.push.vapid.key must be base64url of a P-256 private key, or a PEM")
            }
            return try P256.Signing.PrivateKey(rawRepresentation: raw)
        }
        let path = dataDirectory + "/vapid.key"
        if let stored = try? String(contentsOfFile: path, encoding: .utf8) {
            return try P256.Signing.PrivateKey(pemRepresentation: stored)
        }
        let key = P256.Signing.PrivateKey()
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        else { throw ConfigurationError("cannot write \(path)") }
        return key
    }
}
