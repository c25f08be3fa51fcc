import Foundation
import Testing

@testable import TonightCore
@testable import TonightServer

@Suite struct MediaProcessorTests {
    let processor: MediaProcessor

    init() throws {
        processor = MediaProcessor(tools: try MediaFixture.tools())
    }

    /// Checks a processed video: H.264 (+ AAC when `audio`) MP4 of the expected size, faststart,
    /// unrotated, with a JPEG poster of the same size.
    private func expectPlayable(
        _ result: ProcessedMedia, width: Int, height: Int, audio: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(result.transcoded, sourceLocation: sourceLocation)
        #expect(result.outputContentType == "video/mp4", sourceLocation: sourceLocation)
        #expect(try MediaFixture.sniff(result.output) == .mp4, sourceLocation: sourceLocation)
        let boxes = try MediaFixture.topLevelBoxes(result.output)
        let moov = try #require(boxes.firstIndex(of: "moov"), sourceLocation: sourceLocation)
        let mdat = try #require(boxes.firstIndex(of: "mdat"), sourceLocation: sourceLocation)
        #expect(moov < mdat, "faststart: \(boxes)", sourceLocation: sourceLocation)

        let out = try await processor.probe(input: result.output, container: .mp4)
        #expect(out.videoCodec == "h264", sourceLocation: sourceLocation)
        #expect(out.audioCodec == (audio ? "aac" : nil), sourceLocation: sourceLocation)
        #expect(out.rotation == 0, sourceLocation: sourceLocation)
        #expect(out.width == width && out.height == height, sourceLocation: sourceLocation)
        #expect(result.width == width && result.height == height, sourceLocation: sourceLocation)

        let poster = try #require(result.poster, sourceLocation: sourceLocation)
        #expect(result.posterContentType == "image/jpeg", sourceLocation: sourceLocation)
        #expect(try MediaFixture.isJPEG(poster), sourceLocation: sourceLocation)
        let posterProbe = try await processor.probe(input: poster, container: .jpeg)
        #expect(posterProbe.width == width && posterProbe.height == height, sourceLocation: sourceLocation)
    }

    @Test func mp4WithAudioBecomesFaststartH264AAC() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("in.mp4")
        try await MediaFixture.mp4(input)
        #expect(try MediaFixture.sniff(input) == .mp4)

