import Foundation
import TonightCore

/// What ffprobe (or, without ffmpeg, container sniffing alone) knows about an upload.
///
/// `rotation` follows ffprobe's display-matrix convention (and ffmpeg's `-display_rotation`):
/// degrees **counter-clockwise** the coded picture is turned for display, normalised to
/// 0, 90, 180 or 270. A legacy `rotate` tag (clockwise) is converted; JPEG EXIF orientation
/// appears the same way (ffprobe exposes it as frame side data). Mirroring is ignored.
struct MediaProbe: Sendable, Equatable {
    /// The container the upload was sniffed as.
    var container: MediaContainer
    /// ffprobe's `format_name` (e.g. `mov,mp4,m4a,3gp,3g2,mj2`); nil without ffprobe.
    var formatName: String?
    /// Duration in seconds; nil for stills, when unknown (e.g. some browser-recorded WebM) or
    /// without ffprobe.
    var duration: Double?
    /// Codec of the first video stream (cover art excluded), for video containers.
    var videoCodec: String?
    /// Codec of the picture, for still images.
    var imageCodec: String?
    /// Coded width in pixels.
    var width: Int?
    /// Coded height in pixels.
    var height: Int?
    /// Display rotation, counter-clockwise degrees: 0, 90, 180 or 270.
    var rotation: Int
    /// Frames per second (average, else nominal); nil when unknown or for stills.
    var frameRate: Double?
    /// Whether there is an audio stream.
    var hasAudio: Bool
    /// Codec of the first audio stream.
    var audioCodec: String?
    /// Channel count of the first audio stream.
    var audioChannels: Int?
    /// File size in bytes.
    var fileSize: Int64
    /// ffprobe index of the chosen video/image stream.
    var videoStreamIndex: Int?
    /// ffprobe index of the chosen audio stream.
    var audioStreamIndex: Int?

    /// Width as displayed, after rotation.
    var displayWidth: Int? { rotation % 180 == 0 ? width : height }
    /// Height as displayed, after rotation.
    var displayHeight: Int? { rotation % 180 == 0 ? height : width }

    /// A probe that knows only the sniffed container and the size (used when ffmpeg is missing).
    init(container: MediaContainer, fileSize: Int64) {
        self.container = container
        self.fileSize = fileSize
        self.rotation = 0
        self.hasAudio = false
    }

    /// Checks the probe against `limits`; throws the first ``MediaRejection`` that applies.
    /// Duration is only checked when known.
    func validate(_ limits: MediaLimits) throws {
        if fileSize > limits.maxBytes { throw MediaRejection.tooLarge(bytes: fileSize, limit: limits.maxBytes) }
        guard videoStreamIndex != nil else { throw MediaRejection.noVideoStream }
        guard let codec = videoCodec ?? imageCodec, !codec.isEmpty, codec != "none" else {
            throw MediaRejection.unsupportedCodec("unknown")
        }
        let w = width ?? 0
        let h = height ?? 0
        guard w > 0, h > 0, w <= limits.maxDimension, h <= limits.maxDimension else {
            throw MediaRejection.badDimensions(width: w, height: h)
        }
        if let duration, duration > limits.maxDuration {
            throw MediaRejection.tooLong(seconds: duration, limit: limits.maxDuration)
        }
        // A clip's decoding cost; unknown frame rates and durations count as the most allowed.
        if ContainerSniffer.isVideo(container) {
            let pixels = Double(w) * Double(h) * min(frameRate ?? 60, 240) * (duration ?? limits.maxDuration)
            if pixels > limits.maxDecodedPixels {
                throw MediaRejection.tooHeavy(width: w, height: h, frameRate: frameRate)
            }
        }
    }
}

// MARK: - ffprobe JSON

