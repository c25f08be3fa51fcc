import CompressNIO
import Crypto
import Foundation
import NIOCore

/// The web app built into the binary: the EmbedWeb build plugin writes every file of `Web/` into
/// ``EmbeddedWeb/files`` at build time, so an installed `tonight` serves the app from any working
/// directory with nothing beside it. Decoded once, at first use, when each file is also gzipped
/// once (best compression) for the browsers that accept it.
enum EmbeddedWeb {
    /// A built-in file: its bytes, a strong ETag from its content, and its gzip encoding with an ETag
    /// of its own when that is smaller (text; images are compressed already).
    struct File: Sendable {
        let body: ByteBuffer
        let etag: String
        let gzipped: (body: ByteBuffer, etag: String)?
    }

    private static let decoded: [String: File] = Dictionary(
        files.compactMap { name, base64 in
            guard let data = Data(base64Encoded: base64) else { return nil }
            let hash = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
            let body = ByteBuffer(bytes: data)
            let packed = isText(name) ? gzip(body).map { ($0, "\"\(hash)-gz\"") } : nil
            return (name, File(body: body, etag: "\"\(hash)\"", gzipped: packed))
        }, uniquingKeysWith: { first, _ in first })

    /// Text files, which gzip well (images come compressed).
    private static func isText(_ name: String) -> Bool {
        ["html", "js", "css", "json", "webmanifest", "svg", "txt", "md"].contains(
            name.split(separator: ".").last.map { $0.lowercased() } ?? "")
    }

    /// `body` gzipped, if that saves at least a tenth.
    private static func gzip(_ body: ByteBuffer) -> ByteBuffer? {
        var input = body
        let configuration = ZlibConfiguration(compressionLevel: .bestCompression)
        guard let output = try? input.compress(with: .gzip(configuration: configuration)),
            output.readableBytes * 10 < body.readableBytes * 9
        else { return nil }
        return output
    }

    /// The file at `name` (a path inside `Web/`), if the app has it.
    static func file(_ name: String) -> File? { decoded[name] }

    /// How many files the app has.
    static var count: Int { decoded.count }
}
