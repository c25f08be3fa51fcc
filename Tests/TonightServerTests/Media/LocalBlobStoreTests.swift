import Foundation
import Testing

@testable import TonightServer

@Suite struct LocalBlobStoreTests {
    @Test func contract() async throws {
        try await withTemporaryDirectory { (scratch: String) async throws in
            let store = LocalBlobStore(root: scratch + "/store")
            try await exerciseContract(store, scratch: scratch)
            // Nothing but the blobs themselves is left in the store (no temp files).
            #expect(filesUnder(scratch + "/store") == ["media/2026/11/0002.jpg", "media/2026/12/0003.jpg"])
        }
    }

    @Test func etagIsSizeAndMtimeInHex() async throws {
        try await withTemporaryDirectory { (scratch: String) async throws in
            let store = LocalBlobStore(root: scratch + "/store")
            try writeFile(scratch + "/a", Array(repeating: 7, count: 762))
            try await store.put(
                key: "a.bin", from: scratch + "/a", contentType: "application/octet-stream", storageClass: nil)
            let info = try #require(try await store.head(key: "a.bin"))
            let attributes = try FileManager.default.attributesOfItem(atPath: scratch + "/store/a.bin")
            let mtime = try #require(attributes[.modificationDate] as? Date)
            #expect(info.etag.hasPrefix("2fa-"))
            let nanos = try #require(UInt64(info.etag.dropFirst(4), radix: 16))
            #expect(abs(Double(nanos) / 1e9 - mtime.timeIntervalSince1970) < 0.001)
            #expect(abs(info.lastModified.timeIntervalSince(mtime)) < 0.001)
            // Replacing the file gives a new ETag even at the same size.
            try await Task.sleep(for: .milliseconds(20))
            try await store.put(
                key: "a.bin", from: scratch + "/a", contentType: "application/octet-stream", storageClass: nil)
            #expect(try await store.head(key: "a.bin")?.etag != info.etag)
        }
    }

    @Test(arguments: [
        "../escape.mp4", "media/../../etc/passwd", "/etc/passwd", "media/a..b", "", "media/", "media//a.mp4",
        "media/./a.mp4", "media/a b.mp4", "media/a~b", "médïa/a.mp4", "media\\a.mp4", "media/a.mp4?x",
    ])
    func invalidKeysAreRefused(key: String) async throws {
        try await withTemporaryDirectory { (scratch: String) async throws in
            let store = LocalBlobStore(root: scratch + "/store")
            try writeFile(scratch + "/a", [1, 2, 3])
            await #expect(throws: BlobError.invalidKey) {
                try await store.put(key: key, from: scratch + "/a", contentType: "x/y", storageClass: nil)
            }
            await #expect(throws: BlobError.invalidKey) { try await store.get(key: key, range: nil) }
            await #expect(throws: BlobError.invalidKey) { try await store.head(key: key) }
            await #expect(throws: BlobError.invalidKey) { try await store.delete(key: key) }
            #expect(filesUnder(scratch).count == 1)  // only the source
            #expect(!FileManager.default.fileExists(atPath: scratch + "/escape.mp4"))
        }
    }

    @Test func validKeysAndPrefixes() async throws {
        #expect(BlobKey.isValid("media/2026/11/0b7e-AF_x.v2.mp4"))
        #expect(BlobKey.isValid(".hidden"))
        #expect(BlobKey.isValidPrefix(""))
        #expect(BlobKey.isValidPrefix("media/"))
        #expect(!BlobKey.isValidPrefix("../"))
        #expect(!BlobKey.isValidPrefix("/media"))
        try await withTemporaryDirectory { (scratch: String) async throws in
            let store = LocalBlobStore(root: scratch + "/store")
            await #expect(throws: BlobError.invalidKey) { try await store.list(prefix: "../") }
            await #expect(throws: BlobError.invalidKey) { try await store.list(prefix: "/") }
            #expect(try await store.list(prefix: "media/") == [])  // root doesn't exist yet
        }
    }

    /// A put interrupted half-way (here: its task is cancelled after the first chunk is written)
    /// leaves neither a partial file under the key nor a temp file, and keeps the previous version.
    @Test func interruptedPutLeavesNoPartialFile() async throws {
        try await withTemporaryDirectory { (scratch: String) async throws in
            let root = scratch + "/store"
            let store = LocalBlobStore(root: root)
            let old = Array("old version".utf8)
            let big = pseudoRandomBytes(count: 5 * LocalBlobStore.chunkSize + 123, seed: 7)
            try writeFile(scratch + "/old", old)
            try writeFile(scratch + "/big", big)
            try await store.put(key: "media/x.mp4", from: scratch + "/old", contentType: "video/mp4", storageClass: nil)

            for key in ["media/x.mp4", "media/new.mp4"] {
                let result = await Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    try await store.put(key: key, from: scratch + "/big", contentType: "video/mp4", storageClass: nil)
                }.result
                #expect(throws: CancellationError.self) { try result.get() }
            }
            #expect(try await store.get(key: "media/x.mp4", range: nil).data == old)
            #expect(try await store.head(key: "media/new.mp4") == nil)
            #expect(filesUnder(root) == ["media/x.mp4"])
            #expect(try await store.list(prefix: "") == ["media/x.mp4"])

            // Uncancelled, the same put goes through whole.
            try await store.put(
                key: "media/new.mp4", from: scratch + "/big", contentType: "video/mp4", storageClass: nil)
            #expect(digest(try await store.get(key: "media/new.mp4", range: nil).data) == digest(big))
            #expect(filesUnder(root) == ["media/new.mp4", "media/x.mp4"])
        }
    }

    @Test func failedPutFromMissingSourceLeavesNothing() async throws {
        try await withTemporaryDirectory { (scratch: String) async throws in
            let store = LocalBlobStore(root: scratch + "/store")
            await #expect {
                try await store.put(
                    key: "a.mp4", from: scratch + "/missing", contentType: "video/mp4", storageClass: nil)
            } throws: { error in
                if case BlobError.server = error { return true }
                return false
            }
            #expect(filesUnder(scratch) == [])
        }
    }

    /// Leftover temp files (e.g. from a crash) are never listed as keys.
    @Test func listSkipsTempFiles() async throws {
        try await withTemporaryDirectory { (scratch: String) async throws in
            let store = LocalBlobStore(root: scratch + "/store")
            try FileManager.default.createDirectory(atPath: scratch + "/store/media", withIntermediateDirectories: true)
            try writeFile(scratch + "/store/media/.a.mp4~tmp~0000", [1])
            try writeFile(scratch + "/store/media/b.mp4", [1])
            #expect(try await store.list(prefix: "media/") == ["media/b.mp4"])
        }
    }
}