extension MediaProbe {
    /// Parses `ffprobe -print_format json -show_format -show_streams [-show_frames]` output.
    /// Throws ``MediaRejection/unreadable(_:)`` when it is not such JSON.
    static func parse(json: Data, container: MediaContainer, fileSize: Int64) throws -> MediaProbe {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let output: FFProbeOutput
        do {
            output = try decoder.decode(FFProbeOutput.self, from: json)
        } catch {
            throw MediaRejection.unreadable("unexpected ffprobe output")
        }
        var probe = MediaProbe(container: container, fileSize: fileSize)
        probe.formatName = output.format?.formatName
        let streams = output.streams ?? []
        let isStill = !ContainerSniffer.isVideo(container)

        if let video = streams.first(where: { $0.codecType == "video" && $0.disposition?.attachedPic != 1 }) {
            probe.videoStreamIndex = video.index
            let codec = video.codecName ?? "none"
            if isStill { probe.imageCodec = codec } else { probe.videoCodec = codec }
            probe.width = video.width
            probe.height = video.height
            let frameSideData = (output.frames ?? []).filter { $0.streamIndex == video.index }.flatMap {
                $0.sideDataList ?? []
            }
            probe.rotation = rotation(
                sideData: (video.sideDataList ?? []) + frameSideData, legacyTag: video.tags?["rotate"])
            if !isStill { probe.frameRate = rate(video.avgFrameRate) ?? rate(video.rFrameRate) }
        }
        if !isStill {
            probe.duration =
                seconds(output.format?.duration)
                ?? seconds(streams.first { $0.index == probe.videoStreamIndex }?.duration)
        }
        if let audio = streams.first(where: { $0.codecType == "audio" }) {
            probe.hasAudio = true
            probe.audioStreamIndex = audio.index
            probe.audioCodec = audio.codecName
            probe.audioChannels = audio.channels
        }
        return probe
    }

    /// Counter-clockwise rotation from display-matrix side data, else from the legacy clockwise
    /// `rotate` tag, rounded to the nearest quarter turn and normalised to 0..<360.
    static func rotation(sideData: [FFProbeOutput.SideData], legacyTag: String?) -> Int {
        let degrees: Double
        if let r = sideData.lazy.compactMap(\.rotation).first(where: \.isFinite) {
            degrees = r
        } else if let tag = legacyTag.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }), tag.isFinite {
            degrees = -tag
        } else {
            return 0
        }
        let quarter = Int((degrees / 90).rounded()) % 4
        return (quarter + 4) % 4 * 90
    }

    /// A positive, finite number of seconds from ffprobe's decimal string ("N/A" → nil).
    static func seconds(_ text: String?) -> Double? {
        guard let text, let value = Double(text), value.isFinite, value >= 0 else { return nil }
        return value
    }

    /// A frame rate from ffprobe's "num/den" string; nil for "0/0" and nonsense.
    static func rate(_ text: String?) -> Double? {
        guard let parts = text?.split(separator: "/"), parts.count == 2,
            let num = Double(parts[0]), let den = Double(parts[1]), num > 0, den > 0
        else { return nil }
        let value = num / den
        return value.isFinite ? value : nil
    }
}

/// The subset of ffprobe's JSON this package reads (snake_case keys converted).
struct FFProbeOutput: Decodable {
    struct Format: Decodable {
        var formatName: String?
        var duration: String?
    }
    struct Disposition: Decodable {
        var attachedPic: Int?
    }
    struct SideData: Decodable {
        var sideDataType: String?
        var rotation: Double?
    }
    struct Stream: Decodable {
        var index: Int?
        var codecName: String?
        var codecType: String?
        var width: Int?
        var height: Int?
        var avgFrameRate: String?
        var rFrameRate: String?
        var duration: String?
        var channels: Int?
        var tags: [String: String]?
        var disposition: Disposition?
        var sideDataList: [SideData]?
    }
    struct Frame: Decodable {
        var streamIndex: Int?
        var sideDataList: [SideData]?
    }
    var streams: [Stream]?
    var format: Format?
    var frames: [Frame]?
}
