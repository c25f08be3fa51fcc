import Foundation
import Testing

@testable import TonightCore
@testable import TonightServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite struct ProcessRunnerTests {
    @Test func capturesOutputAndExitStatus() async throws {
        let runner = ProcessRunner(timeout: .seconds(10))
        let result = try await runner.run(
            "/bin/sh", arguments: ["-c", "printf out; printf 'first\\nsecond' >&2; exit 3"])
        #expect(result.status == 3 && !result.terminatedBySignal && !result.succeeded)
        #expect(String(decoding: result.stdout, as: UTF8.self) == "out")
        #expect(result.firstErrorLine == "first")
    }

    @Test func timeoutKillsTheChild() async throws {
        let runner = ProcessRunner(timeout: .seconds(1))
        let clock = ContinuousClock()
        let start = clock.now
        do {
            _ = try await runner.run("/bin/sleep", arguments: ["600"])
            Issue.record("sleep 600 finished within a 1 s timeout")
        } catch ProcessRunnerError.timedOut(_, let pid, _) {
            // Long before the child would have ended by itself (not a speed limit).
            #expect(clock.now - start < .seconds(300))
            #expect(pid > 0)
            #expect(kill(pid, 0) == -1 && errno == ESRCH, "child \(pid) is still there")
        }
    }

    @Test func cancellationKillsTheChild() async throws {
        let runner = ProcessRunner(timeout: .seconds(60))
        let clock = ContinuousClock()
        let start = clock.now
        let task = Task { try await runner.run("/bin/sleep", arguments: ["600"]) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Long before the child would have ended by itself (not a speed limit).
        #expect(clock.now - start < .seconds(300))
    }

    @Test func largeStdoutAndStderrTogetherDoNotDeadlock() async throws {
        let runner = ProcessRunner(timeout: .seconds(30), maxOutputBytes: 8 << 20)
        let script = "head -c 3000000 /dev/zero >&2; head -c 5000000 /dev/zero; head -c 3000000 /dev/zero >&2"
        let result = try await runner.run("/bin/sh", arguments: ["-c", script])
        #expect(result.succeeded)
        #expect(result.stdout.count == 5_000_000)
        #expect(result.stderr.count == runner.maxErrorBytes)
    }

    @Test func stdoutOverTheCapKillsTheChild() async throws {
        let runner = ProcessRunner(timeout: .seconds(30), maxOutputBytes: 1 << 20)
        await #expect(throws: ProcessRunnerError.outputTooLarge(executable: "/bin/cat", limit: 1 << 20)) {
            try await runner.run("/bin/cat", arguments: ["/dev/zero"])
        }
    }

    @Test func missingExecutableFailsToLaunch() async throws {
        let runner = ProcessRunner(timeout: .seconds(5))
        await #expect(throws: ProcessRunnerError.self) {
            try await runner.run("/nonexistent/ffmpeg", arguments: [])
        }
    }

    @Test func locateFindsToolsOnPathOnly() throws {
        let tools = try MediaFixture.tools()
        #expect(tools.ffmpeg.hasSuffix("/ffmpeg") && tools.ffprobe.hasSuffix("/ffprobe"))
        #expect(MediaTools.locate(path: "/nonexistent:/also-missing") == nil)
        #expect(MediaTools.locate(ffmpeg: "/nonexistent/ffmpeg") == nil)
        let explicit = MediaTools.locate(ffmpeg: tools.ffmpeg, ffprobe: tools.ffprobe, path: nil)
        #expect(explicit?.ffmpeg == tools.ffmpeg && explicit?.ffprobe == tools.ffprobe)
        #expect(explicit?.heif == nil)  // libheif's tools are looked up on the path only
        #expect(tools.heif != nil)  // scripts/test installs them: HEIC photos are tested
    }
}

@Suite struct MediaProbeParsingTests {
    private func probe(_ json: String, container: MediaContainer = .mp4) throws -> MediaProbe {
        try MediaProbe.parse(json: Data(json.utf8), container: container, fileSize: 1)
    }

    @Test func legacyRotateTagIsClockwise() throws {
        let p = try probe(
            #"{"streams":[{"index":0,"codec_type":"video","codec_name":"h264","width":1920,"height":1080,"tags":{"rotate":"90"}}]}"#
        )
        #expect(p.rotation == 270)
        #expect(p.displayWidth == 1080 && p.displayHeight == 1920)
    }

    @Test func displayMatrixWinsAndIsNormalised() throws {
        let p = try probe(
            #"{"streams":[{"index":0,"codec_type":"video","codec_name":"h264","width":8,"height":4,"tags":{"rotate":"90"},"side_data_list":[{"side_data_type":"Display Matrix","rotation":-90}]}]}"#
        )
        #expect(p.rotation == 270)
        #expect(MediaProbe.rotation(sideData: [.init(rotation: 180)], legacyTag: nil) == 180)
        #expect(MediaProbe.rotation(sideData: [.init(rotation: -180)], legacyTag: nil) == 180)
        #expect(MediaProbe.rotation(sideData: [.init(rotation: 89.6)], legacyTag: nil) == 90)
        #expect(MediaProbe.rotation(sideData: [], legacyTag: "nonsense") == 0)
    }

    @Test func coverArtIsNotAVideoStream() throws {
        let p = try probe(
            #"{"streams":[{"index":0,"codec_type":"audio","codec_name":"aac","channels":2},{"index":1,"codec_type":"video","codec_name":"mjpeg","width":600,"height":600,"disposition":{"attached_pic":1}}],"format":{"format_name":"mov,mp4","duration":"12.5"}}"#
        )
        #expect(p.videoStreamIndex == nil && p.hasAudio && p.duration == 12.5)
        #expect(throws: MediaRejection.noVideoStream) { try p.validate(MediaLimits()) }
    }

    @Test func frameRateAndDurationEdgeCases() throws {
        #expect(MediaProbe.rate("30000/1001").map { abs($0 - 29.97) < 0.01 } == true)
        #expect(MediaProbe.rate("0/0") == nil && MediaProbe.rate("abc") == nil)
        #expect(MediaProbe.seconds("N/A") == nil && MediaProbe.seconds("-1") == nil)
        #expect(throws: MediaRejection.self) { try probe("not json") }
    }
}
