import Foundation
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Protocol and shared types

/// Where media bytes live. Keys are relative paths like "media/2026/11/<id>.mp4".
///
/// A valid key is non-empty, uses only `[A-Za-z0-9._/-]`, contains no "..", does not start
/// or end with "/", and has no empty ("a//b") or "." segments. Anything else is
/// ``BlobError/invalidKey``. List prefixes follow the same rules except that they may be
/// empty and may end with "/".
public protocol BlobStore: Sendable {
    /// Stores the file at `localFile` under `key` (streamed, not loaded whole), with a content type
    /// and a storage class (S3 only; nil = bucket default).
    func put(key: String, from localFile: String, contentType: String, storageClass: String?) async throws
    /// Bytes `range` (inclusive lower, exclusive upper) or all; returns data + total size.
    /// Missing key → ``BlobError/notFound``. An upper bound past the end is clamped to the end;
    /// a lower bound at or past the end is `BlobError.server(status: 416, …)` (as S3 does).
    func get(key: String, range: Range<Int64>?) async throws -> (data: [UInt8], totalSize: Int64)
    /// Size, ETag, last-modified; nil when missing.
    func head(key: String) async throws -> BlobInfo?
    /// Deletes (missing is fine).
    func delete(key: String) async throws
    /// Every key under a prefix (for orphan sweeps), sorted; S3 pages through ListObjectsV2 continuation tokens.
    func list(prefix: String) async throws -> [String]
    /// The file holding `key` when the store is a local directory (served straight from disk).
    func localFile(key: String) -> String?
    /// A URL a client can fetch `key` from directly for `seconds` (S3 presigned), or nil.
    func directURL(key: String, seconds: Int) -> URL?
}

extension BlobStore {
    public func localFile(key: String) -> String? { nil }
    public func directURL(key: String, seconds: Int) -> URL? { nil }
}

public struct BlobInfo: Sendable, Equatable {
    public var size: Int64
    /// S3: the ETag without surrounding quotes. Local: see ``LocalBlobStore``.
    public var etag: String
    public var lastModified: Date

    public init(size: Int64, etag: String, lastModified: Date) {
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
    }
}

public enum BlobError: Error, Equatable, Sendable {
    case notFound
    case invalidKey
    /// A non-success answer: the HTTP status (S3) or an errno-like status (local: 416 for a bad
    /// range, 500 for an I/O error) and a readable message.
    case server(status: Int, message: String)
    /// The store could not be reached, failed on its side (5xx) or did not answer within its
    /// deadline: worth retrying later (answered 503 `storage_unavailable`).
    case unavailable(String)
}

public enum BlobKey {
    static let allowed: Set<UInt8> = {
        var s = Set<UInt8>()
        for c in UInt8(ascii: "A")...UInt8(ascii: "Z") { s.insert(c) }
        for c in UInt8(ascii: "a")...UInt8(ascii: "z") { s.insert(c) }
        for c in UInt8(ascii: "0")...UInt8(ascii: "9") { s.insert(c) }
        s.insert(UInt8(ascii: "."))
        s.insert(UInt8(ascii: "_"))
        s.insert(UInt8(ascii: "/"))
        s.insert(UInt8(ascii: "-"))
        return s
    }()

    /// True when `key` is a valid blob key (see ``BlobStore``).
    public static func isValid(_ key: String) -> Bool {
        guard !key.isEmpty, !key.hasSuffix("/") else { return false }
        return isValidPrefix(key)
    }

    /// True when `prefix` is a valid list prefix: "" or a key, optionally ending in "/".
    public static func isValidPrefix(_ prefix: String) -> Bool {
        if prefix.isEmpty { return true }
        guard prefix.utf8.allSatisfy({ allowed.contains($0) }),
            !prefix.contains(".."),
            !prefix.hasPrefix("/")
        else { return false }
        var segments = prefix.split(separator: "/", omittingEmptySubsequences: false)
        if prefix.hasSuffix("/") { segments.removeLast() }
        for segment in segments where segment.isEmpty || segment == "." {
            return false
        }
        return true
    }

    static func validate(_ key: String) throws {
        guard isValid(key) else { throw BlobError.invalidKey }
    }

