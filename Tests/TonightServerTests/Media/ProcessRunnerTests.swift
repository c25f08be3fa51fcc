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

    /// A server with ~1,400 connections open encodes a clip. Foundation's `Process.run()` copied 256
    /// bytes out of each `/proc/self/fd` entry, past glibc's buffer once it fills (about 1,365
    /// descriptors): before ``ChildProcess`` this crashed the test process with SIGSEGV in 4 of 5
    /// runs (and crashed CI's whole test run at 1,354 descriptors).
    @Test func childrenStartWhileThousandsOfDescriptorsAreOpen() async throws {
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let extra = max(0, 1_370 - open)
        try #require(limit.rlim_cur > rlim_t(open + extra + 200), "RLIMIT_NOFILE \(limit.rlim_cur) is too low")
        let held = (0..<extra).map { _ in Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }
        defer { held.forEach { _ = close($0) } }
        let runner = ProcessRunner(timeout: .seconds(30))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var succeeded = 0
                    for _ in 0..<250 {
                        if try await runner.run("/bin/true", arguments: []).succeeded { succeeded += 1 }
                    }
                    return succeeded
                }
            }
            var succeeded = 0
            for try await count in group { succeeded += count }
            #expect(succeeded == 2_000)
        }
    }

    /// The child gets standard input, output and error and nothing else of the server's.
    @Test func childInheritsOnlyItsStandardDescriptors() async throws {
        let leaked = Glibc.open("/dev/null", O_RDONLY)  // not close-on-exec
        defer { _ = close(leaked) }
        let result = try await ProcessRunner(timeout: .seconds(10)).run(
            "/bin/sh", arguments: ["-c", "ls /proc/$$/fd"])
        #expect(result.succeeded)
        #expect(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").sorted() == ["0", "1", "2"])
    }

    /// A child starts with an empty signal mask and default handlers, so SIGTERM ends it even when
    /// it was started from a thread that blocks SIGTERM, and it sees a closed pipe as the signal.
    @Test func childStartsWithDefaultSignals() async throws {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let child = try ChildProcess("/bin/sleep", arguments: ["600"])
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        child.terminate()
        #expect(await child.exited() == .init(status: SIGTERM, bySignal: true))
        #expect(!child.isRunning)
        let status = try await ProcessRunner(timeout: .seconds(10)).run(
            "/bin/grep", arguments: ["-E", "^(SigBlk|SigIgn)", "/proc/self/status"])
        // The standard signals (1–31; glibc keeps two real-time ones for itself).
        let masks = String(decoding: status.stdout, as: UTF8.self).split(separator: "\n").map {
            ($0.split(separator: "\t").last.flatMap { UInt64($0, radix: 16) } ?? .max) & 0x7fff_ffff
        }
        #expect(masks == [0, 0], "\(String(decoding: status.stdout, as: UTF8.self))")
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
