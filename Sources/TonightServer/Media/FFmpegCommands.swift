import Foundation
import TonightCore

/// The exact ffmpeg/ffprobe argument lists used by ``MediaProcessor``.
///
/// Inputs are opened as `file:` URLs with the demuxer forced from the sniffed container and
/// only the `file` protocol allowed, so a crafted upload cannot make ffmpeg guess another
/// format or open other resources.
enum FFmpegCommands {
    /// Options common to every ffmpeg run: no stdin interaction, errors only, overwrite.
    static let quiet = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"]

    /// `-f <demuxer> -protocol_whitelist file -i file:<path>`.
    static func input(_ url: URL, container: MediaContainer) -> [String] {
        (container.demuxer.map { ["-f", $0] } ?? []) + ["-protocol_whitelist", "file", "-i", "file:" + url.path]
    }

    /// ffprobe as JSON; for stills also the first frame, whose side data carries EXIF orientation.
    static func probe(input url: URL, container: MediaContainer) -> [String] {
        var args = ["-v", "error", "-print_format", "json", "-show_format", "-show_streams"]
        if !ContainerSniffer.isVideo(container) { args += ["-show_frames", "-read_intervals", "%+#1"] }
        return args + (container.demuxer.map { ["-f", $0] } ?? []) + [
            "-protocol_whitelist", "file", "file:" + url.path,
        ]
    }

    /// Scale filter fitting the (already rotated) picture in `longSide`, never upscaling, even
    /// sides, square pixels.
    static func scaleFilter(longSide: Int) -> String {
        let side = max(2, longSide - longSide % 2)
        return "scale=w='if(gte(iw,ih),min(\(side),trunc(iw/2)*2),-2)'"
            + ":h='if(gte(iw,ih),-2,min(\(side),trunc(ih/2)*2))',setsar=1"
    }

    /// Web-playable H.264/AAC MP4 with faststart; stops at `maxDuration + 1` seconds.
    static func transcodeVideo(
        input: URL, container: MediaContainer, videoStream: Int, audioStream: Int?, audioChannels: Int?,
        limits: MediaLimits, output: URL
    ) -> [String] {
        var args = quiet + self.input(input, container: container)
        args += ["-map", "0:\(videoStream)"]
        if let audioStream { args += ["-map", "0:\(audioStream)"] }
        args += ["-t", String(format: "%.3f", limits.maxDuration + 1)]
        args += ["-vf", scaleFilter(longSide: limits.videoLongSide) + ",format=yuv420p"]
        args += ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-profile:v", "high"]
        if audioStream != nil {
            args += ["-c:a", "aac", "-b:a", "128k"]
            if let audioChannels, audioChannels > 2 { args += ["-ac", "2"] }
        } else {
            args += ["-an"]
        }
        args += ["-sn", "-dn", "-map_metadata", "-1", "-map_chapters", "-1", "-movflags", "+faststart"]
        return args + ["-f", "mp4", "file:" + output.path]
    }

    /// One JPEG frame of our own MP4 output at `time` seconds.
    static func poster(input: URL, at time: Double, output: URL) -> [String] {
        quiet + ["-ss", String(format: "%.3f", max(0, time))] + self.input(input, container: .mp4)
            + ["-map", "0:v:0", "-frames:v", "1", "-q:v", "4", "-map_metadata", "-1"]
            + ["-f", "image2", "-update", "1", "file:" + output.path]
    }

    /// A still re-encoded in `format` (JPEG quality 2, or PNG), scaled, orientation applied.
    static func reencodeStill(
        input: URL, container: MediaContainer, stream: Int, format: MediaContainer, longSide: Int, output: URL
    ) -> [String] {
        let codec = format == .png ? ["-c:v", "png"] : ["-c:v", "mjpeg", "-q:v", "2"]
        return quiet + self.input(input, container: container)
            + ["-map", "0:\(stream)", "-frames:v", "1", "-vf", scaleFilter(longSide: longSide)]
            + codec + ["-map_metadata", "-1", "-f", "image2", "-update", "1", "file:" + output.path]
    }

    /// A still as a square JPEG: the centred square of its short side, scaled to at most `side`
    /// pixels (never upscaled, even), orientation applied, every bit of metadata left out.
    static func squarePhoto(input: URL, container: MediaContainer, stream: Int, side: Int, output: URL) -> [String] {
        let side = max(2, side - side % 2)
        return quiet + self.input(input, container: container)
            + ["-map", "0:\(stream)", "-frames:v", "1"]
            + ["-vf", "crop='min(iw,ih)':'min(iw,ih)',scale='min(\(side),trunc(iw/2)*2)':ow,setsar=1,format=yuvj420p"]
            + [
                "-c:v", "mjpeg", "-q:v", "3", "-map_metadata", "-1", "-f", "image2", "-update", "1",
                "file:" + output.path,
            ]
    }

    /// First audio stream as mono little-endian float PCM on stdout.
    static func extractPCM(input: URL, sampleRate: Int) -> [String] {
        ["-nostdin", "-hide_banner", "-loglevel", "error"] + self.input(input, container: .mp4)
            + ["-map", "0:a:0", "-vn", "-ac", "1", "-ar", "\(sampleRate)", "-f", "f32le", "pipe:1"]
    }
}
