import Crypto
import Foundation

/// The header values of the tus 1.0 protocol that this server reads and writes.
enum Tus {
    /// The one protocol version spoken.
    static let version = "1.0.0"
    /// The extensions supported (`Tus-Extension`).
    static let extensions = "creation,expiration,termination,checksum"
    /// The checksum algorithms `Upload-Checksum` may name.
    static let checksumAlgorithms = "sha1,sha256"

    /// `Upload-Metadata`: comma-separated `key base64value` pairs (a key alone has an empty value).
    /// Nil when it is malformed: a key with spaces or commas, a repeated key, or a value that is
    /// not base64 of UTF-8 text.
    static func metadata(_ header: String?) -> [String: String]? {
        guard let header, !header.trimmingCharacters(in: .whitespaces).isEmpty else { return [:] }
        var pairs: [String: String] = [:]
        for item in header.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.trimmingCharacters(in: .whitespaces).split(
                separator: " ", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let key = parts.first, !key.isEmpty, pairs[String(key)] == nil,
                key.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "," })
            else { return nil }
            var value = ""
            if parts.count == 2 {
                guard let data = Data(base64Encoded: String(parts[1])),
                    let text = String(data: data, encoding: .utf8)
                else { return nil }
                value = text
            }
            pairs[String(key)] = value
        }
        return pairs
    }

    /// `Upload-Checksum`: the algorithm and the expected digest. Nil when the algorithm is not one
    /// of ``checksumAlgorithms`` or the digest is not base64 of the right length.
    static func checksum(_ header: String) -> Checksum? {
        let parts = header.split(separator: " ")
        guard parts.count == 2, let digest = Data(base64Encoded: String(parts[1])) else { return nil }
        switch parts[0] {
        case "sha1" where digest.count == Insecure.SHA1.byteCount: return Checksum(algorithm: .sha1, expected: digest)
        case "sha256" where digest.count == SHA256.byteCount: return Checksum(algorithm: .sha256, expected: digest)
        default: return nil
        }
    }

    /// An `Upload-Checksum` being checked against the bytes of one request.
    struct Checksum: Sendable {
        enum Algorithm: Sendable { case sha1, sha256 }
        let algorithm: Algorithm
        let expected: Data

        /// A running digest of the request's bytes.
        func hasher() -> Hasher {
            switch algorithm {
            case .sha1: .sha1(Insecure.SHA1())
            case .sha256: .sha256(SHA256())
            }
        }

        /// Either digest, fed chunk by chunk.
        enum Hasher {
            case sha1(Insecure.SHA1)
            case sha256(SHA256)

            mutating func update(_ bytes: ArraySlice<UInt8>) {
                switch self {
                case .sha1(var h):
                    h.update(data: bytes)
                    self = .sha1(h)
                case .sha256(var h):
                    h.update(data: bytes)
                    self = .sha256(h)
                }
            }

            func matches(_ expected: Data) -> Bool {
                switch self {
                case .sha1(let h): Data(h.finalize()) == expected
                case .sha256(let h): Data(h.finalize()) == expected
                }
            }
        }
    }
}
