import Foundation
import TonightCore

/// Limits applied to uploads and to the processing of one upload.
struct MediaLimits: Sendable, Equatable {
    /// Longest accepted clip, in seconds.
    var maxDuration: Double
    /// Largest accepted coded width or height, in pixels.
    var maxDimension: Int
    /// Long side of transcoded video (never upscaled), in pixels; rounded down to even.
    var videoLongSide: Int
    /// Long side of re-encoded stills (never upscaled), in pixels; rounded down to even.
    var stillLongSide: Int
    /// Largest accepted file, in bytes — the only limit checked when ffmpeg is missing.
    var maxBytes: Int64
    /// Wall-clock limit for each ffmpeg/ffprobe run. A run past it refuses the upload (a file
    /// that takes that long would take it again), it is not retried.
    var timeout: Duration
    /// The most pixels a clip may make ffmpeg decode: width × height × frame rate × duration.
    /// The default is a 60 s 4K clip at 60 fps (what phones record); an 8192×8192 clip at 60 fps is
    /// eight times that, and is refused at probe time instead of costing minutes of CPU.
    var maxDecodedPixels: Double

    /// Limits with the given values (defaults: 60 s, 8192 px, 1280 px video, 2048 px stills,
    /// 500 MiB, 120 s per tool run, 3840 × 2160 × 60 fps × 60 s of pixels).
    init(
        maxDuration: Double = 60, maxDimension: Int = 8192, videoLongSide: Int = 1280, stillLongSide: Int = 2048,
        maxBytes: Int64 = 500 << 20, timeout: Duration = .seconds(120),
        maxDecodedPixels: Double = 3840 * 2160 * 60 * 60
    ) {
        self.maxDecodedPixels = maxDecodedPixels
        self.maxDuration = maxDuration
        self.maxDimension = maxDimension
        self.videoLongSide = videoLongSide
        self.stillLongSide = stillLongSide
        self.maxBytes = maxBytes
        self.timeout = timeout
    }
}

/// The result of processing one upload.
struct ProcessedMedia: Sendable, Equatable {
    /// What was known about the input.
    var probe: MediaProbe
    /// The file to serve: a new file in the work directory, or the original input when it is
    /// served as is (``transcoded`` false).
    var output: URL
    /// MIME type of ``output``.
    var outputContentType: String
    /// Poster image (JPEG for videos; for stills the output image itself), nil when none.
    var poster: URL?
    /// MIME type of ``poster``.
    var posterContentType: String?
    /// Tempo of the audio (bpm rounded to 0.1), nil without audio or without a clear beat.
    var tempo: TempoEstimate?
    /// Width of ``output`` in pixels, nil when not probed.
    var width: Int?
    /// Height of ``output`` in pixels, nil when not probed.
    var height: Int?
    /// Duration of ``output`` in seconds, nil for stills and when not probed.
    var duration: Double?
    /// Whether ``output`` was produced by ffmpeg (false: the original is served as is).
    var transcoded: Bool
}

extension MediaContainer {
    /// The ffmpeg demuxer forced for this container, so ffmpeg never guesses the format
    /// (no playlists, image sequences or other surprises hiding behind a sniffed header).
    var demuxer: String? {
        switch self {
        case .mp4, .mov: "mov"
        case .webm: "matroska"
        case .jpeg: "jpeg_pipe"
        case .png: "png_pipe"
        case .heic: nil
        }
    }
}