        let result = try await processor.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        try await expectPlayable(result, width: 640, height: 360, audio: true)
        #expect(result.probe.videoCodec == "h264")
        #expect(result.probe.hasAudio && result.probe.audioCodec == "aac")
        #expect(result.probe.frameRate == 25)
        #expect(abs((result.probe.duration ?? 0) - 3) < 0.1)
        #expect(abs((result.duration ?? 0) - 3) < 0.1)
    }

    @Test func webmBecomesH264AAC() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("in.webm")
        try await MediaFixture.ffmpeg(
            MediaFixture.testVideo + MediaFixture.testTone
                + ["-t", "3", "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "500k"]
                + ["-c:a", "libopus", input.path])
        #expect(try MediaFixture.sniff(input) == .webm)

        let result = try await processor.process(input: input, container: .webm, workDirectory: dir.file("work"))
        #expect(result.probe.videoCodec == "vp8" && result.probe.audioCodec == "opus")
        #expect(result.probe.formatName == "matroska,webm")
        try await expectPlayable(result, width: 640, height: 360, audio: true)
    }

    @Test func movBecomesH264AAC() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("in.mov")
        try await MediaFixture.ffmpeg(
            MediaFixture.testVideo + MediaFixture.testTone
                + ["-t", "2", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-f", "mov", input.path])
        #expect(try MediaFixture.sniff(input) == .mov)

        let result = try await processor.process(input: input, container: .mov, workDirectory: dir.file("work"))
        try await expectPlayable(result, width: 640, height: 360, audio: true)
    }

    @Test func clipWithoutAudioHasNoAudioStreamAndNoTempo() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("silent.mp4")
        try await MediaFixture.ffmpeg(
            MediaFixture.testVideo + ["-t", "2", "-c:v", "libx264", "-preset", "ultrafast", input.path])

        let result = try await processor.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        #expect(!result.probe.hasAudio)
        #expect(result.tempo == nil)
        try await expectPlayable(result, width: 640, height: 360, audio: false)
    }

    @Test func rotatedPortraitClipComesOutUpright() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let plain = dir.file("plain.mp4")
        let input = dir.file("rotated.mp4")
        try await MediaFixture.mp4(plain, seconds: 2)
        // ffmpeg ≥ 6 has -display_rotation (counter-clockwise); 5.x maps the legacy tag to the same matrix.
        let modern = try await MediaFixture.tryFFmpeg([
            "-display_rotation", "90", "-i", plain.path, "-c", "copy", input.path,
        ])
        if !modern.succeeded {
            try await MediaFixture.ffmpeg(["-i", plain.path, "-c", "copy", "-metadata:s:v", "rotate=90", input.path])
        }

        let result = try await processor.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        #expect(result.probe.rotation == 90)
        #expect(result.probe.width == 640 && result.probe.height == 360)
        #expect(result.probe.displayWidth == 360 && result.probe.displayHeight == 640)
        try await expectPlayable(result, width: 360, height: 640, audio: true)
    }

    @Test func largeClipIsScaledToLongSideKeepingAspect() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("big.mp4")
        try await MediaFixture.mp4(input, seconds: 1, size: "1920x1080")

        let result = try await processor.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        try await expectPlayable(result, width: 1280, height: 720, audio: true)
    }

    @Test func jpegStillIsScaledAndIsItsOwnPoster() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("photo.jpg")
        try await MediaFixture.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=3000x1000", "-frames:v", "1", input.path])
        #expect(try MediaFixture.sniff(input) == .jpeg)

        let result = try await processor.process(input: input, container: .jpeg, workDirectory: dir.file("work"))
        #expect(result.probe.imageCodec == "mjpeg" && result.probe.videoCodec == nil)
        #expect(result.probe.duration == nil)
        #expect(result.outputContentType == "image/jpeg")
        #expect(try MediaFixture.isJPEG(result.output))
        #expect(result.width == 2048 && result.height == 682)
        #expect(result.poster == result.output && result.posterContentType == "image/jpeg")
        #expect(result.tempo == nil && result.duration == nil)
    }

    @Test func jpegExifOrientationIsApplied() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let plain = dir.file("plain.jpg")
        try await MediaFixture.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x180", "-frames:v", "1", plain.path])
        // Insert an APP1 Exif segment with Orientation = 6 ("rotate 90° clockwise to display").
        let tiff: [UInt8] =
            [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 1]  // "MM", 42, IFD at 8, one entry
            + [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0]  // Orientation, SHORT, 1, value 6
            + [0, 0, 0, 0]  // no next IFD
        let app1 = Array("Exif".utf8) + [0, 0] + tiff
        let segment: [UInt8] = [0xFF, 0xE1, UInt8((app1.count + 2) >> 8), UInt8((app1.count + 2) & 0xFF)] + app1
        let jpeg = [UInt8](try Data(contentsOf: plain))
        let input = dir.file("oriented.jpg")
        try Data(jpeg.prefix(2) + segment + jpeg.dropFirst(2)).write(to: input)

        let result = try await processor.process(input: input, container: .jpeg, workDirectory: dir.file("work"))
        #expect(result.probe.rotation == 270)
        #expect(result.probe.displayWidth == 180 && result.probe.displayHeight == 320)
        #expect(result.width == 180 && result.height == 320)
    }

    @Test func pngStillStaysPNG() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("shot.png")
        try await MediaFixture.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360", "-frames:v", "1", input.path])
        #expect(try MediaFixture.sniff(input) == .png)

        let result = try await processor.process(input: input, container: .png, workDirectory: dir.file("work"))
        #expect(result.probe.imageCodec == "png")
        #expect(result.outputContentType == "image/png")
        #expect(try MediaFixture.isPNG(result.output))
        #expect(result.width == 640 && result.height == 360)
        #expect(result.poster == result.output)
    }

    /// Failed before: any bytes after an `ftypheic` header became a ready post served as image/heic.
    @Test func heicIsRefusedNeverServedUndecoded() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("photo.heic")
        // ftyp box, brand "heic", compatible "mif1" "heic", then filler.
        let ftyp: [UInt8] = [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
        try Data(ftyp + [UInt8](repeating: 7, count: 1000)).write(to: input)
        #expect(try MediaFixture.sniff(input) == .heic)
        await #expect(throws: MediaRejection.self) {
            _ = try await processor.process(input: input, container: .heic, workDirectory: dir.file("work"))
        }
        // Uploads refuse it with its own reason before storing anything.
        #expect(throws: UploadFile.Problem.heic) { try UploadFile.accepted(.heic) }
        #expect(UploadFile.Problem.heic.apiError().detail.contains("HEIC"))
    }

    @Test func clipLongerThanLimitIsRejected() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("long.mp4")
        try await MediaFixture.mp4(input, seconds: 3)
        let strict = MediaProcessor(tools: try MediaFixture.tools(), limits: MediaLimits(maxDuration: 2))

        let rejection = await expectRejection {
            try await strict.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        }
        guard case .tooLong(let seconds, let limit) = rejection else {
            Issue.record("expected tooLong, got \(String(describing: rejection))")
            return
        }
        #expect(abs(seconds - 3) < 0.1 && limit == 2)
        #expect(rejection?.message.contains("too long") == true)
    }

    @Test("a clip too heavy to decode is refused at probe time; a phone's minute of 4K at 60 fps is not")
    func heavyClipIsRejectedAtProbe() async throws {
        func probe(_ width: Int, _ height: Int, fps: Double?, seconds: Double?) -> MediaProbe {
            var probe = MediaProbe(container: .mp4, fileSize: 24 << 20)
            probe.videoStreamIndex = 0
            probe.videoCodec = "h264"
            (probe.width, probe.height, probe.frameRate, probe.duration) = (width, height, fps, seconds)
            return probe
        }
        let limits = MediaLimits()
        #expect(throws: Never.self) { try probe(3840, 2160, fps: 60, seconds: 60).validate(limits) }
        #expect(throws: MediaRejection.tooHeavy(width: 8192, height: 8192, frameRate: 60)) {
            try probe(8192, 8192, fps: 60, seconds: 60).validate(limits)
        }
        // Unknown rate and duration count as the most allowed.
        #expect(throws: MediaRejection.tooHeavy(width: 8192, height: 4320, frameRate: nil)) {
            try probe(8192, 4320, fps: nil, seconds: nil).validate(limits)
        }
    }

    @Test("a conversion past the time limit refuses the upload instead of being retried")
    func slowConversionIsARefusal() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("slow.mp4")
        try await MediaFixture.mp4(input, seconds: 1)
        let hurried = MediaProcessor(tools: try MediaFixture.tools(), limits: MediaLimits(timeout: .milliseconds(1)))
        let rejection = await expectRejection {
            try await hurried.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        }
        #expect(rejection == .tooSlow(limit: .milliseconds(1)), "\(String(describing: rejection))")
    }

    @Test func oversizedDimensionsAreRejected() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("wide.mp4")
        try await MediaFixture.mp4(input, seconds: 1)
        let strict = MediaProcessor(tools: try MediaFixture.tools(), limits: MediaLimits(maxDimension: 600))

        let rejection = await expectRejection {
            try await strict.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        }
        #expect(rejection == .badDimensions(width: 640, height: 360))
    }

    @Test func truncatedMP4IsRejectedWithReason() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let full = dir.file("full.mp4")
        try await MediaFixture.mp4(full, seconds: 2)
        let input = dir.file("truncated.mp4")
        try Data(contentsOf: full).prefix(2048).write(to: input)

        let rejection = await expectRejection {
            try await processor.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        }
        guard case .unreadable(let reason) = rejection else {
            Issue.record("expected unreadable, got \(String(describing: rejection))")
            return
        }
        #expect(reason.contains("moov atom not found"))
        #expect(!reason.contains(dir.url.path), "no server paths in user-facing reasons: \(reason)")
        #expect(!reason.contains("@ 0x"))
    }

    @Test func emptyFileIsRejected() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("empty.mp4")
        try Data().write(to: input)
        let rejection = await expectRejection {
            try await processor.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        }
        #expect(rejection == .empty)
    }

    @Test func randomBytesAreRejected() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("noise.mp4")
        var rng = SplitMix64(seed: 42)
        try Data((0..<50_000).map { _ in UInt8.random(in: 0...255, using: &rng) }).write(to: input)
        let rejection = await expectRejection {
            try await processor.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        }
        #expect(rejection != nil)
        #expect(!(rejection?.message.isEmpty ?? true))
    }

    @Test func audioOnlyMP4HasNoVideoStream() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("audio.mp4")
        try await MediaFixture.ffmpeg(MediaFixture.testTone + ["-t", "1", "-c:a", "aac", input.path])
        let rejection = await expectRejection {
            try await processor.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        }
        #expect(rejection == .noVideoStream)
    }

    @Test func missingInputIsAnInfrastructureError() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        await #expect(throws: MediaInfrastructureError.self) {
            try await processor.process(input: dir.file("gone.mp4"), container: .mp4, workDirectory: dir.file("work"))
        }
    }

    @Test(arguments: [90.0, 128.0])
    func tempoOfClickTrackIsFound(bpm: Double) async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let sampleRate = 22050
        let clicks = ClickTrack.clicks(bpm: bpm, seconds: 10, sampleRate: sampleRate)
        let raw = dir.file("clicks.raw")
        try clicks.withUnsafeBufferPointer { Data(buffer: $0) }.write(to: raw)  // little-endian host
        let input = dir.file("clicks.mp4")
        try await MediaFixture.ffmpeg(
            ["-f", "f32le", "-ar", "\(sampleRate)", "-ac", "1", "-i", raw.path]
                + ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-shortest"]
                + ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", input.path])

        let result = try await processor.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        let tempo = try #require(result.tempo)
        #expect(abs(tempo.bpm - bpm) <= 2, "estimated \(tempo.bpm) for \(bpm)")
        #expect(tempo.bpm == (tempo.bpm * 10).rounded() / 10)
        #expect(tempo.beats.count >= 10)
    }

    @Test func withoutToolsTheOriginalIsServed() async throws {
        let dir = try Scratch()
        defer { dir.cleanup() }
        let input = dir.file("in.mp4")
        try await MediaFixture.mp4(input, seconds: 1)
        let bare = MediaProcessor(tools: nil)

        let result = try await bare.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        #expect(result.output == input && !result.transcoded)
        #expect(result.outputContentType == "video/mp4")
        #expect(result.poster == nil && result.tempo == nil)
        #expect(result.probe.duration == nil && result.probe.fileSize > 0)
        #expect(!FileManager.default.fileExists(atPath: dir.file("work").path))

        let tiny = MediaProcessor(tools: nil, limits: MediaLimits(maxBytes: 100))
        let rejection = await expectRejection {
            try await tiny.process(input: input, container: .mp4, workDirectory: dir.file("work"))
        }
        guard case .tooLarge = rejection else {
            Issue.record("expected tooLarge, got \(String(describing: rejection))")
            return
        }
    }
}
