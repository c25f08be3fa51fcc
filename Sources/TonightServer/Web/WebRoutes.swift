import Foundation
import Hummingbird
import NIOCore

/// The web app: the files of `Web/`, built into the binary (``EmbeddedWeb``) or, for development,
/// read from a folder (`web.dir`), `/` being `index.html`. Every answer carries a strong `ETag`
/// (the content's hash when built in, size and modification time from a folder) and
/// `Cache-Control: no-cache`, so browsers keep the files and revalidate them with one cheap
/// request (304) — a new release is picked up at the next load without versioned file names.
/// Built-in text files go gzipped to browsers that accept it (compressed once, at start-up), with
/// `Vary: Accept-Encoding`; a folder is served as it is.
/// The page's Content-Security-Policy loads images and media from its own origin only (photos of
/// people and posts are our own media, so no other host learns who looks at them), plus the
/// configured map tile server (which may be plain http on a local network) and, with S3 storage,
/// the S3 endpoint our media links redirect to. It connects only to its own origin (the API and
/// the live socket), frames https pages only (advertisers' pages, sandboxed), and no other site
/// may frame it (clickjacking).
/// HSTS belongs to the TLS proxy in front (docs/operations.md).
struct WebRoutes: Sendable {
    /// Where the files come from.
    enum Source: Sendable {
        /// The copy built into the binary (the default).
        case embedded
        /// A folder read at each request (`WEB_DIR`, to work on the app without rebuilding).
        case folder(String)
    }

    let source: Source
    let contentSecurityPolicy: String
    let fileIO = FileIO()

    init(source: Source = .embedded, mapTileURL: String = "", mediaOrigin: String = "") {
        self.source = source
        let tiles = Self.origin(of: mapTileURL).map { " " + $0 } ?? ""
        let media = Self.origin(of: mediaOrigin).map { " " + $0 } ?? ""
        contentSecurityPolicy =
            "default-src 'self'; img-src 'self' data: blob:\(media)\(tiles); media-src 'self' blob:\(media); "
            + "connect-src 'self'; frame-src 'self' https:; frame-ancestors 'none'; base-uri 'self'; "
            + "form-action 'self'"
    }

    /// `scheme://host[:port]` of a URL template such as `http://tiles.lan:8080/{z}/{x}/{y}.png`.
    static func origin(of template: String) -> String? {
        guard let schemeEnd = template.range(of: "://") else { return nil }
        let scheme = template[..<schemeEnd.lowerBound].lowercased()
        let rest = template[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard ["http", "https"].contains(scheme), !authority.isEmpty,
            authority.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:[]_".contains($0)) })
        else { return nil }
        return scheme + "://" + authority
    }

    func register(on router: Router<AppRequestContext>) {
        router.get("/") { request, context in try await self.serve("index.html", request, context) }
        // The service worker from the root, so that its scope is the whole app.
        router.get("/sw.js") { request, context in try await self.serve("sw.js", request, context) }
        router.get("/app/**") { request, context in
            try await self.serve(context.parameters.getCatchAll().joined(separator: "/"), request, context)
        }
    }

    private func serve(_ name: String, _ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard Self.isSafe(name) else { throw APIError.notFound("No such file.") }
        let (size, etag, body): (Int, String, () async throws -> ResponseBody)
        var gzipped = false
        switch source {
        case .embedded:
            guard let file = EmbeddedWeb.file(name) else { throw APIError.notFound("No such file.") }
            if let encoded = file.gzipped, Self.acceptsGzip(request.headers[values: .acceptEncoding]) {
                gzipped = true
                (size, etag, body) = (
                    encoded.body.readableBytes, encoded.etag, { ResponseBody(byteBuffer: encoded.body) }
                )
            } else {
                (size, etag, body) = (file.body.readableBytes, file.etag, { ResponseBody(byteBuffer: file.body) })
            }
        case .folder(let directory):
            let path = directory + "/" + name
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                (attributes[.type] as? FileAttributeType) == .typeRegular,
                let bytes = attributes[.size] as? Int, let modified = attributes[.modificationDate] as? Date
            else { throw APIError.notFound("No such file.") }
            let stamp = "\"\(bytes)-\(Int(modified.timeIntervalSince1970 * 1000))\""
            (size, etag, body) = (bytes, stamp, { try await fileIO.loadFile(path: path, context: context) })
        }
        var headers: HTTPFields = [
            .contentType: Self.contentType(of: name), .eTag: etag, .cacheControl: "no-cache",
            .xContentTypeOptions: "nosniff", .vary: "Accept-Encoding",
        ]
        if gzipped { headers[.contentEncoding] = "gzip" }
        if name == "index.html" {
            headers[.contentSecurityPolicy] = contentSecurityPolicy
            headers[.xFrameOptions] = "DENY"
        }
        if let match = request.headers[.ifNoneMatch], match == "*" || match.contains(etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentLength] = String(size)
        return Response(status: .ok, headers: headers, body: try await body())
    }

    /// Whether `Accept-Encoding` lists gzip (or `*`) without `q=0` (RFC 9110 §12.5.3).
    static func acceptsGzip(_ values: [String]) -> Bool {
        values.flatMap { $0.split(separator: ",") }.contains { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*" else {
                return false
            }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
    }

    /// Relative paths of letters, digits, `-`, `_`, `.` and `/`, never `..` nor hidden files.
    static func isSafe(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 200
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_./".unicodeScalars.contains($0))
            }
            && !name.split(separator: "/").contains { $0.hasPrefix(".") }
    }

    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last.map({ $0.lowercased() }) {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json": "application/json"
        case "webmanifest": "application/manifest+json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        default: "application/octet-stream"
        }
    }
}
