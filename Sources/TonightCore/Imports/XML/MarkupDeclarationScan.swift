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
            var index = 0
            while index < limit {
                if buffer[index] == UInt8(ascii: "<"), index + 1 < count, buffer[index + 1] == UInt8(ascii: "!") {
                    if !startsWith(buffer, at: index + 2, count: count, "--")
                        && !startsWith(buffer, at: index + 2, count: count, "[CDATA[")
                    {
                        throw ImportError.hostile(
                            "markup declaration at byte \(offset + index); DTDs and entities are refused")
                    }
                }
                index += 1
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
