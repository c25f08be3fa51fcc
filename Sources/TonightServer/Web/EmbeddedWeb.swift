import Crypto
import Foundation
import NIOCore

/// The web app built into the binary: the EmbedWeb build plugin writes every file of `Web/` into
/// ``EmbeddedWeb/files`` at build time, so an installed `tonight` serves the app from any working
/// directory with nothing beside it. Decoded once, at first use.
enum EmbeddedWeb {
    /// A built-in file: its bytes and a strong ETag from its content.
    struct File: Sendable {
        let body: ByteBuffer
        let etag: String
    }

    private static let decoded: [String: File] = Dictionary(
        files.compactMap { name, base64 in
            guard let data = Data(base64Encoded: base64) else { return nil }
            let hash = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
            return (name, File(body: ByteBuffer(bytes: data), etag: "\"\(hash)\""))
        }, uniquingKeysWith: { first, _ in first })

    /// The file at `name` (a path inside `Web/`), if the app has it.
    static func file(_ name: String) -> File? { decoded[name] }

    /// How many files the app has.
    static var count: Int { decoded.count }
}
