/// Where an XML importer reads from: a file streamed `chunkSize` bytes at a time, or bytes in memory.
struct XMLSource: Sendable {
    private enum Origin: Sendable {
        case path(String)
        case bytes([UInt8])
    }

    private let origin: Origin
    private let chunkSize: Int

    init(path: String, chunkSize: Int) {
        origin = .path(path)
        self.chunkSize = chunkSize
    }

    init(bytes: [UInt8], chunkSize: Int) {
        origin = .bytes(bytes)
        self.chunkSize = chunkSize
    }

    /// A pull parser at the start of the document.
    func open() throws -> XMLPullParser {
        switch origin {
        case .path(let path): try XMLPullParser(path: path, chunkSize: chunkSize)
        case .bytes(let bytes): XMLPullParser(bytes: bytes, chunkSize: chunkSize)
        }
    }
}
