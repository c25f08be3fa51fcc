/// What the first bytes of an upload say it is, whatever its name or declared type.
public enum MediaContainer: String, Sendable, Equatable { case mp4, mov, webm, jpeg, png, heic }

/// Identifies an upload's container from its leading bytes ("magic numbers"), ignoring the
/// file name and any declared MIME type.
///
/// Recognised signatures (everything else — GIF, PDF, ZIP, text, audio-only MP4, Matroska,
/// empty or truncated headers — is `nil`):
///
/// * **PNG**: the full 8-byte signature `89 50 4E 47 0D 0A 1A 0A`.
/// * **JPEG**: `FF D8 FF` followed by a plausible marker code (`C0`…`FE`, excluding the
///   `RSTn`/`SOI`/`EOI` codes `D0`…`D9`). The three magic bytes alone are *not* enough: a
///   4-byte minimum keeps a stray `FF D8 FF` prefix from counting as an image.
/// * **ISO BMFF** (MP4 / QuickTime / HEIF): the *first* box must be `ftyp` (bytes 4..<8), with a
///   declared box size of at least 16 and at least 16 bytes present. Files whose first box is
///   `free`, `wide`, `mdat` or `moov` (old QuickTime files without `ftyp`) are deliberately
///   rejected: without `ftyp` there is no brand to tell video from audio or images, and
///   searching further into the file would make the answer depend on how much was read.
///   The major brand (bytes 8..<12) decides:
///   - `qt  ` → ``MediaContainer/mov``
///   - `heic`, `heix`, `hevc`, `heim`, `heis` → ``MediaContainer/heic``
///   - `mif1`, `msf1` (generic HEIF) → ``MediaContainer/heic`` only when the compatible-brand
///     list (bytes 16..<size, as far as present) contains `heic` or `heix`, or contains `mif1`
///     without an AVIF brand (`avif`/`avis`) — so AVIF files labelled `mif1` are not reported
///     as HEIC.
///   - `isom`, `iso2`…`iso6`, `mp41`, `mp42`, `avc1`, `dash`, `M4V `, `3gp4`, `3gp5`, `3g2a`
///     → ``MediaContainer/mp4``
///   - `M4A ` (and every other brand, e.g. `M4B `, `M4P `, `avif`, `crx `) → `nil`.
/// * **WebM**: the EBML magic `1A 45 DF A3`, then the EBML header is parsed element by element
///   within the first 64 bytes; its `DocType` element (ID `42 82`) must be exactly `webm`
///   (trailing NUL padding ignored). Generic Matroska (`matroska`) is rejected: it can carry
///   codecs and features browsers do not play, so it is not treated as an acceptable video
///   upload. A DocType missing from, or cut off by, the first 64 bytes is also `nil`.
public enum ContainerSniffer {
    /// The container of a file from its first bytes (at least the first 64 bytes are passed when the file is that long), or nil for anything else.
    ///
    /// Never traps, whatever the length or content of `head`.
    public static func sniff(_ head: [UInt8]) -> MediaContainer? {
        if head.starts(with: pngSignature) { return .png }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            guard head.count >= 4 else { return nil }
            let marker = head[3]
            return (0xC0...0xFE).contains(marker) && !(0xD0...0xD9).contains(marker) ? .jpeg : nil
        }
        if head.starts(with: ebmlMagic) { return sniffEBML(head) }
        if head.count >= 8, fourCC(head, at: 4) == "ftyp" { return sniffFtyp(head) }
        return nil
    }

    /// Whether the container is a video (mp4, mov, webm) or a still image.
    public static func isVideo(_ c: MediaContainer) -> Bool {
        switch c {
        case .mp4, .mov, .webm: return true
        case .jpeg, .png, .heic: return false
        }
    }

    // MARK: - Signatures

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    private static let ebmlMagic: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3]

    private static let heicBrands: Set<String> = ["heic", "heix", "hevc", "heim", "heis"]
    private static let genericHeifBrands: Set<String> = ["mif1", "msf1"]
    private static let mp4Brands: Set<String> = [
        "isom", "iso2", "iso3", "iso4", "iso5", "iso6",
        "mp41", "mp42", "avc1", "dash", "M4V ", "3gp4", "3gp5", "3g2a",
    ]

    // MARK: - ISO BMFF

    private static func sniffFtyp(_ head: [UInt8]) -> MediaContainer? {
        // size(4) 'ftyp'(4) major(4) minor(4) compatible(4 each)…
        guard head.count >= 16 else { return nil }
        let size = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        // size 0 ("to end of file") and 1 (64-bit size) are never used for a real ftyp box.
        guard size >= 16, let major = fourCC(head, at: 8) else { return nil }

        if major == "qt  " { return .mov }
        if heicBrands.contains(major) { return .heic }
        if mp4Brands.contains(major) { return .mp4 }
        if genericHeifBrands.contains(major) {
            var compatible: Set<String> = []
            var i = 16
            let end = min(size, head.count)
            while i + 4 <= end {
                if let b = fourCC(head, at: i) { compatible.insert(b) }
                i += 4
            }
            if compatible.contains("heic") || compatible.contains("heix") { return .heic }
            if compatible.contains("mif1"), !compatible.contains("avif"), !compatible.contains("avis") {
                return .heic
            }
            return nil
        }
        // "M4A " (audio) and anything unknown.
        return nil
    }

    /// Four bytes at `offset` as a Latin-1 string, or nil when they are not all present.
    private static func fourCC(_ b: [UInt8], at offset: Int) -> String? {
        guard offset >= 0, offset + 4 <= b.count else { return nil }
        return String(decoding: b[offset..<offset + 4].map { $0 }, as: Unicode.ASCII.self)
    }

    // MARK: - EBML (WebM / Matroska)

    /// Reads an EBML variable-length integer at `i` (advancing it), not reading at or past `limit`.
    /// Element IDs keep their length-marker bit (`keepMarker`); sizes drop it. Returns nil when the
    /// integer is malformed or truncated; an all-ones ("unknown") size is returned as `UInt64.max`.
    private static func readVint(_ b: [UInt8], _ i: inout Int, limit: Int, keepMarker: Bool) -> UInt64? {
        guard i < limit else { return nil }
        let first = b[i]
        guard first != 0 else { return nil }
        let length = first.leadingZeroBitCount + 1  // 1…8
        guard i + length <= limit else { return nil }
        let marker: UInt8 = 0x80 >> (length - 1)
        var value = UInt64(keepMarker ? first : first & ~marker)
        var allOnes = (first & ~marker) == (marker &- 1)
        for k in 1..<length {
            let byte = b[i + k]
            value = value << 8 | UInt64(byte)
            allOnes = allOnes && byte == 0xFF
        }
        i += length
        if !keepMarker && allOnes { return UInt64.max }
        return value
    }

    private static func sniffEBML(_ head: [UInt8]) -> MediaContainer? {
        let limit = min(head.count, 64)
        var i = 4  // past the 4-byte EBML header ID
        guard let headerSize = readVint(head, &i, limit: limit, keepMarker: false) else { return nil }
        let end = headerSize == UInt64.max || headerSize > UInt64(limit - i) ? limit : i + Int(headerSize)
        while i < end {
            guard let id = readVint(head, &i, limit: end, keepMarker: true),
                let size = readVint(head, &i, limit: end, keepMarker: false),
                size != UInt64.max, size <= UInt64(end - i)
            else { return nil }
            let dataEnd = i + Int(size)
            if id == 0x4282 {
                var value = Array(head[i..<dataEnd])
                while value.last == 0 { value.removeLast() }
                return value == Array("webm".utf8) ? .webm : nil
            }
            i = dataEnd
        }
        return nil
    }
}
