import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import TonightServer

@Suite("Profile photos: uploaded, made square, stripped of metadata, served by this server alone")
struct ProfilePhotoTests {
    static let marker = "GPS-48.8584N-2.2945E"

    /// A 900×600 (or `size`) JPEG (or PNG) whose Exif segment carries ``marker``, as a phone's GPS
    /// tags would.
    static func photo(png: Bool = false, size: String = "900x600") async throws -> [UInt8] {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let plain = dir.file(png ? "plain.png" : "plain.jpg")
        try await MediaFixture.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size)", "-frames:v", "1", plain.path])
        let bytes = [UInt8](try Data(contentsOf: plain))
        guard !png else { return bytes }
        let app1 = Array("Exif".utf8) + [0, 0] + Array("MM".utf8) + [0, 42, 0, 0, 0, 8] + Array(marker.utf8)
        let segment: [UInt8] = [0xFF, 0xE1, UInt8((app1.count + 2) >> 8), UInt8((app1.count + 2) & 0xFF)] + app1
        return Array(bytes.prefix(2)) + segment + bytes.dropFirst(2)
    }

    /// Width and height from a JPEG's start-of-frame segment.
    static func jpegSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        var i = 2
        while i + 9 < bytes.count {
            guard bytes[i] == 0xFF else { return nil }
            let marker = bytes[i + 1]
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if [0xC0, 0xC1, 0xC2].contains(marker) {
                return (Int(bytes[i + 7]) << 8 | Int(bytes[i + 8]), Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]))
            }
            i += 2 + length
        }
        return nil
    }

    @Test(
        "a photo becomes a 512×512 JPEG without its metadata on our media; replaced, then removed",
        arguments: Backend.available)
    func uploadReplaceRemove(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let me = try await client.signUp("mia")
            let token = me.accessToken
            let first = try await client.upload(try await Self.photo(), type: "image/jpeg", token: token)
            #expect(first.status == .ok)
            let url = try #require(first.json["avatarUrl"] as? String)
            #expect(url.hasPrefix("/v1/media/avatars/\(me.user["id"] as? String ?? "")/") && url.hasSuffix(".jpg"))
            let served = try await client.send(.get, url)
            #expect(served.status == .ok && served.headers[.contentType] == "image/jpeg")
            let bytes = Array(served.body.readableBytesView)
            #expect(Self.jpegSize(bytes).map { [$0.width, $0.height] } == [512, 512])
            #expect(!String(decoding: bytes, as: UTF8.self).contains(Self.marker))
            #expect(!String(decoding: bytes, as: UTF8.self).contains("Exif"))
            // Everyone sees it on the profile; the same link.
            #expect(try await client.send(.get, "/v1/users/mia").json["avatarUrl"] as? String == url)

            // A PNG replaces it; the old file is gone.
            let second = try await client.upload(try await Self.photo(png: true), type: "image/png", token: token)
            let replaced = try #require(second.json["avatarUrl"] as? String)
            #expect(replaced != url && replaced.hasSuffix(".jpg"))
            #expect(try await client.send(.get, url).status == .notFound)
            #expect(try await client.send(.get, replaced).status == .ok)

            let removed = try await client.send(.delete, "/v1/me/photo", token: token)
            #expect(removed.status == .ok && removed.json["avatarUrl"] == nil)
            #expect(try await client.send(.get, replaced).status == .notFound)
        }
    }

    @Test("a HEIC photo (an iPhone's default) becomes the same square JPEG without its metadata")
    func heic() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let jpeg = dir.file("photo.jpg")
        try Data(try await Self.photo()).write(to: jpeg)
        let heic = try await Self.heic(from: jpeg, in: dir)
        try await withApp(.sqlite) { services, client in
            #expect(services.photos.processor.decodesHEIC)
            let token = try await client.signUp("hana").accessToken
            let answer = try await client.upload(heic, type: "image/heic", token: token)
            #expect(answer.status == .ok)
            let url = try #require(answer.json["avatarUrl"] as? String)
            let bytes = Array(try await client.send(.get, url).body.readableBytesView)
            #expect(Self.jpegSize(bytes).map { [$0.width, $0.height] } == [512, 512])
            #expect(!String(decoding: bytes, as: UTF8.self).contains(Self.marker))
            #expect(!String(decoding: bytes, as: UTF8.self).contains("Exif"))
        }
        // A HEIC larger than the limits is refused before libheif decodes it.
        let strict = MediaProcessor(tools: try MediaFixture.tools(), limits: MediaLimits(maxDimension: 800))
        let input = dir.file("big.heic")
        try Data(heic).write(to: input)
        await #expect(throws: MediaRejection.badDimensions(width: 900, height: 600)) {
            _ = try await strict.profilePhoto(input: input, container: .heic, side: 512, output: dir.file("out.jpg"))
        }
    }

    /// `jpeg` encoded as HEIC by libheif's `heif-enc` (its Exif carried over, as a phone's would be).
    static func heic(from jpeg: URL, in dir: Scratch) async throws -> [UInt8] {
        let output = dir.file("photo.heic")
        let encoder = try #require(MediaTools.resolve("heif-enc", path: ProcessInfo.processInfo.environment["PATH"]))
        let result = try await ProcessRunner(timeout: .seconds(60)).run(
            encoder, arguments: ["-q", "60", jpeg.path, "-o", output.path])
        try #require(result.succeeded, "heif-enc: \(result.firstErrorLine ?? "")")
        let bytes = [UInt8](try Data(contentsOf: output))
        #expect(try MediaFixture.sniff(output) == .heic)
        return bytes
    }

    @Test("avatarUrl takes only the member's own photo; a link to another host is refused and never shown")
    func onlyOwnPhotos() async throws {
        try await withApp(.sqlite) { services, client in
            let me = try await client.signUp("noah")
            let token = me.accessToken
            let other = try await client.send(
                .patch, "/v1/me", json: ["avatarUrl": "https://tracker.example/pixel.jpg"], token: token)
            #expect(other.status == .badRequest)
            #expect(other.text.contains("not_own_photo"))
            let someoneElses = try await client.send(
                .patch, "/v1/me", json: ["avatarUrl": "/v1/media/avatars/someone-else/x.jpg"], token: token)
            #expect(someoneElses.status == .badRequest)

            let url = try #require(
                try await client.upload(try await Self.photo(), type: "image/jpeg", token: token).json["avatarUrl"]
                    as? String)
            _ = try await client.send(.patch, "/v1/me", json: ["clear": ["avatarUrl"]], token: token)
            let back = try await client.send(
                .patch, "/v1/me", json: ["avatarUrl": url + "?expires=1&sig=x"], token: token)
            #expect(back.status == .ok && back.json["avatarUrl"] as? String == url)

            // A link stored before photos were ours alone is never handed out.
            let id = try #require(me.user["id"] as? String)
            var user = try #require(try await services.users.find(id: id))
            user.avatarUrl = "https://tracker.example/pixel.jpg"
            try await services.users.updateProfile(user)
            #expect(try await client.send(.get, "/v1/me", token: token).json["avatarUrl"] == nil)
            #expect(try await client.send(.get, "/v1/users/noah").json["avatarUrl"] == nil)
        }
    }

    @Test("what is not a JPEG, PNG or HEIC photo is refused with a reason, and nothing is stored")
    func refusals() async throws {
        try await withApp(.sqlite, configure: { $0.mediaWorkers = 1 }) { services, client in
            let token = try await client.signUp("olga").accessToken
            let dir = try Scratch()
            defer { dir.cleanup() }
            let clip = dir.file("clip.mp4")
            try await MediaFixture.mp4(clip, seconds: 1)
            let video = try await client.upload([UInt8](try Data(contentsOf: clip)), type: "image/jpeg", token: token)
            #expect(video.status == .unsupportedMediaType)
            let garbage = try await client.upload(Array(repeating: 7, count: 5000), type: "image/jpeg", token: token)
            #expect(garbage.status == .unsupportedMediaType)
            let heic = [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8) + [1, 2, 3]
            // A HEIC header on bytes that are not a picture: libheif cannot read it.
            let heicAnswer = try await client.upload(
                heic + Array(repeating: 7, count: 1000), type: "image/jpeg", token: token)
            #expect(heicAnswer.status == .badRequest && heicAnswer.text.contains("invalid_image"))
            // A JPEG header on bytes that are not a picture.
            let broken = try await client.upload(
                [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 1, count: 4000), type: "image/jpeg", token: token)
            #expect(broken.status == .badRequest && broken.text.contains("invalid_image"))
            let tooLarge = try await client.upload(
                Array(repeating: 0, count: ProfilePhotos.maxBytes + 1), type: "image/jpeg", token: token)
            #expect(tooLarge.status == .contentTooLarge)
            // Every conversion slot taken: 503 at once, not a queue.
            #expect(services.photos.running.take())
            let busy = try await client.upload(try await Self.photo(), type: "image/jpeg", token: token)
            #expect(busy.status == .serviceUnavailable && busy.headers[.retryAfter] != nil)
            #expect(busy.text.contains("media_busy"))
            services.photos.running.give()
            #expect(try await client.send(.get, "/v1/me", token: token).json["avatarUrl"] == nil)
            #expect(try await services.posts.blobs.list(prefix: "avatars/").isEmpty)
        }
    }

    @Test("deleting the account deletes its photo")
    func deletedWithAccount() async throws {
        try await withApp(.sqlite) { services, client in
            let token = try await client.signUp("pia").accessToken
            let url = try #require(
                try await client.upload(try await Self.photo(), type: "image/jpeg", token: token).json["avatarUrl"]
                    as? String)
            let deleted = try await client.send(
                .delete, "/v1/me", json: ["password": "a long enough passphrase"], token: token)
            #expect(deleted.status == .noContent)
            #expect(try await client.send(.get, url).status == .notFound)
            #expect(try await services.posts.blobs.list(prefix: "avatars/").isEmpty)
        }
    }
}

extension TestClientProtocol {
    /// `POST /v1/me/photo` with `bytes` as `type`.
    func upload(_ bytes: [UInt8], type: String, token: String) async throws -> TestResponse {
        try await execute(
            uri: "/v1/me/photo", method: .post, headers: [.contentType: type, .authorization: "Bearer \(token)"],
            body: ByteBuffer(bytes: bytes))
    }
}
