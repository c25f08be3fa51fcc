import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import Synchronization
import TonightCore

/// Images that imports and moderators link from other hosts (an artist's photo from the event
/// feed, a venue's picture), served through our own media so the web app's Content-Security-Policy
/// stays `img-src 'self'` and no other host learns who looks at what.
///
/// API answers never carry the foreign link: an artist's or place's `imageURL` is
/// `/v1/images/artists/<id>` or `/v1/images/places/<id>` (``link(_:kind:id:)``). The link names
/// the row, not the URL, so the route fetches only what our catalogue holds — it is no open proxy.
/// The first request fetches the image (http or https on ports 80 and 443, public addresses only —
/// see ``PublicAddress`` —, at most ``maxBytes``, ``deadline`` in all, up to three redirects each
/// checked again), re-encodes it with ffmpeg as a JPEG of at most ``longSide`` pixels without
/// metadata (without ffmpeg there are no catalogue images: bytes not re-encoded are never served),
/// and stores it as `remote/<hash of the URL>.jpg`; every request then redirects to
/// that file (`/v1/media/remote/…`, cached by browsers for a day). A changed URL is a new file.
///
/// At most ``concurrency`` fetches run at once, one per image whatever the number of requests
/// waiting for it; beyond that the answer is 503 with `Retry-After`. An image that cannot be
/// fetched or read is answered 404 and not tried again for ``retryAfterFailure`` on this instance.
final class RemoteImages: Sendable {
    /// What an image link names.
    enum Kind: String, Sendable, CaseIterable {
        case artists, places
    }

    static let prefix = "/v1/images/"
    /// The blob-key folder of the cached copies.
    static let folder = "remote/"
    static let maxBytes = 5 << 20
    static let longSide = 800
    static let deadline = Duration.seconds(15)
    static let retryAfterFailure = Duration.seconds(600)
    static let concurrency = 4

    let blobs: any BlobStore
    let urls: MediaURLs
    let processor: MediaProcessor
    let workDirectory: String
    /// Hosts fetched even on private addresses (`IMAGE_PROXY_PRIVATE_HOSTS`: tests, a LAN server).
    let privateHosts: Set<String>
    /// The image URL a row holds now.
    let source: @Sendable (Kind, String) async throws -> String?
    private let state = Mutex(State())

    private struct State {
        var running: [String: Task<Void, any Error>] = [:]
        var failed: [String: ContinuousClock.Instant] = [:]
    }

    init(
        blobs: any BlobStore, urls: MediaURLs, tools: MediaTools?, workDirectory: String, privateHosts: [String],
        source: @escaping @Sendable (Kind, String) async throws -> String?
    ) {
        self.blobs = blobs
        self.urls = urls
        self.processor = MediaProcessor(
            tools: tools,
            limits: MediaLimits(
                stillLongSide: Self.longSide, maxBytes: Int64(Self.maxBytes), timeout: .seconds(10)))
        self.workDirectory = workDirectory
        self.privateHosts = Set(privateHosts.map { $0.lowercased() })
        self.source = source
    }

    /// What clients get for a row's stored image link: our own media as it is, a link of ours for
    /// an http(s) image elsewhere, nil for none.
    static func link(_ stored: String?, kind: Kind, id: String) -> String? {
        guard let stored, !stored.isEmpty else { return nil }
        if stored.hasPrefix(MediaURLs.prefix) { return stored }
        guard WebLink.isValid(stored) else { return nil }
        return prefix + kind.rawValue + "/" + id
    }