/// Turns an upload into servable files: probe, validate, transcode, poster, tempo.
///
/// * **Video** (mp4, mov, webm) → `video.mp4`: H.264 (libx264 veryfast, CRF 23, yuv420p,
///   square pixels), long side ≤ ``MediaLimits/videoLongSide``, even dimensions, rotation
///   applied by ffmpeg's autorotate (the output carries none), AAC 128 kb/s (stereo at most)
///   or no audio, metadata (e.g. GPS) stripped, `moov` before `mdat` (faststart). Encoding
///   stops at `maxDuration + 1` s, so a clip whose duration was unknown or understated is
///   still caught as too long. Poster `poster.jpg`: a frame at min(1 s, duration / 2) of the
///   output. Tempo: the output's audio as mono 22.05 kHz float PCM through ``TempoEstimator``.
/// * **JPEG / PNG** → `image.jpg` / `image.png`: always re-encoded in the same format (PNG
///   keeps transparency), long side ≤ ``MediaLimits/stillLongSide``, EXIF orientation
///   applied, metadata stripped (privacy: no GPS). The poster is that same file.
/// * **HEIC** is refused (``MediaRejection/unsupportedCodec(_:)``): ffmpeg's HEIF support varies
///   by version (none in 5.x, tile grids only in recent releases), and undecoded bytes, with
///   their metadata, are never served. Uploads and imports refuse it before this.
/// * **No ffmpeg** (`tools` nil): every upload is served as the original, with no poster and
///   no tempo; only the file size can be checked (duration, codec and dimensions are unknown).
///
/// Errors: ``MediaRejection`` means the media is bad (fail the post with its message): this
/// includes a tool run past ``MediaLimits/timeout`` (the same file would take as long again, and
/// five retries cost ten CPU-minutes). Anything else (``MediaInfrastructureError``, other
/// ``ProcessRunnerError``s, `CancellationError`) is a problem of the machine and worth retrying.
/// A tool failure counts as infrastructure when its error output names an environmental
/// cause (disk full, out of memory, permissions) or it was killed by SIGKILL/SIGTERM/SIGINT/SIGHUP
/// (e.g. the OOM killer); otherwise it is a rejection.
struct MediaProcessor: Sendable {
    /// The tools to use; nil serves originals untouched.
    let tools: MediaTools?
    /// Limits to enforce.
    let limits: MediaLimits

    /// A processor using `tools` (nil when ffmpeg is not installed) within `limits`.
    init(tools: MediaTools?, limits: MediaLimits = MediaLimits()) {
        self.tools = tools
        self.limits = limits
    }

    /// Probes and converts `input` (already sniffed as `container`) into files inside
    /// `workDirectory` (created if needed; existing `video.mp4`, `poster.jpg`, `image.*` are
    /// overwritten). Throws ``MediaRejection`` for bad media, other errors for infrastructure.
    func process(input: URL, container: MediaContainer, workDirectory: URL) async throws -> ProcessedMedia {
        do {
            return try await convert(input: input, container: container, workDirectory: workDirectory)
        } catch ProcessRunnerError.timedOut {
            throw MediaRejection.tooSlow(limit: limits.timeout)
        }
    }

    private func convert(input: URL, container: MediaContainer, workDirectory: URL) async throws -> ProcessedMedia {
        let size = try fileSize(of: input)
        guard size > 0 else { throw MediaRejection.empty }
        guard size <= limits.maxBytes else { throw MediaRejection.tooLarge(bytes: size, limit: limits.maxBytes) }
        // Uploads and imports refuse HEIC (ffmpeg 5 cannot decode it); posts stored before that
        // are refused here rather than served undecoded.
        if container == .heic { throw MediaRejection.unsupportedCodec("HEIC") }
        guard let tools else {
            return ProcessedMedia(
                probe: MediaProbe(container: container, fileSize: size), output: input,
                outputContentType: container.contentType, transcoded: false)
        }
        do {
            try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        } catch {
            throw MediaInfrastructureError.workDirectoryUnavailable("\(error)")
        }
        let probe = try await self.probe(input: input, container: container, size: size, tools: tools)
        try probe.validate(limits)
        if ContainerSniffer.isVideo(container) {
            return try await processVideo(input: input, probe: probe, tools: tools, workDirectory: workDirectory)
        }
        return try await processStill(input: input, probe: probe, tools: tools, workDirectory: workDirectory)
    }

    /// Whether HEIC stills can be decoded (libheif's tools are installed).
    var decodesHEIC: Bool { tools?.heif != nil }

