import CompressNIO
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TonightServer

@Suite("The web app's files")
struct WebRoutesTests {
    /// The repository's `Web/` folder.
    static let webDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Web").path

    @Test("/ is the app shell; files revalidate with ETag (304); nothing outside Web/ is served")
    func files() async throws {
        try await withApp(.sqlite, configure: { $0.webDirectory = Self.webDirectory }) { _, client in
            let index = try await client.send(.get, "/")
            #expect(index.status == .ok)
            #expect(index.headers[.contentType] == "text/html; charset=utf-8")
            #expect(index.headers[.cacheControl] == "no-cache")
            #expect(index.text.contains("<script type=\"module\" src=\"/app/app.js\"></script>"))
            let etag = try #require(index.headers[.eTag])
            let again = try await client.send(.get, "/", headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
            let script = try await client.send(.get, "/app/app.js")
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            let manifest = try await client.send(.get, "/app/manifest.webmanifest")
            #expect(manifest.json["start_url"] as? String == "/")
            for path in ["/app/../Package.swift", "/app/%2e%2e/Package.swift", "/app/.hidden", "/app/nope.js"] {
                #expect(try await client.send(.get, path).status == .notFound, "\(path)")
            }
            // The API is not shadowed by the web routes.
            #expect(try await client.send(.get, "/health").status == .ok)
        }
    }

    @Test("the binary serves the web app built into it: every file of Web/, byte for byte, with content ETags")
    func builtIn() async throws {
        let names = try #require(FileManager.default.subpaths(atPath: Self.webDirectory)).filter { name in
            var isDirectory: ObjCBool = false
            return !name.hasPrefix(".")
                && FileManager.default.fileExists(atPath: Self.webDirectory + "/" + name, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
        #expect(EmbeddedWeb.count == names.count)
        // The default configuration: no folder, whatever the working directory.
        try await withApp(.sqlite) { _, client in
            for name in names {
                let path = name == "index.html" ? "/" : "/app/" + name
                let answer = try await client.send(.get, path)
                #expect(answer.status == .ok, "\(path)")
                let file = try Data(contentsOf: URL(fileURLWithPath: Self.webDirectory + "/" + name))
                #expect(Data(buffer: answer.body) == file, "\(path) differs from Web/\(name)")
                let etag = try #require(answer.headers[.eTag])
                #expect(try await client.send(.get, path, headers: [.ifNoneMatch: etag]).status == .notModified)
            }
            #expect(try await client.send(.get, "/app/nope.js").status == .notFound)
            #expect(try await client.send(.get, "/").headers[.contentSecurityPolicy] != nil)
        }
    }

    @Test("the page's CSP loads images from itself and the tile server only, and nothing from a bad template")
    func tileOrigin() async throws {
        let template = "http://tiles.lan:8080/{z}/{x}/{y}.png"
        try await withApp(
            .sqlite,
            configure: {
                $0.webDirectory = Self.webDirectory; $0.mapTileURL = template
            }
        ) {
            _, client in
            let page = try await client.send(.get, "/")
            let csp = try #require(page.headers[.contentSecurityPolicy])
            // No image or media from any other https host: photos are our own media.
            #expect(csp.contains("img-src 'self' data: blob: http://tiles.lan:8080;"))
            #expect(csp.contains("media-src 'self' blob:;"))
            // Never framed by another site; connects to its own origin only (API and socket).
            #expect(csp.contains("frame-ancestors 'none'") && page.headers[.xFrameOptions] == "DENY")
            #expect(csp.contains("connect-src 'self';") && !csp.contains("ws:"))
            let config = try await client.send(.get, "/v1/config")
            #expect(config.json["mapTileURL"] as? String == template)
            #expect(config.json["mapAttribution"] == nil)  // another server: its operator sets the credit
            // Every answer says nosniff: pages, API answers, problems, files.
            for path in ["/", "/v1/config", "/v1/nothing-here", "/app/app.js"] {
                #expect(try await client.send(.get, path).headers[.xContentTypeOptions] == "nosniff", "\(path)")
            }
        }
        #expect(WebRoutes.origin(of: "https://{s}.tile.example/{z}/{x}/{y}.png") == nil)
        // The default map is OpenStreetMap's standard tiles with its credit; `off` turns maps off.
        try await withApp(.sqlite) { _, client in
            let config = try await client.send(.get, "/v1/config").json
            #expect(config["mapTileURL"] as? String == AppConfig.osmTiles)
            #expect(config["mapAttribution"] as? String == "© OpenStreetMap contributors")
            let csp = try await client.send(.get, "/").headers[.contentSecurityPolicy]
            #expect(csp?.contains("img-src 'self' data: blob: https://tile.openstreetmap.org;") == true)
        }
        try await withApp(.sqlite, configure: { $0.mapTileURL = "" }) { _, client in
            let config = try await client.send(.get, "/v1/config").json
            #expect(config["mapTileURL"] == nil && config["mapAttribution"] == nil)
        }
        #expect(WebRoutes.origin(of: "https://tile.example/{z}/{x}/{y}.png") == "https://tile.example")
        #expect(WebRoutes.origin(of: "javascript:alert(1)") == nil)
        #expect(WebRoutes.origin(of: "http://tüles.example/{z}/{x}/{y}.png") == nil)
        #expect(WebRoutes.origin(of: "http://a.b; script-src *") == nil)
        #expect(WebRoutes().contentSecurityPolicy.contains("img-src 'self' data: blob:;"))
        // With S3 storage, media links redirect to the endpoint: images and clips load from there too.
        let s3 = WebRoutes(mediaOrigin: "https://s3.eu-west-1.amazonaws.com").contentSecurityPolicy
        #expect(s3.contains("img-src 'self' data: blob: https://s3.eu-west-1.amazonaws.com;"))
        #expect(s3.contains("media-src 'self' blob: https://s3.eu-west-1.amazonaws.com;"))
    }

    @Test("built-in text goes gzipped to browsers that accept it, with its own ETag; images and refusals as they are")
    func gzip() async throws {
        try await withApp(.sqlite) { _, client in
            let raw = try await client.send(.get, "/app/app.js")
            #expect(raw.headers[.contentEncoding] == nil)
            #expect(raw.headers[.vary] == "Accept-Encoding")
            let packed = try await client.send(.get, "/app/app.js", headers: [.acceptEncoding: "br, gzip;q=0.8"])
            #expect(packed.headers[.contentEncoding] == "gzip")
            #expect(packed.headers[.vary] == "Accept-Encoding")
            #expect(packed.body.readableBytes < raw.body.readableBytes)
            var body = packed.body
            #expect(try body.decompress(with: .gzip()) == raw.body)
            let etag = try #require(packed.headers[.eTag])
            #expect(etag != raw.headers[.eTag])
            let again = try await client.send(
                .get, "/app/app.js", headers: [.acceptEncoding: "gzip", .ifNoneMatch: etag])
            #expect(again.status == .notModified)
            for refusal in ["gzip;q=0", "identity", "deflate"] {
                let answer = try await client.send(.get, "/app/app.js", headers: [.acceptEncoding: refusal])
                #expect(answer.headers[.contentEncoding] == nil, "\(refusal)")
            }
            let icon = try await client.send(.get, "/app/icon-192.png", headers: [.acceptEncoding: "gzip"])
            #expect(icon.headers[.contentEncoding] == nil)
        }
        #expect(WebRoutes.acceptsGzip(["deflate, GZIP; q=0.5"]))
        #expect(WebRoutes.acceptsGzip(["*"]))
        #expect(!WebRoutes.acceptsGzip(["gzip;q=0.0", "br"]))
        #expect(!WebRoutes.acceptsGzip([]))
    }

    @Test("the first load (the page, its stylesheets and every module app.js imports) stays under 200 KB gzipped")
    func weight() throws {
        // What a first visit fetches: index.html, the stylesheets it links and the module graph
        // from app.js through static imports. Screens loaded on demand (`import()`), the icons and
        // the manifest (fetched when the app is installed) are not part of it.
        func text(_ name: String) throws -> String {
            try String(contentsOfFile: Self.webDirectory + "/" + name, encoding: .utf8)
        }
        let page = try text("index.html")
        var files = Set(page.matches(of: /href="\/app\/([^"]+\.css)"/).map { String($0.output.1) })
        files.insert("index.html")
        var modules = ["app.js"]
        while let module = modules.popLast() {
            guard files.insert(module).inserted else { continue }
            let imports = try text(module).matches(of: /(?m)^\s*(?:import|export)\s[^;]*?from\s+"\.\/([^"]+)"/)
            modules += imports.map { String($0.output.1) }
        }
        // As served: gzipped (browsers all accept it).
        let total = try files.reduce(0) { sum, name in
            let file = try #require(EmbeddedWeb.file(name))
            return sum + (file.gzipped?.body ?? file.body).readableBytes
        }
        #expect(files.contains("router.js") && files.contains("styles.css") && !files.contains("post.js"))
        #expect(total < 200_000, "the first load is \(total) bytes gzipped over \(files.count) files")
    }
}