    /// The blob key of the cached copy of `url`.
    static func key(for url: String) -> String {
        folder + SHA256.hash(data: Data(url.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined() + ".jpg"
    }

    func register(on router: Router<AppRequestContext>) {
        router.get("/v1/images/:kind/:id") { request, context in
            guard let kind = context.parameters.get("kind").flatMap(Kind.init(rawValue:)),
                let id = context.parameters.get("id"), id.count <= 100
            else { throw APIError.notFound("No such image.") }
            return try await self.answer(kind, id)
        }
    }

    /// A redirect to the cached copy of `kind`/`id`'s image, fetching it first if needed.
    func answer(_ kind: Kind, _ id: String) async throws -> Response {
        guard let url = try await source(kind, id), WebLink.isValid(url) else {
            throw APIError.notFound("No such image.")
        }
        let key = Self.key(for: url)
        if try await blobs.head(key: key) == nil {
            try await fetchOnce(url, key: key)
        }
        return Response(
            status: .found, headers: [.location: urls.url(for: key), .cacheControl: "public, max-age=86400"])
    }

    /// Fetches and stores `url` as `key`, joining a fetch of it already under way.
    private func fetchOnce(_ url: String, key: String) async throws {
        enum Turn { case join(Task<Void, any Error>), busy, failed }
        let now = ContinuousClock.now
        let turn: Turn = state.withLock { state in
            if let since = state.failed[key], now - since < Self.retryAfterFailure { return .failed }
            if let running = state.running[key] { return .join(running) }
            guard state.running.count < Self.concurrency else { return .busy }
            // The task itself leaves `running` (and notes a failure) when it ends, so a later fetch
            // of the same key is never removed by a waiter of this one.
            let task = Task {
                do {
                    try await self.store(url, key: key)
                    self.state.withLock { _ = $0.running.removeValue(forKey: key) }
                } catch {
                    self.state.withLock { state in
                        state.running.removeValue(forKey: key)
                        if state.failed.count > 10_000 { state.failed.removeAll() }
                        state.failed[key] = ContinuousClock.now
                    }
                    throw error
                }
            }
            state.running[key] = task
            return .join(task)
        }
        switch turn {
        case .failed:
            throw APIError.notFound("This image could not be fetched.")
        case .busy:
            throw APIError(
                status: 503, code: .mediaBusy, detail: "Other images are being fetched right now. Try again shortly.",
                retryAfter: 2)
        case .join(let task):
            do { try await task.value } catch { throw APIError.notFound("This image could not be fetched.") }
        }
    }

    /// Downloads, re-encodes and stores `url` as `key` (unless another request stored it meanwhile).
    private func store(_ url: String, key: String) async throws {
        guard try await blobs.head(key: key) == nil else { return }
        let work = URL(fileURLWithPath: workDirectory).appendingPathComponent(Identifier.make())
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let file = work.appendingPathComponent("download")
        let container = try await withDeadline(Self.deadline) { try await self.download(url, to: file) }
        let image = work.appendingPathComponent("image.jpg")
        guard try await processor.jpegStill(input: file, container: container, output: image) else {
            throw MediaInfrastructureError.toolFailed(tool: "ffmpeg", detail: "not installed")
        }
        try await blobs.put(key: key, from: image.path, contentType: "image/jpeg", storageClass: nil)
    }

    /// Writes the JPEG or PNG at `link` to `file`, following up to three redirects.
    private func download(_ link: String, to file: URL) async throws -> MediaContainer {
        var next = link
        for _ in 0...3 {
            guard let url = URL(string: next), let scheme = url.scheme?.lowercased(),
                ["http", "https"].contains(scheme),
                let host = url.host, PublicAddress.isPlainHost(host)
            else { throw PublicAddress.Refusal(description: "not an http(s) link to a plain host name or address") }
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            let allowed = privateHosts.contains(host.lowercased())
            // The web's ports only: a link cannot probe other services of a public host.
            guard allowed || [80, 443].contains(port) else { throw PublicAddress.Refusal(description: "port \(port)") }
            let address = try await PublicAddress.resolve(host, port: port, allowing: privateHosts)
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(10)))
            // Connect to the address just checked, not to a second lookup's answer.
            configuration.dnsOverride = [host: address.ipAddress ?? host]
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let outcome: Result<Fetched, any Error>
            do {
                outcome = .success(try await fetch(next, from: client, to: file))
            } catch {
                outcome = .failure(error)
            }
            try? await client.shutdown()
            switch try outcome.get() {
            case .stored(let container): return container
            case .redirect(let location): next = URL(string: location, relativeTo: url)?.absoluteString ?? ""
            }
        }
        throw PublicAddress.Refusal(description: "too many redirects")
    }

    /// What one request gave.
    private enum Fetched {
        case stored(MediaContainer)
        case redirect(String)
    }

    /// One request: writes a 200's JPEG or PNG body to `file`, or answers a redirect's `Location`.
    private func fetch(_ link: String, from client: HTTPClient, to file: URL) async throws -> Fetched {
        var request = HTTPClientRequest(url: link)
        request.headers.add(name: "Accept", value: "image/jpeg, image/png")
        request.headers.add(name: "User-Agent", value: "Tonight image cache")
        let response = try await client.execute(request, timeout: .seconds(10))
        if (300..<400).contains(response.status.code), let location = response.headers.first(name: "Location") {
            return .redirect(location)
        }
        guard response.status == .ok else {
            throw PublicAddress.Refusal(description: "answered \(response.status.code)")
        }
        let upload = try UploadFile(directory: file.deletingLastPathComponent().path, limit: Self.maxBytes)
        defer { upload.discard() }
        for try await chunk in response.body {
            try await upload.append(ArraySlice(chunk.readableBytesView))
        }
        let container = try upload.finish()
        guard container == .jpeg || container == .png else { throw MediaRejection.unsupportedCodec(container.rawValue) }
        try FileManager.default.moveItem(atPath: upload.path, toPath: file.path)
        return .stored(container)
    }
}
