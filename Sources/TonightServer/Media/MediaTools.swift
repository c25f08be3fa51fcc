import Foundation
import TonightCore

/// Absolute paths of the `ffmpeg` and `ffprobe` executables.
struct MediaTools: Sendable, Equatable {
    /// Path of `ffmpeg`.
    let ffmpeg: String
    /// Path of `ffprobe`.
    let ffprobe: String

    /// Tools at explicit paths (not checked).
    init(ffmpeg: String, ffprobe: String) {
        self.ffmpeg = ffmpeg
        self.ffprobe = ffprobe
    }

    /// Finds ffmpeg and ffprobe; nil when either is missing.
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
        return MediaTools(ffmpeg: mpeg, ffprobe: probe)
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