    static func validatePrefix(_ prefix: String) throws {
        guard isValidPrefix(prefix) else { throw BlobError.invalidKey }
    }
}

// MARK: - Local store

/// A directory on disk (by default a folder under the server's data directory; the caller picks it).
///
/// * `put` streams the source in 1 MiB chunks into a temporary file in the destination's own
///   directory (named `.<name>~tmp~<uuid>`; "~" never occurs in a valid key, so temp files can never
///   be mistaken for blobs and are skipped by `list`), fsyncs it and `rename(2)`s it over the key:
///   readers see the old bytes or the new bytes, never a partial file. Any failure or task
///   cancellation while copying removes the temp file.
/// * ETag = `"<size in hex>-<mtime in nanoseconds since 1970, hex>"`, e.g. `"2fa-1891c0a1b2c3d4e5"`.
///   It changes whenever the file is replaced (rename gives a new mtime) but, unlike S3's, it is
///   not a content hash.
/// * `contentType` and `storageClass` are accepted and ignored (nothing is stored beside the bytes).
/// * File I/O runs on NIO's shared blocking thread pool, one chunk per job, so cooperative
///   threads are never held by disk I/O.
public struct LocalBlobStore: BlobStore {
    public let root: String
    static let chunkSize = 1 << 20

    public init(root: String) {
        var r = root
        while r.count > 1 && r.hasSuffix("/") { r.removeLast() }
        self.root = r
    }

    func path(for key: String) -> String { root + "/" + key }

    public func localFile(key: String) -> String? { BlobKey.isValid(key) ? path(for: key) : nil }

