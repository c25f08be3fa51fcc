import Foundation
import Testing

@testable import TonightServer

/// The resumable uploads against a real tus client: PyPI's tuspy, driven by
/// `Tests/Uploads/tus_client.py` (installed by scripts/test; skipped without it unless
/// `TONIGHT_TEST_REQUIRE_TUS` is set).
@Suite("Resumable uploads with tuspy")
struct TusClientTests {
    static let available = PythonService.available(["tusclient"], requiredBy: "TONIGHT_TEST_REQUIRE_TUS")

    /// A clip of about 5 MB (noise does not compress), so cuts land at many offsets.
    static func clip() async throws -> (path: String, bytes: [UInt8]) {
        let bytes = try await Clips.make(
            "noisy.mp4",
            [
                "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-t", "4", "-vf", "noise=alls=60:allf=t",
                "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "10M", "-pix_fmt", "yuv420p",
            ])
        return (Clips.directory + "/noisy.mp4", bytes)
    }

    /// Runs one scenario of the tus client as `user`; returns its JSON report.
    private func tus(_ scenario: String, port: Int, token: String, file: String, _ extra: [String] = [])
        async throws -> JSON
    {
        let (status, line) = try await PythonService.run(
            "Uploads/tus_client.py",
            arguments: [scenario, "--base", "http://127.0.0.1:\(port)", "--token", token, "--file", file] + extra)
        #expect(status == 0, "tus_client.py \(scenario) exited \(status): \(line)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? JSON, "\(line)")
    }

    /// The original a post stores.
    private func original(_ postID: Any?, _ services: AppServices) async throws -> [UInt8] {
        let id = try #require(postID as? String)
        let record = try #require(try await services.postRepository.find(id: id))
        return try await services.posts.blobs.get(key: record.originalKey, range: nil).data
    }

    @Test("cut at random offsets and resumed, a wrong offset, expiry, racing clients", arguments: Backend.available)
    func tuspy(_ backend: Backend) async throws {
        guard Self.available else { return }
        try await withLiveApp(backend) { services, client in
            let port = try #require(client.port)
            let alice = try await client.member("alice")
            let (file, bytes) = try await Self.clip()

            let cut = try await tus(
                "cut", port: port, token: alice.token, file: file, ["--seed", "\(UInt32.random(in: 0...UInt32.max))"])
            #expect((cut["cuts"] as? Int ?? 0) >= 3, "\(cut)")
            let offsets = cut["offsets"] as? [Int] ?? []
            #expect(!offsets.isEmpty && offsets.allSatisfy { $0 > 0 } && offsets == offsets.sorted(), "\(cut)")
            #expect(try await original(cut["postId"], services) == bytes)

            let wrong = try await tus("wrong_offset", port: port, token: alice.token, file: file)
            #expect(wrong["status"] as? Int == 409, "\(wrong)")
            #expect(try await original(wrong["postId"], services) == bytes)

            // Expired: 410 while its row is kept, 404 once swept.
            let started = try await tus("start", port: port, token: alice.token, file: file)
            let url = try #require(started["url"] as? String)
            let id = try #require(url.split(separator: "/").last.map(String.init))
            try await services.database.sql.raw("UPDATE uploads SET expires_at = 1 WHERE id = \(bind: id)").run()
            let expired = try await tus("resume", port: port, token: alice.token, file: file, ["--url", url])
            #expect(expired["status"] as? Int == 410, "\(expired)")
            _ = try await UploadSweeper(uploads: services.uploads, interval: .seconds(60), logger: services.logger)
                .sweep()
            let swept = try await tus("resume", port: port, token: alice.token, file: file, ["--url", url])
            #expect(swept["status"] as? Int == 404, "\(swept)")

            let race = try await tus("race", port: port, token: alice.token, file: file)
            #expect(try await original(race["postId"], services) == bytes)
            #expect(try await rowCount("posts", in: services) == 3)
        }
    }
}