    /// A profile photo: the still in `input` (JPEG, PNG, or HEIC with ``decodesHEIC``) as a square
    /// JPEG of at most `side` pixels without metadata, written to `output`. Throws
    /// ``MediaRejection`` for what is not such a still within the limits (a video included), other
    /// errors for infrastructure; false without ffmpeg (nothing written: the caller keeps the
    /// original, as posts do).
    func profilePhoto(input: URL, container: MediaContainer, side: Int, output: URL) async throws -> Bool {
        try await jpeg(input: input, container: container, output: output) { input, container, index in
            FFmpegCommands.squarePhoto(input: input, container: container, stream: index, side: side, output: output)
        }
    }

    /// The still in `input` (as for ``profilePhoto(input:container:side:output:)``) as a JPEG whose
    /// long side is at most ``MediaLimits/stillLongSide``, without metadata, written to `output`.
    func jpegStill(input: URL, container: MediaContainer, output: URL) async throws -> Bool {
        try await jpeg(input: input, container: container, output: output) { input, container, index in
            FFmpegCommands.reencodeStill(
                input: input, container: container, stream: index, format: .jpeg, longSide: limits.stillLongSide,
                output: output)
        }
    }

    /// Probes and checks the still in `input`, then runs the ffmpeg `command` for it (HEIC decoded
    /// by libheif first) and its image stream.
    private func jpeg(
        input: URL, container: MediaContainer, output: URL,
        command: (_ input: URL, _ container: MediaContainer, _ stream: Int) -> [String]
    ) async throws -> Bool {
        guard container == .jpeg || container == .png || (container == .heic && decodesHEIC) else {
            throw MediaRejection.unsupportedCodec(container.rawValue)
        }
        guard let tools else { return false }
        do {
            if container == .heic, let heif = tools.heif {
                let decoded = URL(fileURLWithPath: input.path + ".heic.jpg")
                defer { try? FileManager.default.removeItem(at: decoded) }
                try await decodeHEIC(input, with: heif, to: decoded)
                return try await jpeg(input: decoded, container: .jpeg, output: output, command: command)
            }
            let probe = try await self.probe(
                input: input, container: container, size: try fileSize(of: input), tools: tools)
            try probe.validate(limits)
            guard let index = probe.videoStreamIndex else { throw MediaRejection.noVideoStream }
            try await runFFmpeg(command(input, container, index), tools: tools, input: input, expecting: output)
            return true
        } catch ProcessRunnerError.timedOut {
            throw MediaRejection.tooSlow(limit: limits.timeout)
        }
    }

    /// Decodes the HEIC still in `input` to a JPEG at `output` with libheif, after `heif-info` has
    /// shown that every image in it is within ``MediaLimits/maxDimension`` (libheif would otherwise
    /// allocate whatever the header claims).
    private func decodeHEIC(_ input: URL, with heif: (info: String, convert: String), to output: URL) async throws {
        let runner = ProcessRunner(timeout: limits.timeout, maxOutputBytes: 1 << 20)
        let info = try await runner.run(heif.info, arguments: [input.path])
        guard info.succeeded else {
            throw classify(info, tool: "heif-info", input: input, rejection: MediaRejection.unreadable)
        }
        let sizes = String(decoding: info.stdout, as: UTF8.self).matches(of: /image: (\d+)x(\d+)/)
            .map { (Int($0.output.1) ?? .max, Int($0.output.2) ?? .max) }
        guard !sizes.isEmpty else { throw MediaRejection.noVideoStream }
        if let (width, height) = sizes.first(where: { max($0.0, $0.1) > limits.maxDimension }) {
            throw MediaRejection.badDimensions(width: width, height: height)
        }
        let converted = try await runner.run(heif.convert, arguments: ["-q", "95", input.path, output.path])
        guard converted.succeeded, (try? fileSize(of: output)) ?? 0 > 0 else {
            try? FileManager.default.removeItem(at: output)
            throw classify(converted, tool: "heif-convert", input: input, rejection: MediaRejection.transcodeFailed)
        }
    }

    /// Runs ffprobe on `input` and parses the result (not validated against limits).
    /// Throws ``MediaRejection`` when ffprobe cannot read it.
    func probe(input: URL, container: MediaContainer) async throws -> MediaProbe {
        guard let tools else { throw MediaInfrastructureError.toolFailed(tool: "ffprobe", detail: "not installed") }
        return try await probe(input: input, container: container, size: try fileSize(of: input), tools: tools)
    }

