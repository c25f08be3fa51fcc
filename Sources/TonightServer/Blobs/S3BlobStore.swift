import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Any S3-compatible service, addressed path-style: `<endpoint>/<bucket>/<key>`,
/// e.g. `http://127.0.0.1:9000/bucket/media/a.mp4`.
public struct S3Configuration: Sendable {
    /// Scheme, host, optional port and optional base path, e.g. `https://s3.eu-west-1.amazonaws.com`.
    public var endpoint: URL
    public var bucket: String
    public var region: String
    public var accessKeyID: String
    public var secretAccessKey: String
    /// Deadline of a request that moves no body worth counting, and the base of every other one
    /// (the connection attempt included).
    public var timeout: TimeAmount
    /// The slowest transfer accepted: a request moving `n` bytes has `timeout + n / minimumBytesPerSecond`.
    public var minimumBytesPerSecond: Int64
    /// The largest object a whole-object `get` may return; its deadline is counted for this size.
    public var largestObject: Int64

    public init(
        endpoint: URL,
        bucket: String,
        region: String,
        accessKeyID: String,
        secretAccessKey: String,
        timeout: TimeAmount = .seconds(10),
        minimumBytesPerSecond: Int64 = 1_000_000,
        largestObject: Int64 = 104_857_600
    ) {
        self.endpoint = endpoint
        self.bucket = bucket
        self.region = region
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.timeout = timeout
        self.minimumBytesPerSecond = max(1, minimumBytesPerSecond)
        self.largestObject = largestObject
    }

    /// How long a request moving `bytes` may take, from its connection attempt to its last byte.
    func deadline(bytes: Int64) -> TimeAmount {
        timeout + .milliseconds(max(0, bytes) * 1000 / minimumBytesPerSecond)
    }

    var credentials: SigV4.Credentials {
        SigV4.Credentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey)
    }
}

public struct S3BlobStore: BlobStore {
    public let configuration: S3Configuration
    public let httpClient: HTTPClient

    /// Largest response body `get` or an error body will collect (a `get` of a whole object must fit in memory).
    static let maxBodySize = Int.max

    /// The HTTP client S3 requests go through by default: a connection attempt gives up after
    /// ``connectTimeout`` and is not retried (AsyncHTTPClient's default retries until the request's
    /// deadline), so a store that refuses connections fails the request at once; like
    /// `HTTPClient.shared` it lives as long as the process.
    public static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = connectTimeout
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// How long ``client`` waits for a TCP (and TLS) connection to the store.
    static let connectTimeout = TimeAmount.seconds(3)

    public init(configuration: S3Configuration, httpClient: HTTPClient = S3BlobStore.client) {
        self.configuration = configuration
        self.httpClient = httpClient
    }

    // MARK: Addressing

    var scheme: String { configuration.endpoint.scheme?.lowercased() ?? "http" }

