import Foundation
import Testing
import TonightCore

@Suite("MarkupDeclarationScan")
struct MarkupDeclarationScanTests {
    /// Writes `text` to a temporary file and scans it in chunks of `chunkSize` bytes.
    private func refused(_ text: String, chunkSize: Int) throws -> Bool {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("scan-\(UUID().uuidString).xml")
        try Data(text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            try MarkupDeclarationScan.check(path: url.path, chunkSize: chunkSize)
            return false
        } catch ImportError.hostile {
            return true
        }
    }

    @Test("a declaration is found wherever it falls against the chunks; comments and CDATA pass")
    func everyOffset() throws {
        let body = "<feed><a>x &amp; y</a><!-- a comment --><b><![CDATA[<b>]]></b>! <c/></feed>"
        for chunkSize in [1, 2, 7, 16, 1 << 20] {
            #expect(try !refused(body, chunkSize: chunkSize), "chunk \(chunkSize)")
            // A declaration inserted at every offset, including the very end of the file.
            for offset in stride(from: 0, through: body.utf8.count, by: 3) {
                let index = body.utf8.index(body.utf8.startIndex, offsetBy: offset)
                let text = String(body[..<index]) + "<!ENTITY e \"x\">" + String(body[index...])
                #expect(try refused(text, chunkSize: chunkSize), "chunk \(chunkSize), offset \(offset)")
            }
            #expect(try refused(body + "<!", chunkSize: chunkSize), "chunk \(chunkSize), at the end")
            #expect(try !refused(body + "<", chunkSize: chunkSize), "chunk \(chunkSize), a last <")
        }
    }
}
