import Foundation
import Testing
import TonightServer

@testable import TonightCore

// MARK: - Hand-built headers

/// An ISO BMFF file start: an `ftyp` box followed by a `free` box, padded to 64 bytes.
private func ftyp(_ major: String, compatible: [String] = [], declaredSize: Int? = nil) -> [UInt8] {
    let size = declaredSize ?? (16 + 4 * compatible.count)
    var b: [UInt8] = [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
    b += Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 2, 0]
    for c in compatible { b += Array(c.utf8) }
    b += [0, 0, 0, 8] + Array("free".utf8)
    while b.count < 64 { b.append(0) }
    return b
}

/// A real-world-shaped EBML header with the given DocType, followed by a Segment ID.
private func ebml(docType: String) -> [UInt8] {
    var body: [UInt8] = []
    body += [0x42, 0x86, 0x81, 0x01]  // EBMLVersion 1
    body += [0x42, 0xF7, 0x81, 0x01]  // EBMLReadVersion 1
    body += [0x42, 0xF2, 0x81, 0x04]  // EBMLMaxIDLength 4
    body += [0x42, 0xF3, 0x81, 0x08]  // EBMLMaxSizeLength 8
    body += [0x42, 0x82, 0x80 | UInt8(docType.utf8.count)] + Array(docType.utf8)  // DocType
    body += [0x42, 0x87, 0x81, 0x04]  // DocTypeVersion
    body += [0x42, 0x85, 0x81, 0x02]  // DocTypeReadVersion
    var b: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3, 0x80 | UInt8(body.count)] + body
    b += [0x18, 0x53, 0x80, 0x67, 0x01, 0, 0, 0, 0, 0, 0x10, 0]  // Segment, 8-byte size
    while b.count < 64 { b.append(0) }
    return b
}

private let pngHeader: [UInt8] =
    [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A,
        0, 0, 0, 0x0D,
    ] + Array("IHDR".utf8) + [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]
private let jfifHeader: [UInt8] =
    [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
private let exifHeader: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0x12, 0x34] + Array("Exif".utf8) + [0, 0]
private let rawJPEGHeader: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x00]

@Suite("ContainerSniffer")
struct ContainerSnifferTests {
    @Test(
        "ISO BMFF brands that are MP4",
        arguments: [
            "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "M4V ", "3gp4", "3gp5",
            "3g2a",
        ])
    func mp4Brands(brand: String) {
        #expect(ContainerSniffer.sniff(ftyp(brand, compatible: ["isom", "mp41"])) == .mp4)
    }

    @Test func quickTimeIsMov() {
        #expect(ContainerSniffer.sniff(ftyp("qt  ", compatible: ["qt  "])) == .mov)
    }

    @Test("HEIF brands that are HEIC by themselves", arguments: ["heic", "heix", "hevc", "heim", "heis"])
    func heicBrands(brand: String) {
        #expect(ContainerSniffer.sniff(ftyp(brand, compatible: ["mif1", brand])) == .heic)
    }

    @Test func genericHeifNeedsCompatibleBrand() {
        #expect(ContainerSniffer.sniff(ftyp("mif1", compatible: ["mif1", "heic"])) == .heic)
        #expect(ContainerSniffer.sniff(ftyp("msf1", compatible: ["msf1", "heix"])) == .heic)
        #expect(ContainerSniffer.sniff(ftyp("msf1", compatible: ["mif1"])) == .heic)
        #expect(ContainerSniffer.sniff(ftyp("mif1", compatible: ["mif1"])) == .heic)
        // No HEIC/HEIF brand listed, or an AVIF labelled as generic HEIF.
        #expect(ContainerSniffer.sniff(ftyp("mif1", compatible: [])) == nil)
        #expect(ContainerSniffer.sniff(ftyp("msf1", compatible: ["msf1", "iso8"])) == nil)
        #expect(ContainerSniffer.sniff(ftyp("mif1", compatible: ["mif1", "avif", "miaf"])) == nil)
        // A compatible brand outside the declared ftyp box does not count.
        #expect(ContainerSniffer.sniff(ftyp("mif1", compatible: ["heic"], declaredSize: 16)) == nil)
    }

