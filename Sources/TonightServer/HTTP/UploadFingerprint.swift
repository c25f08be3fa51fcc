import Crypto
import Foundation
import Hummingbird
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The fingerprint of a multipart upload, taken as its bytes stream past: SHA-256 of the method,
/// the path and the body with every occurrence of the multipart boundary left out (a client picks
/// a new boundary for each attempt, so a resent upload would otherwise never match). Memory stays
/// at one chunk whatever the upload's size.
final class UploadFingerprint: Sendable {
    private struct State {
        var sha = SHA256()
        /// Bytes not hashed yet: the tail that may be the start of a boundary.
        var pending: [UInt8] = []
    }

    private let boundary: [UInt8]
    private let state = Mutex(State())

    /// Starts the fingerprint of `method path` with multipart `boundary`.
    init(method: String, path: String, boundary: String) {
        self.boundary = Array(boundary.utf8)
        state.withLock { $0.sha.update(data: Data("\(method) \(path)\n".utf8)) }
    }

    /// Adds the next bytes of the body.
    func update(_ chunk: ByteBuffer) {
        state.withLock { state in
            state.pending.append(contentsOf: chunk.readableBytesView)
            let boundary = self.boundary
            var hashed = 0
            state.pending.withUnsafeBytes { all in
                boundary.withUnsafeBytes { needle in
                    while let offset = Self.find(needle, in: all, from: hashed) {
                        state.sha.update(bufferPointer: UnsafeRawBufferPointer(rebasing: all[hashed..<offset]))
                        state.sha.update(data: [0])
                        hashed = offset + needle.count
                    }
                    // Keep what could still begin a boundary.
                    let keep = max(hashed, all.count - (needle.count - 1))
                    state.sha.update(bufferPointer: UnsafeRawBufferPointer(rebasing: all[hashed..<keep]))
                    hashed = keep
                }
            }
            state.pending.removeFirst(hashed)
        }
    }

    /// The offset of the first `needle` in `haystack` at or after `start`: memchr for its first
    /// byte, memcmp for the rest.
    private static func find(_ needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer, from start: Int)
        -> Int?
    {
        guard let base = haystack.baseAddress, let first = needle.first, let rest = needle.baseAddress else {
            return nil
        }
        var from = start
        while haystack.count - from >= needle.count {
            guard let hit = memchr(base + from, Int32(first), haystack.count - from - needle.count + 1) else {
                return nil
            }
            let offset = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + offset, rest, needle.count) == 0 { return offset }
            from = offset + 1
        }
        return nil
    }

    /// The fingerprint of everything added (hex).
    func finish() -> String {
        state.withLock { state in
            var sha = state.sha
            sha.update(data: state.pending)
            return sha.finalize().map { String(format: "%02x", $0) }.joined()
        }
    }

    /// The boundary of a `multipart/form-data` content type, if it is one.
    static func boundary(of contentType: String?) -> String? {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }
}

/// A request body that feeds an ``UploadFingerprint`` as the handler reads it; ``drain()`` reads
/// (and fingerprints) whatever the handler left, through the same iterator.
struct FingerprintedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// The one iterator of the underlying body, shared by the handler and ``drain()``.
    final class Source: @unchecked Sendable {
        // Read by one task at a time: the handler while it runs, then the middleware.
        private var iterator: RequestBody.AsyncIterator
        let fingerprint: UploadFingerprint

        init(_ body: RequestBody, fingerprint: UploadFingerprint) {
            iterator = body.makeAsyncIterator()
            self.fingerprint = fingerprint
        }

        func next() async throws -> ByteBuffer? {
            guard let chunk = try await iterator.next() else { return nil }
            fingerprint.update(chunk)
            return chunk
        }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: Source
        mutating func next() async throws -> ByteBuffer? { try await source.next() }
    }

    let source: Source

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: source) }

    /// Reads the rest of the body into the fingerprint.
    func drain() async throws {
        while try await source.next() != nil {}
    }
}
