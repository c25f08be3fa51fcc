import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing

@testable import TonightServer

extension HTTPField.Name {
    static let tusResumable = Self("Tus-Resumable")!
    static let uploadLength = Self("Upload-Length")!
    static let uploadMetadata = Self("Upload-Metadata")!
    static let uploadOffset = Self("Upload-Offset")!
    static let uploadChecksum = Self("Upload-Checksum")!
    static let tonightPostID = Self("Tonight-Post-Id")!
}

extension TestClientProtocol {
    /// `POST /v1/uploads` for `length` bytes with `fields` as tus metadata; returns the response.
    func createUpload(length: Int, fields: [String: String], token: String, headers extra: HTTPFields = [:])
        async throws -> TestResponse
    {
        let metadata = fields.sorted { $0.key < $1.key }
            .map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
        var headers: HTTPFields = [
            .authorization: "Bearer \(token)", .tusResumable: "1.0.0", .uploadLength: "\(length)",
            .uploadMetadata: metadata,
        ]
        for field in extra { headers[field.name] = field.value }
        return try await execute(uri: "/v1/uploads", method: .post, headers: headers, body: nil)
    }

    /// `PATCH` of `bytes` at `offset` to `location`.
    func patchUpload(
        _ location: String, offset: Int, bytes: ArraySlice<UInt8>, token: String, headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers: HTTPFields = [
            .authorization: "Bearer \(token)", .tusResumable: "1.0.0", .uploadOffset: "\(offset)",
            .contentType: "application/offset+octet-stream",
        ]
        for field in extra { headers[field.name] = field.value }
        return try await execute(uri: location, method: .patch, headers: headers, body: ByteBuffer(bytes: bytes))
    }

    /// `HEAD` of `location`.
    func headUpload(_ location: String, token: String) async throws -> TestResponse {
        try await execute(
            uri: location, method: .head, headers: [.authorization: "Bearer \(token)", .tusResumable: "1.0.0"],
            body: nil)
    }
}

private let city = ["city": "Halifax$Nova Scotia$CA"]

