import Foundation
import Hummingbird
import NIOCore
import Synchronization
import TonightCore

/// `GET`/`HEAD /v1/media/<key>`: stored media, straight from the blob store.
///
/// Local store: the file is streamed from disk with `Range` (one range, 206; 416 out of range;
/// `If-Range` honoured), a strong `ETag` (size and modification time), `Last-Modified`,
/// `If-None-Match` (304) and a long `Cache-Control`, since a key's bytes never change. S3: a
/// redirect (302) to a presigned URL, and S3 does the rest. With media signing on, a request
/// needs the `expires` and `sig` the API handed out (403 otherwise), except for profile photos
/// (``ProfilePhotos``) and catalogue images (``RemoteImages``), which are as public as profiles.
///
/// A post's media is public only while the post is: while it is hidden by flags, removed, or its
/// author is banned, only a review link (``MediaURLs/reviewURL(for:)``) serves it, and a plain
/// link answers 404 within a second on every instance (a post's state is read at most once a
/// second per instance: a clip plays as a burst of range requests, and a read for each halved
/// the throughput). Copies already in a CDN or browser cache stay there until they expire: with a
/// CDN, sign media so they do.
struct MediaRoutes: Sendable {
    let blobs: any BlobStore
    let urls: MediaURLs
    /// Whether post `id`'s media is hidden from the public.
    let hiddenPost: @Sendable (String) async throws -> Bool
    /// Recent answers of ``hiddenPost``.
    let recent = RecentAnswers(ttl: .seconds(1))
    /// Hot files in memory (nil: every request reads the disk).
    let memory: MediaMemoryCache?
    let fileIO = FileIO()

    func register(on router: Router<AppRequestContext>) {
        router.get("/v1/media/**") { request, context in try await self.serve(request, context, head: false) }
        router.head("/v1/media/**") { request, context in try await self.serve(request, context, head: true) }
    }

    private func serve(_ request: Request, _ context: AppRequestContext, head: Bool) async throws -> Response {
        let key = context.parameters.getCatchAll().joined(separator: "/")
        guard
            key.hasPrefix("posts/") || key.hasPrefix("ads/") || key.hasPrefix(ProfilePhotos.folder)
                || key.hasPrefix(RemoteImages.folder),
            BlobKey.isValid(key)
        else {
            throw APIError.notFound("No such media.")
        }
        let query = request.uri.queryParameters
        let review = urls.allowsReview(key, expires: query.get("expires"), review: query.get("review"))
        // Photos and catalogue images are as public as the profiles and listings that show them.
        let isPhoto = key.hasPrefix(ProfilePhotos.folder) || key.hasPrefix(RemoteImages.folder)
        guard review || isPhoto || urls.allows(key, expires: query.get("expires"), sig: query.get("sig")) else {
            throw APIError.forbidden("This media link is missing its signature or has expired.", code: .mediaLink)
        }
        if !review, key.hasPrefix("posts/") {
            let id = String(key.dropFirst(6).prefix { $0 != "/" })
            if try await recent.answer(id, read: { try await hiddenPost(id) }) {
                throw APIError.notFound("No such media.")
            }
        }
        guard let path = blobs.localFile(key: key) else {
            guard let url = blobs.directURL(key: key, seconds: urls.ttl) else {
                throw APIError.notFound("No such media.")
            }
            return Response(
                status: .found, headers: [.location: url.absoluteString, .cacheControl: "private, max-age=60"])
        }
        guard let info = try await blobs.head(key: key) else { throw APIError.notFound("No such media.") }
        let etag = "\"\(info.etag)\""
        var headers: HTTPFields = [
            .contentType: Self.contentType(of: key), .acceptRanges: "bytes", .eTag: etag,
            .lastModified: HTTPDate.format(info.lastModified),
            .cacheControl: review
                ? "private, max-age=300"
                : urls.signs && !isPhoto ? "private, max-age=3600" : "public, max-age=31536000, immutable",
        ]
        if key.hasSuffix(".html") {
            // Uploaded ad pages: no scripts, forms, plugins or same-origin access.
            // Framed only by the app itself.
            headers[.contentSecurityPolicy] =
                "sandbox; default-src 'none'; img-src https: data:; style-src 'unsafe-inline'; frame-ancestors 'self'"
        }
        if let match = request.headers[.ifNoneMatch], match == "*" || match.contains(etag) {
            return Response(status: .notModified, headers: headers)
        }
        let size = Int(info.size)
        var range = ByteRange.parse(request.headers[.range], size: size)
        if let ifRange = request.headers[.ifRange], ifRange != etag { range = .whole }
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .whole:
            headers[.contentLength] = String(size)
            if head || size == 0 { return Response(status: .ok, headers: headers) }
            if let bytes = try await memory?.bytes(key: key, path: path, etag: info.etag, size: size) {
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: bytes))
            }
            return Response(
                status: .ok, headers: headers,
                body: try await fileIO.loadFile(path: path, context: context, chunkLength: Self.chunk))
        case .partial(let lower, let upper):
            headers[.contentRange] = "bytes \(lower)-\(upper)/\(size)"
            headers[.contentLength] = String(upper - lower + 1)
            if head { return Response(status: .partialContent, headers: headers) }
            if let bytes = try await memory?.bytes(key: key, path: path, etag: info.etag, size: size),
                let slice = bytes.getSlice(at: lower, length: upper - lower + 1)
            {
                return Response(status: .partialContent, headers: headers, body: .init(byteBuffer: slice))
            }
            return Response(
                status: .partialContent, headers: headers,
                body: try await fileIO.loadFile(
                    path: path, range: lower...upper, context: context, chunkLength: Self.chunk))
        }
    }

    /// Bytes read from disk per write: large, as clips are streamed whole or in big ranges.
    static let chunk = 1 << 20

    static func contentType(of key: String) -> String {
        switch key.split(separator: ".").last ?? "" {
        case "mp4": "video/mp4"
        case "mov": "video/quicktime"
        case "webm": "video/webm"
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "heic": "image/heic"
        case "html": "text/html; charset=utf-8"
        default: "application/octet-stream"
        }
    }
}

/// Answers kept for `ttl`, at most 10,000 (all are dropped when that many are kept).
final class RecentAnswers: Sendable {
    private let answers = Mutex<[String: (value: Bool, until: ContinuousClock.Instant)]>([:])
    let ttl: Duration

    init(ttl: Duration) { self.ttl = ttl }

    /// The answer for `key`: a recent one, or `read`'s, kept.
    func answer(_ key: String, read: () async throws -> Bool) async throws -> Bool {
        let now = ContinuousClock.now
        if let kept = answers.withLock({ $0[key] }), kept.until > now { return kept.value }
        let value = try await read()
        answers.withLock { answers in
            if answers.count >= 10_000 { answers.removeAll() }
            answers[key] = (value, now + ttl)
        }
        return value
    }
}
