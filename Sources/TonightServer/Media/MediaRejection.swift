import Foundation
import TonightCore

/// The upload itself is unusable: the post should become `failed` with ``message`` as the reason.
/// Retrying cannot help.
enum MediaRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file has no bytes.
    case empty
    /// The file is larger than the configured limit.
    case tooLarge(bytes: Int64, limit: Int64)
    /// ffprobe or ffmpeg could not read it (truncated, corrupt, not really that container);
    /// carries the tool's first error line, trimmed.
    case unreadable(String)
    /// A video container without a (non-cover-art) video stream, or a still without an image.
    case noVideoStream
    /// The video or image codec is unknown to this ffmpeg.
    case unsupportedCodec(String)
    /// Longer than the configured limit, in seconds.
    case tooLong(seconds: Double, limit: Double)
    /// Zero, missing or absurd (above the limit) pixel dimensions.
    case badDimensions(width: Int, height: Int)
    /// Probing succeeded but converting failed; carries ffmpeg's first error line.
    case transcodeFailed(String)
    /// Too many pixels to decode (size × frame rate × duration over the budget).
    case tooHeavy(width: Int, height: Int, frameRate: Double?)
    /// Converting took longer than the limit for one tool run.
    case tooSlow(limit: Duration)

    /// A human-readable reason, suitable for showing to the uploader.
    var message: String {
        switch self {
        case .empty: "The file is empty."
        case .tooLarge(let bytes, let limit): "The file is too large (\(bytes) bytes; the limit is \(limit))."
        case .unreadable(let detail): "The file could not be read as media (\(detail))."
        case .noVideoStream: "The file contains no video or image."
        case .unsupportedCodec(let codec): "The video format (\(codec)) is not supported."
        case .tooLong(let seconds, let limit):
            "The clip is too long (\(Self.format(seconds)) s; the limit is \(Self.format(limit)) s)."
        case .badDimensions(let w, let h): "The picture size \(w)×\(h) is not supported."
        case .transcodeFailed(let detail): "The file could not be converted (\(detail))."
        case .tooHeavy(let w, let h, let rate):
            "The clip is too heavy to convert (\(w)×\(h)\(rate.map { " at \(Int($0.rounded())) fps" } ?? "")): "
                + "send a smaller or shorter one."
        case .tooSlow(let limit): "The file took too long to convert (over \(limit.components.seconds) s)."
        }
    }

    /// Same as ``message``.
    var description: String { message }

    private static func format(_ seconds: Double) -> String { String(format: "%.1f", seconds) }
}

/// A failure of the machine rather than the media (missing binary, full disk, vanished input):
/// the job should be retried later.
enum MediaInfrastructureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input file does not exist or cannot be inspected.
    case inputUnavailable(String)
    /// The work directory cannot be created or written.
    case workDirectoryUnavailable(String)
    /// A tool failed for an environmental reason (disk full, out of memory, permissions…);
    /// carries the tool name and its first error line.
    case toolFailed(tool: String, detail: String)
    /// A tool reported success but did not produce the expected file.
    case missingOutput(String)

    /// A one-line explanation for logs.
    var description: String {
        switch self {
        case .inputUnavailable(let d): "input unavailable: \(d)"
        case .workDirectoryUnavailable(let d): "work directory unavailable: \(d)"
        case .toolFailed(let tool, let d): "\(tool) failed: \(d)"
        case .missingOutput(let d): "expected output missing: \(d)"
        }
    }

    /// Substrings of ffmpeg/ffprobe error output that point at the environment, not the file.
    /// ("Input/output error" is deliberately absent: demuxers also report it for truncated files.)
    static let environmentalMarkers = [
        "No space left on device", "Cannot allocate memory", "Too many open files",
        "Permission denied", "Read-only file system", "Disk quota exceeded",
    ]

    /// Whether `stderr` shows an environmental failure.
    static func isEnvironmental(_ stderr: Data) -> Bool {
        let text = String(decoding: stderr, as: UTF8.self)
        return environmentalMarkers.contains { text.contains($0) }
    }
}
