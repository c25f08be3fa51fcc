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
///
/// Media of a post hidden from the public (flagged until a moderator decides, or by a banned
/// author) is served only through a *review* link, signed whatever media signing says: `expires`
/// and `review` = base64url(HMAC-SHA256(review key, "review\n<key>\n<expires>")). Only the people
/// who still see such a post (its author and moderators) get its links.
struct MediaURLs: Sendable {
    /// Prefix of every media URL.
    static let prefix = "/v1/media/"
    private let key: SymmetricKey?
    private let reviewKey: SymmetricKey
    let ttl: Int

    /// Unsigned URLs when `secret` is empty. Review links are signed with a key derived from
    /// `reviewSecret` (the server's token key), or a random one that lasts this process.
    init(secret: String, ttl: Int, reviewSecret: [UInt8]? = nil) {
        self.key = secret.isEmpty ? nil : SymmetricKey(data: Data(secret.utf8))
        self.reviewKey =
            reviewSecret.map {
                SymmetricKey(
                    data: Data(
                        HMAC<SHA256>.authenticationCode(for: Data("media review".utf8), using: SymmetricKey(data: $0))))
            } ?? SymmetricKey(size: .bits256)
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

    /// A review link to `blobKey` (see the type's documentation).
    func reviewURL(for blobKey: String, now: Date = Date()) -> String {
        let expires = Int(now.timeIntervalSince1970) + ttl
        return Self.prefix + blobKey + "?expires=\(expires)&review="
            + Self.signature("review\n\(blobKey)", expires, reviewKey)
    }

    /// Whether the request carries a valid, unexpired review link to `blobKey`.
    func allowsReview(_ blobKey: String, expires: String?, review: String?, now: Date = Date()) -> Bool {
        Self.verify(review, for: "review\n\(blobKey)", expires: expires, key: reviewKey, now: now)
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
        return Self.verify(sig, for: blobKey, expires: expires, key: key, now: now)
    }

    private static func verify(_ sig: String?, for subject: String, expires: String?, key: SymmetricKey, now: Date)
        -> Bool
    {
        guard let expires, let seconds = Int(expires), let sig, seconds >= Int(now.timeIntervalSince1970) else {
            return false
        }
        let expected = Self.signature(subject, seconds, key)
        // Constant-time comparison.
        guard expected.utf8.count == sig.utf8.count else { return false }
        return zip(expected.utf8, sig.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func signature(_ subject: String, _ expires: Int, _ key: SymmetricKey) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(subject)\n\(expires)".utf8), using: key)
        return Base64URL.encode(Data(mac))
    }
}