    // MARK: - Steps

    private func probe(input: URL, container: MediaContainer, size: Int64, tools: MediaTools) async throws
        -> MediaProbe
    {
        let runner = ProcessRunner(timeout: limits.timeout, maxOutputBytes: 4 << 20)
        let arguments = FFmpegCommands.probe(input: input, container: container)
        let output: ProcessOutput
        do {
            output = try await runner.run(tools.ffprobe, arguments: arguments)
        } catch ProcessRunnerError.outputTooLarge {
            throw MediaRejection.unreadable("too many streams")
        }
        guard output.succeeded else {
            throw classify(output, tool: "ffprobe", input: input, rejection: MediaRejection.unreadable)
        }
        return try MediaProbe.parse(json: output.stdout, container: container, fileSize: size)
    }

    private func processVideo(input: URL, probe: MediaProbe, tools: MediaTools, workDirectory: URL) async throws
        -> ProcessedMedia
    {
        guard let videoIndex = probe.videoStreamIndex else { throw MediaRejection.noVideoStream }
        let video = workDirectory.appendingPathComponent("video.mp4")
        let arguments = FFmpegCommands.transcodeVideo(
            input: input, container: probe.container, videoStream: videoIndex, audioStream: probe.audioStreamIndex,
            audioChannels: probe.audioChannels, limits: limits, output: video)
        try await runFFmpeg(arguments, tools: tools, input: input, expecting: video)

        let result = try await self.probe(input: video, container: .mp4)
        let duration = result.duration ?? 0
        // Encoding stops at maxDuration + 1, so an over-long clip of unknown length ends here.
        if duration > limits.maxDuration + 0.5 {
            try? FileManager.default.removeItem(at: video)
            throw MediaRejection.tooLong(seconds: probe.duration ?? duration, limit: limits.maxDuration)
        }
        let poster = try await makePoster(from: video, duration: duration, tools: tools, workDirectory: workDirectory)
        let tempo = result.hasAudio ? try await estimateTempo(of: video, tools: tools) : nil
        return ProcessedMedia(
            probe: probe, output: video, outputContentType: "video/mp4", poster: poster,
            posterContentType: poster == nil ? nil : "image/jpeg", tempo: tempo,
            width: result.width, height: result.height, duration: result.duration, transcoded: true)
    }

    private func processStill(input: URL, probe: MediaProbe, tools: MediaTools, workDirectory: URL) async throws
        -> ProcessedMedia
    {
        guard let index = probe.videoStreamIndex else { throw MediaRejection.noVideoStream }
        let format: MediaContainer = probe.container == .png ? .png : .jpeg
        let image = workDirectory.appendingPathComponent(format == .png ? "image.png" : "image.jpg")
        let arguments = FFmpegCommands.reencodeStill(
            input: input, container: probe.container, stream: index, format: format,
            longSide: limits.stillLongSide, output: image)
        try await runFFmpeg(arguments, tools: tools, input: input, expecting: image)
        let result = try await self.probe(input: image, container: format)
        return ProcessedMedia(
            probe: probe, output: image, outputContentType: format.contentType, poster: image,
            posterContentType: format.contentType, width: result.width, height: result.height, transcoded: true)
    }

    /// A JPEG frame of the (already scaled and rotated) output; nil when ffmpeg cannot make one.
    private func makePoster(from video: URL, duration: Double, tools: MediaTools, workDirectory: URL) async throws
        -> URL?
    {
        let poster = workDirectory.appendingPathComponent("poster.jpg")
        // Some clips have no decodable frame at the seek point; the first frame always is.
        for time in [min(1, duration / 2), 0] {
            try? FileManager.default.removeItem(at: poster)
            let arguments = FFmpegCommands.poster(input: video, at: time, output: poster)
            do {
                try await runFFmpeg(arguments, tools: tools, input: video, expecting: poster)
                return poster
            } catch is MediaRejection {
                continue
            } catch MediaInfrastructureError.missingOutput {
                continue
            }
        }
        return nil
    }

