import Foundation

/// A fast pass over an XML file before any import writes: any markup declaration (`<!DOCTYPE`,
/// `<!ENTITY`, `<!ELEMENT`…) anywhere in the bytes refuses the whole file. Comments (`<!--`) and
/// CDATA sections (`<![CDATA[`) are allowed. The pull parser refuses these too, but only when it
/// reaches them; this scan makes "nothing is written" hold for a declaration late in the file. It is
/// deliberately conservative: the same bytes inside a comment or CDATA section also refuse the file.
public enum MarkupDeclarationScan {
    /// Throws ``ImportError/hostile(_:)`` if the file holds a markup declaration.
    public static func check(path: String, chunkSize: Int = 1 << 20) throws {
        guard let file = fopen(path, "rb") else { throw ImportError.unreadable("cannot open \(path)") }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: chunkSize + 16)
        var carry = 0
        var offset = 0
        while true {
            let read = buffer.withUnsafeMutableBufferPointer { fread($0.baseAddress! + carry, 1, chunkSize, file) }
            let count = carry + read
            if count == 0 { return }
            let limit = read == 0 ? count : max(0, count - 9)
            // `!` is rare in a feed: libc's memchr finds each one, then the byte before is looked
            // at (a byte loop cost a tenth of a second of a 122 MB feed's import, before anything
            // else could start). A `<!` may start up to `limit - 1`: its `!` is still in the buffer.
            var from = 1
            let end = min(limit + 1, count)
            while from < end {
                let bang = buffer.withUnsafeBytes { bytes in
                    memchr(bytes.baseAddress! + from, Int32(UInt8(ascii: "!")), end - from).map {
                        bytes.baseAddress!.distance(to: UnsafeRawPointer($0))
                    }
                }
                guard let bang else { break }
                let start = bang - 1
                if buffer[start] == UInt8(ascii: "<") && !startsWith(buffer, at: bang + 1, count: count, "--")
                    && !startsWith(buffer, at: bang + 1, count: count, "[CDATA[")
                {
                    throw ImportError.hostile(
                        "markup declaration at byte \(offset + start); DTDs and entities are refused")
                }
                from = bang + 1
            }
            if read == 0 { return }
            // Keep the tail so a `<!` split across chunks is still seen.
            let keep = count - limit
            for i in 0..<keep { buffer[i] = buffer[limit + i] }
            offset += limit
            carry = keep
        }
    }

    static func startsWith(_ bytes: [UInt8], at index: Int, count: Int, _ text: String) -> Bool {
        let pattern = Array(text.utf8)
        guard index + pattern.count <= count else { return false }
        for (i, byte) in pattern.enumerated() where bytes[index + i] != byte { return false }
        return true
    }
}
