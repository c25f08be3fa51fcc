import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// The most recently served media files, held whole in memory (bounded by ``capacity`` bytes,
/// least recently used out first), so a hot clip's ranges are sliced from memory instead of read
/// from disk for every request. Blob keys never change their bytes; an entry is still used only
/// while the file's ETag (size and modification time, checked on every request) is the one it was
/// read with, so a deleted or replaced file is never served from here.
final class MediaMemoryCache: Sendable {
    private struct Entry {
        var etag: String
        var bytes: ByteBuffer
        var used: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var size = 0
        var clock: UInt64 = 0
    }

    /// Most bytes held.
    let capacity: Int
    /// Largest file held.
    let largestFile: Int
    private let state = Mutex(State())

    init(capacity: Int, largestFile: Int) {
        self.capacity = capacity
        self.largestFile = largestFile
    }

    /// The file's bytes when they are (or can now be) held: read once, then shared.
    func bytes(key: String, path: String, etag: String, size: Int) async throws -> ByteBuffer? {
        guard size > 0, size <= largestFile, size <= capacity else { return nil }
        let hit = state.withLock { state -> ByteBuffer? in
            guard let entry = state.entries[key] else { return nil }
            guard entry.etag == etag else {
                state.size -= entry.bytes.readableBytes
                state.entries[key] = nil
                return nil
            }
            state.clock += 1
            state.entries[key]?.used = state.clock
            return entry.bytes
        }
        if let hit { return hit }
        let bytes = try await NIOThreadPool.singleton.runIfActive { () throws -> ByteBuffer in
            let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
            return ByteBuffer(data: data)
        }
        guard bytes.readableBytes == size else { return nil }  // changed while reading
        state.withLock { state in
            if let old = state.entries[key] { state.size -= old.bytes.readableBytes }
            while state.size + size > capacity, let oldest = state.entries.min(by: { $0.value.used < $1.value.used }) {
                state.size -= oldest.value.bytes.readableBytes
                state.entries[oldest.key] = nil
            }
            state.clock += 1
            state.entries[key] = Entry(etag: etag, bytes: bytes, used: state.clock)
            state.size += size
        }
        return bytes
    }
}