    @Test func webmAndImages() {
        #expect(ContainerSniffer.sniff(ebml(docType: "webm")) == .webm)
        #expect(ContainerSniffer.sniff(pngHeader) == .png)
        #expect(ContainerSniffer.sniff(jfifHeader) == .jpeg)
        #expect(ContainerSniffer.sniff(exifHeader) == .jpeg)
        #expect(ContainerSniffer.sniff(rawJPEGHeader) == .jpeg)
        #expect(ContainerSniffer.sniff(Array([0xFF, 0xD8, 0xFF, 0xE0])) == .jpeg)
    }

    @Test(
        "Rejected headers",
        arguments: [
            ("gif89a", Array("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0]),
            ("gif87a", Array("GIF87a".utf8) + [1, 0, 1, 0]),
            ("pdf", Array("%PDF-1.7\n%\u{e2}\u{e3}".utf8)),
            ("zip", Array("PK\u{3}\u{4}".utf8) + [20, 0, 0, 0, 8, 0]),
            ("m4a", ftyp("M4A ", compatible: ["M4A ", "mp42", "isom"])),
            ("m4b", ftyp("M4B ", compatible: ["M4B ", "mp42"])),
            ("avif", ftyp("avif", compatible: ["avif", "mif1", "miaf"])),
            ("unknown brand", ftyp("abcd", compatible: ["isom"])),
            ("matroska", ebml(docType: "matroska")),
            ("webmx doctype", ebml(docType: "webmx")),
            ("ebml magic only", [0x1A, 0x45, 0xDF, 0xA3]),
            ("ebml truncated doctype", Array(ebml(docType: "webm").prefix(25))),
            ("jpeg magic only", [0xFF, 0xD8, 0xFF]),
            ("jpeg bad marker", [0xFF, 0xD8, 0xFF, 0x00, 0x10]),
            ("png truncated", Array(pngHeader.prefix(7))),
            ("empty", []),
            ("one byte", [0x00]),
            ("text", Array("hello, world — this is not a video".utf8)),
            ("riff wave", Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WAVEfmt ".utf8)),
            ("moov first", [0, 0, 0, 8] + Array("moov".utf8) + [0, 0, 0, 20] + Array("ftypisom".utf8)),
            ("mdat first", [0, 0, 0, 8] + Array("mdat".utf8) + Array(repeating: 0, count: 20)),
            (
                "free first",
                [0, 0, 0, 8] + Array("free".utf8) + [0, 0, 0, 20] + Array("ftypisom".utf8) + [0, 0, 2, 0]
            ),
            ("ftyp truncated", Array(ftyp("isom").prefix(12))),
            ("ftyp size too small", ftyp("isom", declaredSize: 12)),
            ("ftyp size zero", ftyp("qt  ", declaredSize: 0)),
        ] as [(String, [UInt8])])
    func rejects(name: String, bytes: [UInt8]) {
        #expect(ContainerSniffer.sniff(bytes) == nil, "\(name) should not be recognised")
    }

    @Test func isVideo() {
        #expect(ContainerSniffer.isVideo(.mp4))
        #expect(ContainerSniffer.isVideo(.mov))
        #expect(ContainerSniffer.isVideo(.webm))
        #expect(!ContainerSniffer.isVideo(.jpeg))
        #expect(!ContainerSniffer.isVideo(.png))
        #expect(!ContainerSniffer.isVideo(.heic))
    }

    /// Every prefix of every valid header, and deterministic garbage, must be handled without trapping;
    /// a prefix shorter than 16 bytes of an ISO BMFF header is never accepted.
    @Test func shortAndGarbageInputNeverCrash() {
        let valid = [
            ftyp("isom", compatible: ["isom"]), ftyp("mif1", compatible: ["mif1", "heic"]),
            ebml(docType: "webm"), pngHeader, jfifHeader,
        ]
        for header in valid {
            for length in 0...header.count { _ = ContainerSniffer.sniff(Array(header.prefix(length))) }
        }
        for length in 0..<16 { #expect(ContainerSniffer.sniff(Array(ftyp("isom").prefix(length))) == nil) }

        var rng = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            let count = Int(rng.next() % 80)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            // Bias towards interesting prefixes so the parsers are exercised.
            switch rng.next() % 4 {
            case 0 where count >= 4: bytes.replaceSubrange(0..<4, with: [0x1A, 0x45, 0xDF, 0xA3])
            case 1 where count >= 8: bytes.replaceSubrange(4..<8, with: Array("ftyp".utf8))
            default: break
            }
            _ = ContainerSniffer.sniff(bytes)
        }
    }
}

// MARK: - Real files from ffmpeg (only when it is installed)

enum FFmpegTool {
    static let path: String? = {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        for dir in dirs {
            let candidate = "\(dir)/ffmpeg"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    /// Runs ffmpeg; true when it exits 0 and `output` is a non-empty file.
    static func run(_ arguments: [String], output: URL) -> Bool {
        guard let path else { return false }
        try? FileManager.default.removeItem(at: output)
        let exit = try? ChildProcess.run(
            path, arguments: ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"] + arguments + [output.path])
        let size = (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
        return exit?.succeeded == true && size > 0
    }
}

@Suite("ContainerSniffer with ffmpeg-made files")
struct FFmpegSniffTests {
    static let video = ["-f", "lavfi", "-i", "testsrc=size=64x64:rate=5:duration=1", "-pix_fmt", "yuv420p"]
    static let audio = ["-f", "lavfi", "-i", "sine=frequency=440:duration=1"]

    /// Alternative ffmpeg argument lists per kind: the first one this ffmpeg build can encode is used.
    static let recipes: [(MediaContainer, String, [[String]])] = [
        (.mp4, "mp4", [video, video + ["-c:v", "mpeg4"]]),
        (.mov, "mov", [video, video + ["-c:v", "mpeg4"]]),
        (
            .webm, "webm",
            [
                video + ["-c:v", "libvpx"], video + ["-c:v", "libvpx-vp9"], video + ["-c:v", "libaom-av1"],
                audio + ["-c:a", "libopus"], audio + ["-c:a", "libvorbis"],
                audio + ["-ar", "48000", "-c:a", "opus", "-strict", "-2"], audio + ["-c:a", "vorbis", "-strict", "-2"],
            ]
        ),
        (
            .jpeg, "jpg",
            [
                video + ["-frames:v", "1", "-update", "1", "-pix_fmt", "yuvj420p"],
                video + ["-frames:v", "1", "-pix_fmt", "yuvj420p"], video + ["-frames:v", "1"],
            ]
        ),
        (
            .png, "png",
            [
                video + ["-frames:v", "1", "-update", "1", "-pix_fmt", "rgb24"],
                video + ["-frames:v", "1", "-pix_fmt", "rgb24"],
            ]
        ),
    ]

    @Test(.enabled(if: FFmpegTool.path != nil, "ffmpeg is not on PATH"))
    func realFilesAreSniffed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sniff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        var produced = 0
        for (expected, ext, alternatives) in Self.recipes {
            let url = dir.appendingPathComponent("sample.\(ext)")
            guard alternatives.contains(where: { FFmpegTool.run($0, output: url) }) else {
                // Only webm may be missing (it needs an optional encoder); the rest are built into ffmpeg.
                #expect(expected == .webm, "ffmpeg could not produce a .\(ext) file")
                continue
            }
            produced += 1
            let head = Array(try Data(contentsOf: url).prefix(64))
            #expect(
                ContainerSniffer.sniff(head) == expected,
                "sample.\(ext): \(head.prefix(16).map { String(format: "%02x", $0) }.joined(separator: " "))")
            // The same bytes are recognised whatever the file is called.
            let renamed = dir.appendingPathComponent("renamed-\(ext).bin")
            try FileManager.default.copyItem(at: url, to: renamed)
            #expect(ContainerSniffer.sniff(Array(try Data(contentsOf: renamed).prefix(64))) == expected)
        }
        #expect(produced >= 4)
    }
}