@Suite("Resumable uploads (tus 1.0)")
struct ResumableUploadTests {
    @Test("create, resume from the server's offset, finish into a post byte for byte", arguments: Backend.available)
    func roundTrip(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let alice = try await client.member("alice")
            let options = try await client.execute(uri: "/v1/uploads", method: .options, headers: [:], body: nil)
            #expect(options.status == .noContent)
            #expect(options.headers[.init("Tus-Version")!] == "1.0.0")
            #expect(options.headers[.init("Tus-Extension")!] == "creation,expiration,termination,checksum")
            #expect(options.headers[.init("Tus-Max-Size")!] == "\(services.config.mediaMaxBytes)")
            let clip = try await Clips.mp4()
            let created = try await client.createUpload(
                length: clip.count,
                fields: city.merging(["caption": "From a bad network #salsa", "filename": "a.mp4"]) {
                    $1
                }, token: alice.token)
            #expect(created.status == .created, "\(created.text)")
            #expect(created.headers[.tusResumable] == "1.0.0")
            let location = try #require(created.headers[.location])
            #expect(location.hasPrefix("/v1/uploads/"))
            let expires = try #require(created.headers[.init("Upload-Expires")!])
            #expect(HTTPDate.parse(expires) != nil, "\(expires)")
            #expect(try await client.headUpload(location, token: alice.token).headers[.uploadOffset] == "0")

            let first = try await client.patchUpload(location, offset: 0, bytes: clip[0..<10_000], token: alice.token)
            #expect(first.status == .noContent, "\(first.text)")
            #expect(first.headers[.uploadOffset] == "10000")
            #expect(first.headers[.tonightPostID] == nil)
            // A resume from a stale offset is refused; the server's offset is unchanged.
            let stale = try await client.patchUpload(location, offset: 0, bytes: clip[0..<10_000], token: alice.token)
            #expect(stale.status == .conflict)
            #expect(stale.json["code"] as? String == "offset_mismatch")
            let head = try await client.headUpload(location, token: alice.token)
            #expect(head.headers[.uploadOffset] == "10000" && head.headers[.uploadLength] == "\(clip.count)")
            #expect(head.headers[.cacheControl] == "no-store")

            let rest = clip[10_000...]
            let digest = Data(Insecure.SHA1.hash(data: Array(rest))).base64EncodedString()
            let last = try await client.patchUpload(
                location, offset: 10_000, bytes: rest, token: alice.token,
                headers: [.uploadChecksum: "sha1 \(digest)"])
            #expect(last.status == .noContent, "\(last.text)")
            #expect(last.headers[.uploadOffset] == "\(clip.count)")
            let postID = try #require(last.headers[.tonightPostID])
            let post = try await client.send(.get, "/v1/posts/\(postID)", token: alice.token).json
            #expect(post["caption"] as? String == "From a bad network #salsa")
            #expect(post["tags"] as? [String] == ["salsa"])
            let record = try #require(try await services.postRepository.find(id: postID))
            let stored = try await services.posts.blobs.get(key: record.originalKey, range: nil).data
            #expect(stored == clip)
            // The finished upload answers its post; a repeated last PATCH (its answer lost) too.
            #expect(try await client.headUpload(location, token: alice.token).headers[.tonightPostID] == postID)
            let again = try await client.patchUpload(location, offset: clip.count, bytes: [], token: alice.token)
            #expect(again.status == .noContent && again.headers[.tonightPostID] == postID)
            #expect(try await rowCount("posts", in: services) == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: services.config.resumableUploadDirectory) == [])
        }
    }

    @Test(
        "refusals: version, size, fields, owner, content type, checksum, overrun, format", arguments: Backend.available)
    func refusals(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let alice = try await client.member("alice")
            let bob = try await client.member("bob")
            let clip = try await Clips.mp4()
            // No Tus-Resumable: 412 naming the version, before anything else.
            let unversioned = try await client.execute(
                uri: "/v1/uploads", method: .post,
                headers: [.authorization: "Bearer \(alice.token)", .uploadLength: "10"], body: nil)
            #expect(unversioned.status == .preconditionFailed)
            #expect(unversioned.headers[.init("Tus-Version")!] == "1.0.0")
            #expect(unversioned.json["code"] as? String == "unsupported_version")
            let negative = try await client.createUpload(length: -1_000_000_000_000, fields: city, token: alice.token)
            #expect(
                negative.status == .badRequest && negative.json.fieldErrors == ["Upload-Length"], "\(negative.text)")
            let tooLarge = try await client.createUpload(
                length: services.config.mediaMaxBytes + 1, fields: city, token: alice.token)
            #expect(tooLarge.status == .contentTooLarge && tooLarge.json["code"] as? String == "media_too_large")
            let noCity = try await client.createUpload(length: 100, fields: [:], token: alice.token)
            #expect(noCity.status == .badRequest && noCity.json.fieldErrors == ["city"], "\(noCity.text)")
            let garbled = try await client.createUpload(
                length: 100, fields: [:], token: alice.token, headers: [.uploadMetadata: "city %%%"])
            #expect(garbled.status == .badRequest, "\(garbled.text)")
            let anonymous = try await client.send(.post, "/v1/auth/anonymous").json.accessToken
            #expect(try await client.createUpload(length: 100, fields: city, token: anonymous).status == .forbidden)
            #expect(try await rowCount("uploads", in: services) == 0)

            let location = try #require(
                try await client.createUpload(length: clip.count, fields: city, token: alice.token)
                    .headers[.location])
            // A creation retried with its key (its answer lost) is the same upload; another length is not.
            let keyed = city.merging(["uploadKey": "k-1"]) { $1 }
            let first = try await client.createUpload(length: 1000, fields: keyed, token: alice.token)
            let again = try await client.createUpload(length: 1000, fields: keyed, token: alice.token)
            #expect(first.status == .created && again.headers[.location] == first.headers[.location])
            let longer = try await client.createUpload(length: 2000, fields: keyed, token: alice.token)
            #expect(longer.status == .created && longer.headers[.location] != first.headers[.location])
            let badKey = try await client.createUpload(
                length: 1000, fields: city.merging(["uploadKey": "a b"]) { $1 }, token: alice.token)
            #expect(badKey.json.fieldErrors == ["uploadKey"])
            // Someone else's upload does not exist for them.
            #expect(try await client.headUpload(location, token: bob.token).status == .notFound)
            #expect(
                try await client.patchUpload(location, offset: 0, bytes: clip[0..<100], token: bob.token).status
                    == .notFound)
            let wrongType = try await client.patchUpload(
                location, offset: 0, bytes: clip[0..<100], token: alice.token,
                headers: [.contentType: "application/octet-stream"])
            #expect(wrongType.status == .unsupportedMediaType, "\(wrongType.text)")
            let badSum = try await client.patchUpload(
                location, offset: 0, bytes: clip[0..<5000], token: alice.token,
                headers: [.uploadChecksum: "sha1 \(Data(Insecure.SHA1.hash(data: [1, 2, 3])).base64EncodedString())"])
            #expect(badSum.status.code == 460 && badSum.json["code"] as? String == "checksum_mismatch")
            let md5 = try await client.patchUpload(
                location, offset: 0, bytes: clip[0..<5000], token: alice.token, headers: [.uploadChecksum: "md5 AAAA"])
            #expect(md5.status == .badRequest && md5.json["code"] as? String == "unsupported_checksum")
            var overrun = clip
            overrun.append(0)
            #expect(
                try await client.patchUpload(location, offset: 0, bytes: overrun[...], token: alice.token).status
                    == .badRequest)
            // None of the refused bytes were kept.
            #expect(try await client.headUpload(location, token: alice.token).headers[.uploadOffset] == "0")

            // Bytes that are no media format end the upload at the first 64 bytes.
            let zip: [UInt8] = [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0x41, count: 200)
            let other = try #require(
                try await client.createUpload(length: zip.count + 1000, fields: city, token: alice.token)
                    .headers[.location])
            let refused = try await client.patchUpload(other, offset: 0, bytes: zip[...], token: alice.token)
            #expect(refused.status == .unsupportedMediaType && refused.json["code"] as? String == "unsupported_media")
            #expect(try await client.headUpload(other, token: alice.token).status == .notFound)
            #expect(try await rowCount("posts", in: services) == 0)
        }
    }

    @Test("five open uploads per member, a cap on unfinished bytes, termination", arguments: Backend.available)
    func limits(_ backend: Backend) async throws {
        try await withApp(backend, configure: { $0.uploadsHeldMB = 20 }) { services, client in
            let alice = try await client.member("alice")
            let bob = try await client.member("bob")
            var locations: [String] = []
            for _ in 0..<ResumableUploads.perUser {
                let created = try await client.createUpload(length: 1000, fields: city, token: alice.token)
                #expect(created.status == .created)
                locations.append(created.headers[.location] ?? "")
            }
            let sixth = try await client.createUpload(length: 1000, fields: city, token: alice.token)
            #expect(sixth.status == .tooManyRequests && sixth.json["code"] as? String == "too_many_uploads")
            // Termination frees a place and deletes the bytes.
            let deleted = try await client.execute(
                uri: locations[0], method: .delete,
                headers: [.authorization: "Bearer \(alice.token)", .tusResumable: "1.0.0"], body: nil)
            #expect(deleted.status == .noContent)
            #expect(try await client.headUpload(locations[0], token: alice.token).status == .notFound)
            #expect(try await client.createUpload(length: 1000, fields: city, token: alice.token).status == .created)
            // Twenty creations racing for one member: exactly five get a place.
            let carol = try await client.member("carol")
            let raced = try await client.concurrentStatuses(20) { _ in
                try await client.createUpload(length: 1000, fields: city, token: carol.token)
            }
            #expect(raced.filter { $0 == .created }.count == ResumableUploads.perUser, "\(raced)")
            #expect(raced.filter { $0 == .tooManyRequests }.count == 20 - ResumableUploads.perUser)
            // Unfinished bytes held in all: 20 MB here.
            let big = try await client.createUpload(length: 20 << 20, fields: city, token: bob.token)
            #expect(big.status.code == 507 && big.json["code"] as? String == "uploads_full", "\(big.text)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: services.config.resumableUploadDirectory).count
                    == 2 * ResumableUploads.perUser)
        }
    }

    @Test(
        "an expired upload is 410, then swept with its file; leftovers go after the grace", arguments: Backend.available
    )
    func expiry(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let alice = try await client.member("alice")
            let clip = try await Clips.mp4()
            let location = try #require(
                try await client.createUpload(length: clip.count, fields: city, token: alice.token)
                    .headers[.location])
            #expect(
                try await client.patchUpload(location, offset: 0, bytes: clip[0..<1000], token: alice.token).status
                    == .noContent)
            let id = String(location.dropFirst("/v1/uploads/".count))
            try await services.database.sql.raw("UPDATE uploads SET expires_at = 1 WHERE id = \(bind: id)").run()
            let gone = try await client.headUpload(location, token: alice.token)
            #expect(gone.status == .gone && gone.json["code"] as? String == "upload_expired")
            let resumed = try await client.patchUpload(location, offset: 1000, bytes: clip[1000...], token: alice.token)
            #expect(resumed.status == .gone)
            // A file with no upload (a crash between finishing and removing it) is a leftover.
            let leftover = services.uploads.path("leftover")
            FileManager.default.createFile(atPath: leftover, contents: Data([1, 2, 3]))
            let sweeper = UploadSweeper(uploads: services.uploads, interval: .seconds(60), logger: services.logger)
            #expect(try await sweeper.sweep() == 1)
            #expect(try await client.headUpload(location, token: alice.token).status == .notFound)
            #expect(!FileManager.default.fileExists(atPath: services.uploads.path(id)))
            #expect(FileManager.default.fileExists(atPath: leftover))
            #expect(try await sweeper.sweep(now: Date().addingTimeInterval(7200)) == 1)
            #expect(!FileManager.default.fileExists(atPath: leftover))
        }
    }

    @Test("twenty clients racing on one upload: one writes, the file stays whole", arguments: Backend.available)
    func racing(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let alice = try await client.member("alice")
            let clip = try await Clips.mp4()
            let location = try #require(
                try await client.createUpload(length: clip.count, fields: city, token: alice.token)
                    .headers[.location])
            let half = clip.count / 2
            let first = try await client.concurrentStatuses(20) { index in
                // Half send the first half, half all of it: every writer starts at 0.
                try await client.patchUpload(
                    location, offset: 0, bytes: index % 2 == 0 ? clip[0..<half] : clip[...], token: alice.token)
            }
            #expect(first.filter { $0 == .noContent }.count == 1, "\(first)")
            #expect(first.allSatisfy { [.noContent, .conflict].contains($0) || $0.code == 423 }, "\(first)")
            let offset = Int(try await client.headUpload(location, token: alice.token).headers[.uploadOffset] ?? "")
            let held = try #require(offset)
            #expect(held == half || held == clip.count)
            if held < clip.count {
                let rest = try await client.concurrentStatuses(20) { _ in
                    try await client.patchUpload(location, offset: half, bytes: clip[half...], token: alice.token)
                }
                #expect(rest.filter { $0 == .noContent }.count == 1, "\(rest)")
            }
            let postID = try #require(try await client.headUpload(location, token: alice.token).headers[.tonightPostID])
            let record = try #require(try await services.postRepository.find(id: postID))
            #expect(try await services.posts.blobs.get(key: record.originalKey, range: nil).data == clip)
            #expect(try await rowCount("posts", in: services) == 1)
        }
    }
}

