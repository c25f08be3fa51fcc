import Foundation
import Synchronization
import Testing
import TonightClient
import TonightServer

@Suite("Swift SDK: resumable uploads")
struct UploadClientTests {
    /// A 3-second MP4 (about 100 KB) made by ffmpeg.
    private func clip() async throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-\(UUID().uuidString).mp4")
        _ = try await ChildProcess(
            "/usr/bin/env",
            arguments: [
                "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "3", "-c:v",
                "libx264", "-pix_fmt", "yuv420p", file.path,
            ], standardError: 2
        ).exited()
        return file
    }

    /// The stored original of a post (the embedded server keeps media under its data directory).
    private func original(_ postID: String, _ services: AppServices) throws -> Data {
        let folder = services.config.dataDirectory + "/media/posts/" + postID
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("original") })
        return try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
    }

    @Test("in chunks; resumed from the server's offset after a cut; an expired upload says 410")
    func resumable() async throws {
        try await withServer { services, url in
            let file = try await clip()
            defer { try? FileManager.default.removeItem(at: file) }
            let bytes = try Data(contentsOf: file)
            let ana = TonightClient(serverURL: url)
            _ = try await ana.signUp(username: "ana", email: "ana@example.com", password: "a long enough passphrase")
            let draft = PostDraft(cityKey: "Halifax$Nova Scotia$CA", caption: "From the back #row")

            // Whole, in 20 kB chunks.
            let sent = Mutex<[Int64]>([])
            let post = try await ana.uploadPost(
                file: file, draft: draft, chunkSize: 20_000,
                progress: { done, _ in sent.withLock { $0.append(done) } })
            #expect(post.tags == ["row"])
            #expect(try original(post.id, services) == bytes)
            #expect(sent.withLock { $0.count } >= bytes.count / 20_000)

            // Cut after 10 kB: the app had only sent that much (here: a file that ends there). The
            // SDK goes on from the server's offset with the whole file.
            let upload = try await ana.startUpload(file: file, draft: draft)
            let cut = file.deletingLastPathComponent().appendingPathComponent("cut-\(UUID().uuidString).mp4")
            try bytes.prefix(10_000).write(to: cut)
            defer { try? FileManager.default.removeItem(at: cut) }
            await #expect(throws: CocoaError.self) { try await ana.resumeUpload(upload, file: cut) }
            #expect(try await ana.uploadOffset(upload).offset == 10_000)
            let firstOffset = Mutex<Int64?>(nil)
            let resumed = try await ana.resumeUpload(upload, file: file) { done, _ in
                firstOffset.withLock { if $0 == nil { $0 = done } }
            }
            #expect(firstOffset.withLock { $0 } == 10_000)
            #expect(try original(resumed.id, services) == bytes)

            // Expired: the SDK says so instead of retrying.
            let stale = try await ana.startUpload(file: file, draft: draft)
            try await services.database.sql.raw("UPDATE uploads SET expires_at = 1 WHERE id = \(bind: stale.id)").run()
            do {
                _ = try await ana.resumeUpload(stale, file: file)
                Issue.record("an expired upload was resumed")
            } catch let error as TonightError {
                // (Asked with HEAD: the answer has a status and no body.)
                #expect(error.status == 410)
            }
        }
    }
}
