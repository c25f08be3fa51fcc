import Crypto
import Foundation
import TonightCore

/// The public URLs of stored media (`/v1/media/<key>`), optionally signed so that a CDN can sit in
/// front and only links the server handed out work.
///
/// A signed URL carries `expires` (Unix seconds) and `sig` = base64url(HMAC-SHA256(secret,
/// "<key>\n<expires>")). Expiry times are rounded up to the next whole hour past `ttl`, so the
/// same media has the same URL for an hour at a time and caches (browser, CDN, the feed page
/// cache) keep working.
struct MediaURLs: Sendable {
    /// Prefix of every media URL.
    static let prefix = "/v1/media/"
    private let key: SymmetricKey?
    let ttl: Int

    /// Unsigned URLs when `secret` is empty.
    init(secret: String, ttl: Int) {
        self.key = secret.isEmpty ? nil : SymmetricKey(data: Data(secret.utf8))
        self.ttl = max(60, ttl)
    }

    /// Whether URLs are signed (and unsigned requests refused).
    var signs: Bool { key != nil }

    /// The URL of a blob key.
    func url(for blobKey: String, now: Date = Date()) -> String {
        guard let key else { return Self.prefix + blobKey }
        let seconds = Int(now.timeIntervalSince1970) + ttl
        let expires = (seconds / 3600 + 1) * 3600
        return Self.prefix + blobKey + "?expires=\(expires)&sig=" + Self.signature(blobKey, expires, key)
    }

    /// A stored link as clients get it: our own media paths (`/v1/media/<key>`) signed now,
    /// anything else (an advertiser's https page) as is.
    func resolve(_ link: String, now: Date = Date()) -> String {
        link.hasPrefix(Self.prefix) ? url(for: String(link.dropFirst(Self.prefix.count)), now: now) : link
    }

    /// Whether a request for `blobKey` may be served: always when unsigned; otherwise with a valid,
    /// unexpired signature.
    func allows(_ blobKey: String, expires: String?, sig: String?, now: Date = Date()) -> Bool {
        guard let key else { return true }
        guard let expires, let seconds = Int(expires), let sig, seconds >= Int(now.timeIntervalSince1970) else {
            return false
        }
        let expected = Self.signature(blobKey, seconds, key)
        // Constant-time comparison.
        guard expected.utf8.count == sig.utf8.count else { return false }
        return zip(expected.utf8, sig.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func signature(_ blobKey: String, _ expires: Int, _ key: SymmetricKey) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(blobKey)\n\(expires)".utf8), using: key)
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