@Suite("Resumable uploads: stalled clients")
struct StalledUploadTests {
    @Test("a PATCH that stops sending is ended after the idle time, its bytes kept and the upload free")
    func stalled() async throws {
        // Each request on a connection of its own: a refused PATCH's unread body ends its connection.
        try await withLiveApp(.sqlite, configure: { $0.uploadIdleSeconds = 2 }) { services, client in
            let port = try #require(client.port)
            func send(
                _ method: NIOHTTP1.HTTPMethod, _ path: String, headers: [(String, String)] = [],
                _ body: ArraySlice<UInt8>? = nil
            ) async throws -> (status: UInt, headers: HTTPHeaders, text: String) {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                request.method = method
                request.headers.add(name: "Connection", value: "close")
                for (name, value) in headers { request.headers.add(name: name, value: value) }
                if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
                return (response.status.code, response.headers, text)
            }
            let signup = try await send(
                .POST, "/v1/auth/signup", headers: [("Content-Type", "application/json")],
                Array(#"{"username":"alice","email":"alice@example.com","password":"a long enough passphrase"}"#.utf8)[
                    ...])
            let token = try #require(
                (try JSONSerialization.jsonObject(with: Data(signup.text.utf8)) as? JSON)?.accessToken)
            let tus = [("Authorization", "Bearer \(token)"), ("Tus-Resumable", "1.0.0")]
            let clip = try await Clips.mp4()
            let created = try await send(
                .POST, "/v1/uploads",
                headers: tus + [
                    ("Upload-Length", "\(clip.count)"),
                    ("Upload-Metadata", "city " + Data("Halifax$Nova Scotia$CA".utf8).base64EncodedString()),
                ])
            let location = try #require(created.headers.first(name: "Location"), "\(created.text)")
            // A phone that lost its network: on a connection that already answered a request (so no
            // first-request deadline applies), 1,000 of the promised bytes, then nothing, left open.
            let phone = try await RawConnection(port: port)
            try await phone.send(
                "HEAD \(location) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\n"
                    + "Tus-Resumable: 1.0.0\r\n\r\n")
            _ = try await phone.receive { $0.contains("\r\n\r\n") }
            try await phone.send(
                "PATCH \(location) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\n"
                    + "Tus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n"
                    + "Content-Length: \(clip.count)\r\n\r\n")
            try await phone.send(bytes: ByteBuffer(bytes: clip[0..<1000]))
            // Another connection resumes from the server's offset once the stalled one is ended.
            var status: UInt = 423
            #expect(
                try await eventually(within: .seconds(60)) {
                    let head = try await send(.HEAD, location, headers: tus)
                    guard head.headers.first(name: "Upload-Offset") == "1000" else { return false }
                    // While the stalled request holds the upload, the answer is 423, sent before this
                    // body is read, and the connection closes: the client may see only the close.
                    do {
                        status = try await send(
                            .PATCH, location,
                            headers: tus + [
                                ("Upload-Offset", "1000"), ("Content-Type", "application/offset+octet-stream"),
                            ], clip[1000...]
                        ).status
                    } catch is HTTPClientError {
                        return false
                    }
                    return status != 423
                })
            #expect(status == 204)
            await phone.close()
            let postID = try #require(
                try await send(.HEAD, location, headers: tus).headers.first(name: "Tonight-Post-Id"))
            let record = try #require(try await services.postRepository.find(id: postID))
            #expect(try await services.posts.blobs.get(key: record.originalKey, range: nil).data == clip)
        }
    }
}
