import Foundation
import TonightCore

/// Absolute paths of the `ffmpeg` and `ffprobe` executables, and of libheif's `heif-info` and
/// `heif-convert` when installed (Debian's `libheif-examples`): ffmpeg 5 cannot decode HEIC, so
/// profile photos in HEIC (an iPhone's default) are decoded by libheif first.
struct MediaTools: Sendable, Equatable {
    /// Path of `ffmpeg`.
    let ffmpeg: String
    /// Path of `ffprobe`.
    let ffprobe: String
    /// Paths of `heif-info` and `heif-convert`, when both are installed.
    let heif: (info: String, convert: String)?

    /// Tools at explicit paths (not checked).
    init(ffmpeg: String, ffprobe: String, heif: (info: String, convert: String)? = nil) {
        self.ffmpeg = ffmpeg
        self.ffprobe = ffprobe
        self.heif = heif
    }

    static func == (a: MediaTools, b: MediaTools) -> Bool {
        a.ffmpeg == b.ffmpeg && a.ffprobe == b.ffprobe && a.heif?.info == b.heif?.info
            && a.heif?.convert == b.heif?.convert
    }

    /// Finds ffmpeg and ffprobe (nil when either is missing), and libheif's tools when present.
    ///
    /// Each argument may be a path (containing `/`, used as is when it is an executable file) or
    /// a bare name looked up in the colon-separated `path`. Defaults: `ffmpeg`, `ffprobe`.
    static func locate(
        ffmpeg: String? = nil, ffprobe: String? = nil,
        path: String? = ProcessInfo.processInfo.environment["PATH"]
    ) -> MediaTools? {
        guard let mpeg = resolve(ffmpeg ?? "ffmpeg", path: path),
            let probe = resolve(ffprobe ?? "ffprobe", path: path)
        else { return nil }
        let heif = resolve("heif-info", path: path).flatMap { info in
            resolve("heif-convert", path: path).map { (info, $0) }
        }
        return MediaTools(ffmpeg: mpeg, ffprobe: probe, heif: heif)
    }

    /// The executable file `name` refers to, searching `path` for bare names.
    static func resolve(_ name: String, path: String?) -> String? {
        let fm = FileManager.default
        if name.contains("/") { return fm.isExecutableFile(atPath: name) ? name : nil }
        guard !name.isEmpty, let path else { return nil }
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent(name).path
            var isDirectory: ObjCBool = false
            if fm.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                fm.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
        }
        return nil
    }
}
