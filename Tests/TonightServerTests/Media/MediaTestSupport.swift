import Foundation
import Testing

@testable import TonightCore
@testable import TonightServer

/// A fresh temporary directory, removed by `cleanup()`.
struct Scratch {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("mediakit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

enum MediaFixture {
    /// ffmpeg and ffprobe; the tests require them.
    static func tools() throws -> MediaTools { try #require(MediaTools.locate()) }

    /// Runs ffmpeg with `arguments` and requires success.
    static func ffmpeg(_ arguments: [String]) async throws {
        let result = try await tryFFmpeg(arguments)
        #expect(result.succeeded, "ffmpeg \(arguments.joined(separator: " ")): \(result.firstErrorLine ?? "")")
        try #require(result.succeeded)
    }

    /// Runs ffmpeg with `arguments`, whatever the outcome.
    static func tryFFmpeg(_ arguments: [String]) async throws -> ProcessOutput {
        let runner = ProcessRunner(timeout: .seconds(120))
        return try await runner.run(
            try tools().ffmpeg, arguments: ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"] + arguments)
    }

    static let testVideo = ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25"]
    static let testTone = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100"]

    /// 640×360 H.264 + AAC MP4 of `seconds`.
    static func mp4(_ url: URL, seconds: Double = 3, size: String = "640x360") async throws {
        try await ffmpeg(
            ["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25"] + testTone
                + ["-t", "\(seconds)", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", url.path])
    }

    /// The first 64 bytes of `url`, sniffed.
    static func sniff(_ url: URL) throws -> MediaContainer? {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return ContainerSniffer.sniff([UInt8](try handle.read(upToCount: 64) ?? Data()))
    }

    /// Top-level ISO BMFF box types in file order.
    static func topLevelBoxes(_ url: URL) throws -> [String] {
        let bytes = [UInt8](try Data(contentsOf: url))
        var boxes: [String] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            var size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            boxes.append(String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self))
            if size == 1, offset + 16 <= bytes.count {
                size = bytes[offset + 8..<offset + 16].reduce(0) { $0 << 8 | Int($1) }
            } else if size == 0 {
                break
            }
            guard size >= 8 else { break }
            offset += size
        }
        return boxes
    }

    /// Whether the file starts with the JPEG SOI marker.
    static func isJPEG(_ url: URL) throws -> Bool {
        try Data(contentsOf: url).prefix(3) == Data([0xFF, 0xD8, 0xFF])
    }

    /// Whether the file starts with the PNG signature.
    static func isPNG(_ url: URL) throws -> Bool {
        try Data(contentsOf: url).prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }
}

/// Asserts that `operation` throws a ``MediaRejection`` and returns it.
func expectRejection(
    _ operation: () async throws -> ProcessedMedia, sourceLocation: SourceLocation = #_sourceLocation
) async -> MediaRejection? {
    do {
        let result = try await operation()
        Issue.record("expected a rejection, got \(result)", sourceLocation: sourceLocation)
    } catch let rejection as MediaRejection {
        return rejection
    } catch {
        Issue.record("expected a rejection, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
