import Foundation
import HummingbirdTesting
import NIOCore
import Testing

@testable import TonightServer

@Suite("City hub, promotions and advertisements")
struct PromotionsRouteTests {
    func admin(_ services: AppServices, _ client: any TestClientProtocol) async throws -> String {
        try await adminToken(services, client)
    }

    @Test(
        "the hub orders venues by tier, then liveness; highlights and taglines come from live promotions",
        arguments: Backend.available)
    func hub(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let admin = try await admin(services, client)
            let moderator = try await moderatorToken(services, client)
            let a = try await createPlace(client, token: moderator, name: "Alpha", lat: 44.6488, lon: -63.5752)
            let b = try await createPlace(client, token: moderator, name: "Bravo", lat: 44.6490, lon: -63.5760)
            let c = try await createPlace(client, token: moderator, name: "Charlie", lat: 44.6470, lon: -63.5740)
            let (ida, idb, idc) = (a["id"] as? String ?? "", b["id"] as? String ?? "", c["id"] as? String ?? "")
            let city = a["cityKey"] as? String ?? ""
            let author = try await client.member("author")
            let clip = try await insertPost(services, author: author.id, city: city, place: ida)
            try await services.database.sql.raw(
                "UPDATE posts SET poster_key = \(bind: "posts/\(clip)/poster.jpg") WHERE id = \(bind: clip)"
            ).run()
            let promoted = try await client.send(
                .put, "/v1/places/\(idb)/promotion", json: ["tier": 2, "tagline": "2-for-1 until 11"], token: admin)
            #expect(promoted.status == .ok, "\(promoted.text)")
            _ = try await client.send(
                .put, "/v1/places/\(idc)/promotion",
                json: ["tier": 5, "startsAt": "2020-01-01T00:00:00Z", "endsAt": "2020-02-01T00:00:00Z"], token: admin)
            #expect(
                try await client.send(.put, "/v1/places/\(ida)/promotion", json: ["tier": 1], token: moderator).status
                    == .forbidden)
            let bad = try await client.send(.put, "/v1/places/\(ida)/promotion", json: ["tier": 101], token: admin)
            #expect(bad.json.fieldErrors == ["tier"])
            let hub = try await client.send(
                .get, "/v1/cities/\(city.replacingOccurrences(of: " ", with: "%20"))/hub?near=44.6488,-63.5752"
            ).json
            let items = hub["items"] as? [JSON] ?? []
            try #require(items.count == 3, "\(hub)")
            #expect(items.compactMap { ($0["place"] as? JSON)?["name"] as? String } == ["Bravo", "Alpha", "Charlie"])
            #expect(
                items.first?["highlighted"] as? Bool == true && items.first?["tagline"] as? String == "2-for-1 until 11"
            )
            #expect(items[1]["clips"] as? Int == 1 && items[1]["highlighted"] as? Bool == false)
            #expect((items[1]["latestPosterUrl"] as? String)?.hasSuffix("/poster.jpg") == true)
            #expect(items[2]["tier"] as? Int == 0)
            _ = try await client.send(.delete, "/v1/places/\(idb)/promotion", token: admin)
            let after = try await client.send(.get, "/v1/cities/\(city.replacingOccurrences(of: " ", with: "%20"))/hub")
                .json
            #expect(
                (after["items"] as? [JSON])?.first.flatMap { ($0["place"] as? JSON)?["name"] as? String } == "Alpha")
        }
    }

    @Test(
        "ads go on the pages and feeds their patterns name; bad patterns are refused, catastrophic ones are harmless",
        arguments: Backend.available)
    func ads(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let admin = try await admin(services, client)
            let moderator = try await moderatorToken(services, client)
            let place = try await createPlace(client, token: moderator, name: "The Dome", lat: 44.6488, lon: -63.5752)
            let placeID = place["id"] as? String ?? ""
            let city = place["cityKey"] as? String ?? ""
            let parts = city.split(separator: "$").map(String.init)
            let area = "\(parts[1])$\(parts[2])"
            func create(_ feeds: [String], pages: [Int], style: Int = 0) async throws -> TestResponse {
                try await client.send(
                    .post, "/v1/ads",
                    json: [
                        "area": area, "mediaUrl": "https://ads.example/\(feeds.first ?? "")", "feeds": feeds,
                        "pages": pages, "style": style,
                    ],
                    token: admin)
            }
            let allFeed = try await create(["a:(\(parts[0])|Sydney)"], pages: [1], style: 1)
            #expect(allFeed.status == .created, "\(allFeed.text)")
            let venue = try await create(["v:the d.*", "p:nowhere"], pages: [1, 2])
            #expect(venue.status == .created)
            let catastrophic = try await create(["a(a+)+$"], pages: [1])
            #expect(catastrophic.status == .created)
            let refused = try await create(["a:(a", "x:foo", "v:(a)\\1"], pages: [0])
            #expect(refused.json.fieldErrors == ["feeds[0]", "feeds[1]", "feeds[2]", "pages"])
            #expect(try await create(["a:.*"], pages: [1]).status == .created)
            _ = try await client.send(
                .post, "/v1/ads",
                json: [
                    "area": "Elsewhere$XX", "mediaUrl": "https://ads.example/x", "feeds": ["a:.*"], "pages": [1],
                    "style": 0,
                ],
                token: admin)
            #expect(try await client.send(.get, "/v1/ads", token: moderator).status == .forbidden)
            #expect((try await client.send(.get, "/v1/ads", token: admin).json["items"] as? [JSON])?.count == 5)

            let author = try await client.member("author")
            for _ in 0..<3 { try await insertPost(services, author: author.id, city: city, place: placeID) }
            func adURLs(_ path: String) async throws -> [String] {
                let page = try await client.send(.get, path).json
                return (page["ads"] as? [JSON] ?? []).compactMap { $0["mediaUrl"] as? String }.sorted()
            }
            let cityPath = "/v1/cities/\(city.replacingOccurrences(of: " ", with: "%20"))/posts"
            #expect(
                try await adURLs(cityPath) == [
                    "https://ads.example/a:(\(parts[0])|Sydney)", "https://ads.example/a:.*",
                ])
            #expect(try await adURLs(cityPath + "?scope=pregame") == [])
            #expect(try await adURLs("/v1/places/\(placeID)/posts?limit=2") == ["https://ads.example/v:the d.*"])
            let first = try await client.send(.get, "/v1/places/\(placeID)/posts?limit=2").json
            let second = try await client.send(
                .get, "/v1/places/\(placeID)/posts?limit=2&cursor=\(first["nextCursor"] as? String ?? "")"
            ).json
            #expect(second["page"] as? Int == 2)
            #expect(
                (second["ads"] as? [JSON])?.compactMap { $0["mediaUrl"] as? String } == [
                    "https://ads.example/v:the d.*"
                ])
            // Deleting an ad takes it off the (cached) pages at once.
            let id = allFeed.json["id"] as? String ?? ""
            #expect(try await client.send(.delete, "/v1/ads/\(id)", token: admin).status == .noContent)
            #expect(try await adURLs(cityPath) == ["https://ads.example/a:.*"])
        }
    }

    @Test(
        "ad creatives: an uploaded image or sandboxed HTML page becomes the ad's media; anything else is refused",
        arguments: Backend.available)
    func creatives(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let admin = try await admin(services, client)
            let moderator = try await moderatorToken(services, client)
            let created = try await client.send(
                .post, "/v1/ads",
                json: [
                    "area": "Nova Scotia$CA", "mediaUrl": "https://ads.example/x", "feeds": ["a:.*"], "pages": [1],
                    "style": 0,
                ],
                token: admin)
            let id = created.json["id"] as? String ?? ""
            func upload(_ bytes: [UInt8], token: String) async throws -> TestResponse {
                let (body, type) = multipartBody([:], file: bytes, filename: "ad.bin", type: "application/octet-stream")
                return try await client.execute(
                    uri: "/v1/ads/\(id)/creative", method: .put,
                    headers: [.contentType: type, .authorization: "Bearer \(token)"], body: body.renamingPart())
            }
            #expect(try await upload(Array("<p>hi</p>".utf8), token: moderator).status == .forbidden)
            let zip = try await upload([0x50, 0x4B, 0x03, 0x04, 0xFF, 0xFE], token: admin)
            #expect(zip.status == .unsupportedMediaType, "\(zip.text)")
            let image = try await upload(try await Clips.jpeg(), token: admin)
            #expect(image.status == .ok, "\(image.text)")
            let imageURL = image.json["mediaUrl"] as? String ?? ""
            #expect(imageURL.hasPrefix("/v1/media/ads/\(id)/"))
            let served = try await client.send(.get, imageURL)
            #expect(served.status == .ok && served.headers[.contentType] == "image/jpeg")
            let page = try await upload(Array("<!doctype html><p>2-for-1 tonight</p>".utf8), token: admin)
            #expect(page.status == .ok, "\(page.text)")
            let html = try await client.send(.get, page.json["mediaUrl"] as? String ?? "")
            #expect(html.headers[.contentType] == "text/html; charset=utf-8")
            #expect(html.headers[.contentSecurityPolicy]?.hasPrefix("sandbox") == true)
            // The image it replaced is gone; deleting the ad removes the page too.
            #expect(try await client.send(.get, imageURL).status == .notFound)
            #expect(try await client.send(.delete, "/v1/ads/\(id)", token: admin).status == .noContent)
            #expect(try await services.posts.blobs.list(prefix: "ads/").isEmpty)
        }
    }
}

extension ByteBuffer {
    /// A multipart body from ``multipartBody`` with its file part named `file` instead of `media`.
    fileprivate func renamingPart() -> ByteBuffer {
        var bytes = Array(readableBytesView)
        let from = Array("name=\"media\"".utf8), to = Array("name=\"file\"".utf8)
        if let start = bytes.indices.first(where: { bytes[$0...].starts(with: from) }) {
            bytes.replaceSubrange(start..<start + from.count, with: to)
        }
        return ByteBuffer(bytes: bytes)
    }
}