    /// Tempo of `video`'s first audio stream; nil when there is no clear beat or decoding fails.
    private func estimateTempo(of video: URL, tools: MediaTools) async throws -> TempoEstimate? {
        let sampleRate = 22050
        let maxBytes = Int((limits.maxDuration + 2) * Double(sampleRate)) * 4 + (1 << 20)
        let runner = ProcessRunner(timeout: limits.timeout, maxOutputBytes: maxBytes)
        let output = try await runner.run(
            tools.ffmpeg, arguments: FFmpegCommands.extractPCM(input: video, sampleRate: sampleRate))
        guard output.succeeded else {
            let error = classify(output, tool: "ffmpeg", input: video, rejection: MediaRejection.transcodeFailed)
            if error is MediaRejection { return nil }
            throw error
        }
        let samples = Self.floats(littleEndian: output.stdout)
        guard var tempo = TempoEstimator.estimate(samples: samples, sampleRate: sampleRate) else { return nil }
        tempo.bpm = (tempo.bpm * 10).rounded() / 10
        return tempo
    }

    // MARK: - Helpers

    /// Runs ffmpeg; throws a rejection or infrastructure error on failure, and
    /// ``MediaInfrastructureError/missingOutput(_:)`` when `expecting` is missing or empty after success.
    private func runFFmpeg(_ arguments: [String], tools: MediaTools, input: URL, expecting file: URL) async throws {
        let runner = ProcessRunner(timeout: limits.timeout, maxOutputBytes: 1 << 20)
        let output = try await runner.run(tools.ffmpeg, arguments: arguments)
        guard output.succeeded else {
            try? FileManager.default.removeItem(at: file)
            throw classify(output, tool: "ffmpeg", input: input, rejection: MediaRejection.transcodeFailed)
        }
        guard (try? fileSize(of: file)) ?? 0 > 0 else {
            throw MediaInfrastructureError.missingOutput(file.lastPathComponent)
        }
    }

    /// Rejection or infrastructure error for a failed tool run (see the type documentation).
    private func classify(
        _ output: ProcessOutput, tool: String, input: URL, rejection: (String) -> MediaRejection
    ) -> any Error {
        let line = output.firstErrorLine.map { Self.clean($0, input: input) }
        if output.terminatedBySignal {
            if [SIGKILL, SIGTERM, SIGINT, SIGHUP].contains(output.status) {
                return MediaInfrastructureError.toolFailed(tool: tool, detail: "killed by signal \(output.status)")
            }
            return rejection(line ?? "\(tool) crashed with signal \(output.status)")
        }
        if MediaInfrastructureError.isEnvironmental(output.stderr) {
            return MediaInfrastructureError.toolFailed(tool: tool, detail: line ?? "exit status \(output.status)")
        }
        return rejection(line ?? "\(tool) exited with status \(output.status)")
    }

    /// An error line fit for users: no server paths, no `@ 0x…` context addresses.
    static func clean(_ line: String, input: URL) -> String {
        var text = line.replacingOccurrences(of: "file:" + input.path, with: input.lastPathComponent)
            .replacingOccurrences(of: input.path, with: input.lastPathComponent)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]"),
            let at = text.range(of: " @ 0x", range: text.startIndex..<close)
        {
            text.removeSubrange(at.lowerBound..<close)
        }
        return String(text.prefix(300)).trimmingCharacters(in: .whitespaces)
    }

    private func fileSize(of url: URL) throws -> Int64 {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            guard (attributes[.type] as? FileAttributeType) == .typeRegular else {
                throw MediaInfrastructureError.inputUnavailable("\(url.lastPathComponent) is not a regular file")
            }
            return (attributes[.size] as? NSNumber)?.int64Value ?? 0
        } catch let error as MediaInfrastructureError {
            throw error
        } catch {
            throw MediaInfrastructureError.inputUnavailable("\(url.lastPathComponent): \(error.localizedDescription)")
        }
    }

    /// Decodes little-endian 32-bit floats (trailing partial sample dropped).
    static func floats(littleEndian data: Data) -> [Float] {
        let count = data.count / 4
        return data.withUnsafeBytes { raw in
            (0..<count).map { i in
                Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)))
            }
        }
    }
}
