import Crypto
import Foundation
import Testing

@testable import TonightServer

/// A fresh temporary directory, removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("blobs-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// Deterministic pseudo-random bytes (xorshift), so failures are reproducible.
func pseudoRandomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var state = seed | 1
    var out = [UInt8]()
    out.reserveCapacity(count)
    while out.count < count {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        withUnsafeBytes(of: state) { out.append(contentsOf: $0.prefix(count - out.count)) }
    }
    return out
}

/// "<count> bytes, sha256 <hex>": compared instead of megabyte arrays, so a failure prints briefly.
func digest(_ bytes: [UInt8]) -> String {
    "\(bytes.count) bytes, sha256 \(SigV4.hex(SHA256.hash(data: bytes)))"
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// All files (recursively) under `directory`, relative paths.
func filesUnder(_ directory: String) -> [String] {
    guard let e = FileManager.default.enumerator(atPath: directory) else { return [] }
    var out: [String] = []
    while let p = e.nextObject() as? String {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory + "/" + p, isDirectory: &isDir), !isDir.boolValue {
            out.append(p)
        }
    }
    return out.sorted()
}

/// The behaviour every BlobStore shares: put a 3 MB file, head, get all, get a range, list, delete.
func exerciseContract(_ store: some BlobStore, scratch: String) async throws {
    let bytes = pseudoRandomBytes(count: 3 * 1024 * 1024, seed: 42)
    let source = scratch + "/source.bin"
    try writeFile(source, bytes)
    let key = "media/2026/11/0001.mp4"

    #expect(try await store.head(key: key) == nil)
    await #expect(throws: BlobError.notFound) { try await store.get(key: key, range: nil) }

    try await store.put(key: key, from: source, contentType: "video/mp4", storageClass: nil)

    let info = try #require(try await store.head(key: key))
    #expect(info.size == Int64(bytes.count))
    #expect(!info.etag.isEmpty)
    #expect(abs(info.lastModified.timeIntervalSinceNow) < 600)

    let all = try await store.get(key: key, range: nil)
    #expect(all.totalSize == Int64(bytes.count))
    #expect(all.data.count == bytes.count)
    #expect(digest(all.data) == digest(bytes))

    let slice = try await store.get(key: key, range: 100..<200)
    #expect(slice.totalSize == Int64(bytes.count))
    #expect(slice.data == Array(bytes[100..<200]))

    // Upper bound past the end is clamped.
    let tail = try await store.get(key: key, range: Int64(bytes.count - 10)..<Int64(bytes.count + 1000))
    #expect(tail.data == Array(bytes[(bytes.count - 10)...]))

    // Lower bound past the end: 416, as S3 answers.
    await #expect {
        try await store.get(key: key, range: Int64(bytes.count + 5)..<Int64(bytes.count + 10))
    } throws: { error in
        if case BlobError.server(status: 416, _) = error { return true }
        return false
    }

    // Listing: two keys under the prefix, one elsewhere.
    let small = scratch + "/small.bin"
    try writeFile(small, Array("hello".utf8))
    try await store.put(key: "media/2026/11/0002.jpg", from: small, contentType: "image/jpeg", storageClass: nil)
    try await store.put(key: "media/2026/12/0003.jpg", from: small, contentType: "image/jpeg", storageClass: nil)
    #expect(try await store.list(prefix: "media/2026/11/") == ["media/2026/11/0001.mp4", "media/2026/11/0002.jpg"])
    #expect(try await store.list(prefix: "media/2026/1").count == 3)
    #expect(try await store.list(prefix: "").count == 3)
    #expect(try await store.list(prefix: "media/2027/") == [])

    // Overwrite replaces the bytes.
    try await store.put(key: "media/2026/11/0002.jpg", from: source, contentType: "image/jpeg", storageClass: nil)
    #expect(try await store.head(key: "media/2026/11/0002.jpg")?.size == Int64(bytes.count))

    try await store.delete(key: key)
    await #expect(throws: BlobError.notFound) { try await store.get(key: key, range: nil) }
    await #expect(throws: BlobError.notFound) { try await store.get(key: key, range: 0..<10) }
    #expect(try await store.head(key: key) == nil)
    try await store.delete(key: key)  // missing is fine
    #expect(try await store.list(prefix: "media/2026/11/") == ["media/2026/11/0002.jpg"])
}