    public func put(key: String, from localFile: String, contentType: String, storageClass: String?) async throws {
        try BlobKey.validate(key)
        let destination = path(for: key)
        let directory = (destination as NSString).deletingLastPathComponent
        let name = (destination as NSString).lastPathComponent
        let temp = directory + "/." + name + "~tmp~" + UUID().uuidString

        let (source, target) = try await blocking { () throws -> (Int32, Int32) in
            let src = open(localFile, O_RDONLY | O_CLOEXEC)
            guard src >= 0 else { throw posixError("open \(localFile)") }
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                close(src)
                throw BlobError.server(status: 500, message: "mkdir \(directory): \(error)")
            }
            let dst = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard dst >= 0 else {
                let e = posixError("create \(temp)")
                close(src)
                throw e
            }
            return (src, dst)
        }
        var targetClosed = false
        var renamed = false
        defer {
            close(source)
            if !targetClosed { close(target) }
            if !renamed { unlink(temp) }
        }
        while true {
            let copied = try await blocking { () throws -> Int in
                var buffer = [UInt8](repeating: 0, count: LocalBlobStore.chunkSize)
                let n = try readFully(source, &buffer)
                if n > 0 { try writeFully(target, buffer, count: n) }
                return n
            }
            if copied == 0 { break }
            // An interrupted (cancelled) put stops here; the deferred cleanup removes the temp file.
            try Task.checkCancellation()
        }
        targetClosed = true  // the job below closes it whatever happens
        try await blocking {
            let synced = fsync(target) == 0
            let syncError = synced ? nil : posixError("fsync \(temp)")
            let closed = close(target) == 0
            if let syncError { throw syncError }
            guard closed else { throw posixError("close \(temp)") }
            guard rename(temp, destination) == 0 else { throw posixError("rename \(temp)") }
        }
        renamed = true
    }

    public func get(key: String, range: Range<Int64>?) async throws -> (data: [UInt8], totalSize: Int64) {
        try BlobKey.validate(key)
        let file = path(for: key)
        return try await blocking { () throws -> (data: [UInt8], totalSize: Int64) in
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                if errno == ENOENT || errno == ENOTDIR || errno == EISDIR { throw BlobError.notFound }
                throw posixError("open \(key)")
            }
            defer { close(fd) }
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw posixError("stat \(key)") }
            guard (st.st_mode & S_IFMT) == S_IFREG else { throw BlobError.notFound }
            let size = Int64(st.st_size)
            var lower: Int64 = 0
            var upper: Int64 = size
            if let range {
                guard range.lowerBound >= 0, range.lowerBound < size || range.isEmpty else {
                    throw BlobError.server(status: 416, message: "range \(range) not satisfiable for size \(size)")
                }
                lower = min(range.lowerBound, size)
                upper = min(range.upperBound, size)
            }
            let count = Int(upper - lower)
            var data = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = data.withUnsafeMutableBytes { buf in
                    pread(fd, buf.baseAddress! + done, count - done, off_t(lower) + off_t(done))
                }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw posixError("read \(key)")
                }
                if n == 0 { break }  // file shrank underneath us
                done += n
            }
            if done < count { data.removeLast(count - done) }
            return (data, size)
        }
    }

    public func head(key: String) async throws -> BlobInfo? {
        try BlobKey.validate(key)
        let file = path(for: key)
        return try await blocking { () throws -> BlobInfo? in
            var st = stat()
            guard stat(file, &st) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { return nil }
                throw posixError("stat \(key)")
            }
            guard (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            #if canImport(Darwin)
                let seconds = Int64(st.st_mtimespec.tv_sec)
                let nanos = Int64(st.st_mtimespec.tv_nsec)
            #else
                let seconds = Int64(st.st_mtim.tv_sec)
                let nanos = Int64(st.st_mtim.tv_nsec)
            #endif
            let size = Int64(st.st_size)
            let mtimeNanos = seconds &* 1_000_000_000 &+ nanos
            let etag = String(size, radix: 16) + "-" + String(UInt64(bitPattern: mtimeNanos), radix: 16)
            let date = Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9)
            return BlobInfo(size: size, etag: etag, lastModified: date)
        }
    }

    public func delete(key: String) async throws {
        try BlobKey.validate(key)
        let file = path(for: key)
        try await blocking {
            if unlink(file) != 0 && errno != ENOENT && errno != ENOTDIR {
                throw posixError("unlink \(key)")
            }
        }
    }

    public func list(prefix: String) async throws -> [String] {
        try BlobKey.validatePrefix(prefix)
        // Walk only the deepest directory the prefix names.
        let directoryPart: String
        if let slash = prefix.lastIndex(of: "/") {
            directoryPart = String(prefix[..<slash])
        } else {
            directoryPart = ""
        }
        let root = self.root
        return try await blocking { () throws -> [String] in
            let start = directoryPart.isEmpty ? root : root + "/" + directoryPart
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: start, isDirectory: &isDirectory), isDirectory.boolValue else {
                return []
            }
            guard let enumerator = FileManager.default.enumerator(atPath: start) else { return [] }
            var keys: [String] = []
            while let relative = enumerator.nextObject() as? String {
                let key = directoryPart.isEmpty ? relative : directoryPart + "/" + relative
                guard key.hasPrefix(prefix), BlobKey.isValid(key) else { continue }
                var st = stat()
                guard lstat(root + "/" + key, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                keys.append(key)
            }
            return keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }
}

// MARK: - POSIX helpers

/// Runs blocking work on NIO's shared thread pool.
@inline(__always)
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await NIOThreadPool.singleton.runIfActive(body)
}

func posixError(_ what: String) -> BlobError {
    let code = errno
    return .server(status: 500, message: "\(what): \(String(cString: strerror(code))) (errno \(code))")
}

/// Reads until `buffer` is full or end of file; returns the byte count.
func readFully(_ fd: Int32, _ buffer: inout [UInt8]) throws -> Int {
    var done = 0
    let capacity = buffer.count
    while done < capacity {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, capacity - done) }
        if n < 0 {
            if errno == EINTR { continue }
            throw posixError("read")
        }
        if n == 0 { break }
        done += n
    }
    return done
}

func writeFully(_ fd: Int32, _ buffer: [UInt8], count: Int) throws {
    var done = 0
    while done < count {
        let n = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + done, count - done) }
        if n < 0 {
            if errno == EINTR { continue }
            throw posixError("write")
        }
        done += n
    }
}

/// Size of a regular file, or a `BlobError.server` describing why it can't be read.
func fileSize(_ path: String) throws -> Int64 {
    var st = stat()
    guard stat(path, &st) == 0 else { throw posixError("stat \(path)") }
    guard (st.st_mode & S_IFMT) == S_IFREG else {
        throw BlobError.server(status: 500, message: "\(path) is not a regular file")
    }
    return Int64(st.st_size)
}