    /// Host header value: host, plus ":port" when the port is not the scheme's default.
    var hostHeader: String {
        let url = configuration.endpoint
        var host = url.host ?? "localhost"
        if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }  // IPv6 literal
        if let port = url.port, !(scheme == "http" && port == 80) && !(scheme == "https" && port == 443) {
            host += ":\(port)"
        }
        return host
    }

    /// Unencoded path of the bucket or of an object in it.
    func path(key: String?) -> String {
        var base = configuration.endpoint.path
        while base.hasSuffix("/") { base.removeLast() }
        var p = base + "/" + configuration.bucket
        if let key { p += "/" + key }
        return p
    }

    // MARK: Signed requests

    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: ByteBuffer
    }

    /// Signs and sends one request, collecting the whole response body, within the deadline for
    /// `transfer` bytes. A store that cannot be reached, breaks the connection or misses the
    /// deadline is ``BlobError/unavailable(_:)``.
    func send(
        method: HTTPMethod,
        key: String?,
        query: [(String, String)] = [],
        headers: [(String, String)] = [],
        body: HTTPClientRequest.Body? = nil,
        payloadHash: String = SigV4.emptyPayloadHash,
        transfer: Int64 = 0,
        now: Date = Date()
    ) async throws -> Response {
        let path = path(key: key)
        let signed = SigV4.sign(
            method: method.rawValue,
            host: hostHeader,
            path: path,
            query: query,
            headers: headers,
            payloadHash: payloadHash,
            region: configuration.region,
            credentials: configuration.credentials,
            date: now
        )
        var url = "\(scheme)://\(hostHeader)\(SigV4.canonicalURI(path))"
        if !query.isEmpty { url += "?" + SigV4.canonicalQueryString(query) }
        var request = HTTPClientRequest(url: url)
        request.method = method
        for header in signed.headers { request.headers.add(name: header.name, value: header.value) }
        if let body { request.body = body }
        do {
            let response = try await httpClient.execute(
                request, deadline: .now() + configuration.deadline(bytes: transfer))
            let collected = try await response.body.collect(upTo: Self.maxBodySize)  // empty for HEAD
            return Response(status: Int(response.status.code), headers: response.headers, body: collected)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw BlobError.unavailable("S3 \(method.rawValue) failed: \(error)")
        }
    }

    /// The error for an S3 error response ("Code: Message" from its XML body when there is one):
    /// ``BlobError/unavailable(_:)`` for a 5xx (S3's `InternalError`, `SlowDown`, …), else
    /// ``BlobError/server(status:message:)``.
    static func serverError(_ response: Response) -> BlobError {
        let text = String(buffer: response.body)
        let code = XMLScan.firstValue(of: "Code", in: text)
        let message = XMLScan.firstValue(of: "Message", in: text)
        let summary: String
        switch (code, message) {
        case let (c?, m?): summary = "\(c): \(m)"
        case let (c?, nil): summary = c
        case let (nil, m?): summary = m
        default:
            summary = text.isEmpty ? HTTPResponseStatus(statusCode: response.status).reasonPhrase : text
        }
        if response.status >= 500 { return .unavailable("S3 answered \(response.status) \(summary)") }
        return .server(status: response.status, message: summary)
    }

    // MARK: BlobStore

    public func put(key: String, from localFile: String, contentType: String, storageClass: String?) async throws {
        try BlobKey.validate(key)
        // First pass: size and SHA-256 (streamed), so the payload hash is signed for real.
        let (size, hash) = try await blocking { () throws -> (Int64, String) in
            let size = try fileSize(localFile)
            let fd = open(localFile, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw posixError("open \(localFile)") }
            defer { close(fd) }
            var hasher = SHA256()
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = try readFully(fd, &buffer)
                if n == 0 { break }
                buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            }
            return (size, SigV4.hex(hasher.finalize()))
        }
        var headers: [(String, String)] = [("Content-Type", contentType)]
        if let storageClass { headers.append(("x-amz-storage-class", storageClass)) }
        let response = try await send(
            method: .PUT,
            key: key,
            headers: headers,
            body: .stream(FileChunks(path: localFile), length: .known(size)),
            payloadHash: hash,
            transfer: size
        )
        guard (200..<300).contains(response.status) else { throw Self.serverError(response) }
    }

    public func get(key: String, range: Range<Int64>?) async throws -> (data: [UInt8], totalSize: Int64) {
        try BlobKey.validate(key)
        var headers: [(String, String)] = []
        if let range {
            if range.isEmpty {
                guard let info = try await head(key: key) else { throw BlobError.notFound }
                return ([], info.size)
            }
            guard range.lowerBound >= 0 else {
                throw BlobError.server(status: 416, message: "negative range \(range)")
            }
            headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)"))
        }
        let response = try await send(
            method: .GET, key: key, headers: headers,
            transfer: range.map { $0.upperBound - $0.lowerBound } ?? configuration.largestObject)
        switch response.status {
        case 200, 206:
            let data = Array(buffer: response.body)
            var total = Int64(data.count)
            if response.status == 206, let contentRange = response.headers.first(name: "Content-Range"),
                let slash = contentRange.lastIndex(of: "/"),
                let parsed = Int64(contentRange[contentRange.index(after: slash)...])
            {
                total = parsed
            }
            return (data, total)
        case 404:
            throw BlobError.notFound
        default:
            throw Self.serverError(response)
        }
    }

    public func head(key: String) async throws -> BlobInfo? {
        guard let headers = try await headHeaders(key: key) else { return nil }
        let size = headers.first(name: "Content-Length").flatMap { Int64($0) } ?? 0
        var etag = headers.first(name: "ETag") ?? ""
        if etag.count >= 2, etag.hasPrefix("\""), etag.hasSuffix("\"") { etag = String(etag.dropFirst().dropLast()) }
        let modified = headers.first(name: "Last-Modified").flatMap(HTTPDate.parse) ?? Date(timeIntervalSince1970: 0)
        return BlobInfo(size: size, etag: etag, lastModified: modified)
    }

    /// The object's storage class as S3 reports it in HEAD (`x-amz-storage-class`); S3 omits the
    /// header for STANDARD, which is returned as "STANDARD". nil when the object is missing.
    public func storageClass(key: String) async throws -> String? {
        guard let headers = try await headHeaders(key: key) else { return nil }
        return headers.first(name: "x-amz-storage-class") ?? "STANDARD"
    }

    func headHeaders(key: String) async throws -> HTTPHeaders? {
        try BlobKey.validate(key)
        let response = try await send(method: .HEAD, key: key)
        switch response.status {
        case 200: return response.headers
        case 404: return nil
        default: throw Self.serverError(response)
        }
    }

    public func delete(key: String) async throws {
        try BlobKey.validate(key)
        let response = try await send(method: .DELETE, key: key)
        guard (200..<300).contains(response.status) || response.status == 404 else {
            throw Self.serverError(response)
        }
    }

    public func list(prefix: String) async throws -> [String] {
        try await list(prefix: prefix, maxKeys: nil)
    }

    /// Every key under `prefix`, asking for at most `maxKeys` per page (nil = S3's default, 1000).
    public func list(prefix: String, maxKeys: Int?) async throws -> [String] {
        var keys: [String] = []
        var token: String? = nil
        repeat {
            let page = try await listPage(prefix: prefix, continuationToken: token, maxKeys: maxKeys)
            keys += page.keys
            token = page.nextContinuationToken
        } while token != nil
        return keys
    }

    /// One ListObjectsV2 page; `nextContinuationToken` is nil on the last page.
    public func listPage(
        prefix: String,
        continuationToken: String?,
        maxKeys: Int?
    ) async throws -> (keys: [String], nextContinuationToken: String?) {
        try BlobKey.validatePrefix(prefix)
        var query: [(String, String)] = [("list-type", "2"), ("prefix", prefix)]
        if let continuationToken { query.append(("continuation-token", continuationToken)) }
        if let maxKeys { query.append(("max-keys", String(maxKeys))) }
        let response = try await send(method: .GET, key: nil, query: query)
        guard response.status == 200 else { throw Self.serverError(response) }
        let text = String(buffer: response.body)
        let keys = XMLScan.elements("Contents", in: text).compactMap { XMLScan.firstValue(of: "Key", in: $0) }
        let truncated = XMLScan.firstValue(of: "IsTruncated", in: text) == "true"
        let next = truncated ? XMLScan.firstValue(of: "NextContinuationToken", in: text) : nil
        if truncated && next == nil {
            throw BlobError.server(status: 502, message: "truncated listing without NextContinuationToken")
        }
        return (keys, next)
    }

    /// Creates the bucket (for development setups and tests); an existing bucket we own is fine.
    public func createBucket() async throws {
        let response = try await send(method: .PUT, key: nil)
        if (200..<300).contains(response.status) { return }
        if response.status == 409,
            XMLScan.firstValue(of: "Code", in: String(buffer: response.body)) == "BucketAlreadyOwnedByYou"
        {
            return
        }
        throw Self.serverError(response)
    }

    public func directURL(key: String, seconds: Int) -> URL? {
        BlobKey.isValid(key) ? presignedGET(key: key, expires: seconds) : nil
    }

    /// A presigned GET URL valid for `expires` seconds (SigV4 query-string auth).
    public func presignedGET(key: String, expires: Int, now: Date = Date()) -> URL {
        SigV4.presign(
            method: "GET",
            scheme: scheme,
            host: hostHeader,
            path: path(key: key),
            region: configuration.region,
            credentials: configuration.credentials,
            date: now,
            expires: expires
        ).url
    }
}
