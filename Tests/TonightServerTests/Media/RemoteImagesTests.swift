import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import TonightServer

/// A local image host: `/photo.jpg` (a 1200×800 JPEG with a GPS Exif marker), `/moved` (302 to
/// it), `/loop` (302 to itself), `/text` (not an image), `/huge` (over the size limit); it counts
/// the requests it gets.
func withImageHost(_ body: (_ base: String, _ hits: Hits) async throws -> Void) async throws {
    let photo = try await ProfilePhotoTests.photo(size: "1200x800")
    let hits = Hits()
    let router = Router()
    router.get("/photo.jpg") { _, _ in
        hits.add()
        return Response(
            status: .ok, headers: [.contentType: "image/jpeg"], body: .init(byteBuffer: ByteBuffer(bytes: photo)))
    }
    router.get("/moved") { _, _ in
        hits.add()
        return Response(status: .found, headers: [.location: "/photo.jpg"])
    }
    router.get("/loop") { _, _ in
        hits.add()
        return Response(status: .found, headers: [.location: "/loop"])
    }
    router.get("/text") { _, _ in
        hits.add()
        return "not an image"
    }
    router.get("/huge") { _, _ in
        hits.add()
        let bytes = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0, count: RemoteImages.maxBytes + 10)
        return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    try await withLocalServer(router) { port in try await body("http://127.0.0.1:\(port)", hits) }
}

/// Requests a test server received.
final class Hits: Sendable {
    private let value = Mutex(0)
    var count: Int { value.withLock { $0 } }
    func add() { value.withLock { $0 += 1 } }
}

@Suite("Catalogue images: served through our media, fetched once from public hosts only")
struct RemoteImagesTests {
    @Test(
        "a place's image link becomes ours; fetched once, re-encoded without metadata, then served from our media",
        arguments: Backend.available)
    func cached(backend: Backend) async throws {
        try await withImageHost { base, hits in
            try await withApp(backend, configure: { $0.imageProxyPrivateHosts = ["127.0.0.1"] }) { services, client in
                let mod = try await moderatorToken(services, client)
                var ids: [String: String] = [:]
                for path in ["/photo.jpg", "/moved", "/loop", "/text", "/huge"] {
                    let created = try await client.send(
                        .post, "/v1/places",
                        json: [
                            "name": "Bar \(path)", "category": "bar", "location": ["lat": 52.52, "lon": 13.405],
                            "imageURL": base + path,
                        ], token: mod)
                    #expect(created.status == .created, "\(created.text)")
                    let id = try #require(created.json["id"] as? String)
                    // Clients never see the other host's link.
                    #expect(created.json["imageURL"] as? String == "/v1/images/places/\(id)")
                    ids[path] = id
                }
                let link = "/v1/images/places/\(ids["/photo.jpg"] ?? "")"
                // Many at once: one fetch.
                let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                    for _ in 0..<8 { group.addTask { try await client.send(.get, link) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(answers.allSatisfy { $0.status == .found })
                let location = try #require(answers.first?.headers[.location])
                #expect(location.hasPrefix("/v1/media/remote/") && location.hasSuffix(".jpg"))
                #expect(hits.count == 1)
                let image = try await client.send(.get, location)
                #expect(image.status == .ok && image.headers[.contentType] == "image/jpeg")
                let bytes = Array(image.body.readableBytesView)
                let size = try #require(ProfilePhotoTests.jpegSize(bytes))
                #expect(size.width == 800 && (532...534).contains(size.height))
                #expect(!String(decoding: bytes, as: UTF8.self).contains(ProfilePhotoTests.marker))
                // Cached: no new fetch.
                #expect(try await client.send(.get, link).headers[.location] == location)
                #expect(hits.count == 1)

                // A redirect is followed (and checked again).
                #expect(try await client.send(.get, "/v1/images/places/\(ids["/moved"] ?? "")").status == .found)
                // What cannot be fetched or read is a 404, and not asked for again soon.
                for path in ["/loop", "/text", "/huge"] {
                    let before = hits.count
                    let refused = try await client.send(.get, "/v1/images/places/\(ids[path] ?? "")")
                    #expect(refused.status == .notFound, "\(path)")
                    #expect(try await client.send(.get, "/v1/images/places/\(ids[path] ?? "")").status == .notFound)
                    #expect(hits.count > before && hits.count <= before + 4, "\(path)")
                }
                let stored = try await services.posts.blobs.list(prefix: RemoteImages.folder)
                #expect(stored.count == 2)  // the photo, and the same bytes under the link that redirects
                #expect(try await client.send(.get, "/v1/images/places/nope").status == .notFound)
                #expect(try await client.send(.get, "/v1/images/users/\(ids["/photo.jpg"] ?? "")").status == .notFound)
            }
        }
    }

    @Test("private and loopback hosts are never fetched unless configured")
    func privateHosts() async throws {
        try await withImageHost { base, hits in
            try await withApp(.sqlite) { services, client in
                let mod = try await moderatorToken(services, client)
                for (name, url) in [("local", base + "/photo.jpg"), ("lan", "http://10.1.2.3/a.jpg")] {
                    let created = try await client.send(
                        .post, "/v1/places",
                        json: [
                            "name": name, "category": "bar", "location": ["lat": 52.52, "lon": 13.405], "imageURL": url,
                        ], token: mod)
                    let id = try #require(created.json["id"] as? String)
                    #expect(try await client.send(.get, "/v1/images/places/\(id)").status == .notFound)
                }
                #expect(hits.count == 0)
            }
        }
        for address in [
            "127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
            "192.88.99.1",
        ] {
            #expect(!PublicAddress.isPublic(try SocketAddress(ipAddress: address, port: 80)), "\(address)")
        }
        for address in [
            "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "ff02::1",
            "2002:a00:1::1", "2001:0:4136:e378::1", "3fff::1", "::7f00:1",
        ] {
            #expect(!PublicAddress.isPublic(try SocketAddress(ipAddress: address, port: 80)), "\(address)")
        }
        for address in ["93.184.216.34", "2a00:1450:4001:80b::200e", "::ffff:93.184.216.34", "2002:5db8:d822::1"] {
            #expect(PublicAddress.isPublic(try SocketAddress(ipAddress: address, port: 80)), "\(address)")
        }
        #expect(PublicAddress.isPlainHost("img.example.com") && PublicAddress.isPlainHost("::1"))
        #expect(!PublicAddress.isPlainHost("[v1.x]") && !PublicAddress.isPlainHost("a b"))
        #expect(!PublicAddress.isPlainHost(""))
    }

    /// A DNS server that never answers holds a lookup thread, never its caller (a push delivery or
    /// an image fetch): the caller gets a retryable refusal at the deadline, and the lookups that
    /// may wait at once are bounded.
    @Test("a DNS lookup that never answers is given up at its deadline")
    func dnsDeadline() async throws {
        let release = DispatchSemaphore(value: 0)
        // The lookup answers after 5 s: without a deadline the caller would get its address then.
        Task {
            try? await Task.sleep(for: .seconds(5))
            release.signal()
        }
        do {
            _ = try await PublicAddress.resolve("hangs.example", port: 443, allowing: [], deadline: .milliseconds(300))
            {
                _, _ in
                release.wait()
                return [try SocketAddress(ipAddress: "93.184.216.34", port: 443)]
            }
            Issue.record("a lookup that never answered resolved")
        } catch let refusal as PublicAddress.Refusal {
            #expect(refusal.unresolved, "\(refusal)")
        }
    }
}
