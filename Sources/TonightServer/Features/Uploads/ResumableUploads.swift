import Foundation
import NIOPosix
import OpenAPIRuntime
import Synchronization
import TonightCore

/// Resumable uploads (tus 1.0) that end as posts, exactly as `POST /v1/posts` stores them.
///
/// - **Where the bytes are.** Each unfinished upload is one file, `<data dir>/uploads/<id>.part`, on
///   the instance that took its creation; its size is the upload's offset, so what a dropped
///   connection delivered is kept without any bookkeeping. The row (``UploadRepository``) holds what
///   is fixed at creation. In a cluster, the load balancer keeps one member's uploads on one
///   instance (docs/operations.md: hashing on `Authorization` for `/v1/uploads`); an instance asked
///   about an upload whose file it does not hold answers 404, and the client starts again.
/// - **Checks as early as the bytes allow.** The length against the media limit and the post's
///   fields at creation; the container as soon as the first 64 bytes are in (a refused format ends
///   the upload); `Upload-Checksum` over each request's bytes, which are dropped when it fails.
/// - **One writer per upload.** A request that finds another one writing gets 423 (tus clients
///   retry), so two clients racing on one upload can never interleave bytes; the offset is checked
///   under that lock.
/// - **Limits.** At most ``perUser`` unfinished uploads per member and ``totalBytes`` unfinished
///   bytes in all (the sum of their lengths, across the cluster); creation counts against the same
///   hourly upload limit as `POST /v1/posts`. Each `PATCH` extends the expiry by ``expiry``;
///   ``UploadSweeper`` deletes what expired.
struct ResumableUploads: Sendable {
    let repository: UploadRepository
    let postService: PostService
    let form: PostForm
    let limiter: RateLimiter
    let locks = UploadLocks()
    /// Where unfinished uploads' files live.
    let directory: String
    /// The largest upload (the media limit).
    let maxBytes: Int
    let uploadsPerHour: Int
    /// How long an upload lives after its creation or its last `PATCH`.
    let expiry: Duration
    /// The most unfinished upload bytes held at once.
    let totalBytes: Int64
    /// How long a `PATCH` may send nothing before it is ended (its bytes so far kept).
    let bodyIdle: Duration

    /// Unfinished uploads one member may hold.
    static let perUser = 5
    /// The post fields `Upload-Metadata` may carry (others, like tus clients' `filename`, are ignored).
    static let fields: Set<String> = [
        "placeId", "city", "eventId", "caption", "tags", "songTitle", "songArtist", "songUri",
    ]
    /// Bytes read to tell the container (as ``UploadFile`` does).
    private static let sniffLength = 64

    /// Starts an upload of `length` bytes for `userID`, with the post's fields from `metadata`.
    func create(userID: String, length: Int64, metadata: String?) async throws -> UploadRecord {
        guard length >= 1 else {
            throw APIError.validation([
                .init(field: "Upload-Length", code: "out_of_range", message: "Upload-Length is at least 1.")
            ])
        }
        guard length <= maxBytes else { throw UploadFile.Problem.tooLarge(limit: maxBytes).apiError() }
        guard let pairs = Tus.metadata(metadata) else {
            throw APIError.badRequest(
                "Upload-Metadata is not comma-separated keys with base64 values.", code: .invalidRequest)
        }
        let fields = pairs.filter { Self.fields.contains($0.key) }
        let key = pairs["uploadKey"]
        if let key, !(1...100).contains(key.utf8.count) || !key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) {
            throw APIError.validation([
                .init(field: "uploadKey", code: "invalid", message: "Use 1–100 visible ASCII characters.")
            ])
        }
        _ = try await form.validated(fields)
        let now = Clock.millis()
        // A creation repeated with its key (its answer was lost) is the upload it made, when that
        // upload is of the same length and its bytes are on this instance.
        if let key {
            for upload in try await repository.open(userID: userID, key: key, now: now)
            where upload.length == length && FileManager.default.fileExists(atPath: path(upload.id)) {
                return upload
            }
        }
        try await limiter.check("upload:\(userID)", capacity: uploadsPerHour, period: 3600)
        let upload = UploadRecord(
            id: Identifier.make(), userID: userID, length: length, fields: fields, key: key, postID: nil,
            createdAt: now, expiresAt: now + expiry.milliseconds)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path(upload.id), contents: nil) else {
            throw ConfigurationError("cannot create \(path(upload.id))")
        }
        let created: UploadRepository.Creation
        do {
            created = try await repository.create(upload, perUser: Self.perUser, totalBytes: totalBytes, now: now)
        } catch {
            removeFile(upload.id)
            throw error
        }
        switch created {
        case .created: return upload
        case .tooMany:
            removeFile(upload.id)
            throw APIError(
                status: 429, code: .tooManyUploads,
                detail: "You have \(Self.perUser) unfinished uploads. Finish or delete one first.", retryAfter: 60)
        case .full:
            removeFile(upload.id)
            throw APIError(
                status: .init(code: 507), code: .uploadsFull,
                detail: "The server is holding as many unfinished uploads as it can. Try again later.",
                retryAfter: 60)
        }
    }

    /// An upload of `userID` and how many of its bytes are held.
    func state(id: String, userID: String) async throws -> (upload: UploadRecord, offset: Int64) {
        let upload = try await find(id: id, userID: userID)
        if upload.postID != nil { return (upload, upload.length) }
        return (upload, try heldBytes(of: upload))
    }

    /// Appends `body` at `offset`; returns the new offset, the new expiry and, when this request
    /// finished the file, the post it made.
    func append(
        id: String, userID: String, offset: Int64, checksum header: String?, body: HTTPBody
    ) async throws -> (offset: Int64, expiresAt: Int64, postID: String?) {
        var checksum: Tus.Checksum?
        if let header {
            guard let parsed = Tus.checksum(header) else {
                throw APIError.badRequest(
                    "Upload-Checksum takes sha1 or sha256 and a base64 digest.", code: .unsupportedChecksum)
            }
            checksum = parsed
        }
        guard await locks.take(id) else { throw Self.locked }
        do {
            let result = try await appendLocked(
                id: id, userID: userID, offset: offset, checksum: checksum, body: body)
            await locks.release(id)
            return result
        } catch {
            await locks.release(id)
            throw error
        }
    }

    /// Deletes an upload and its bytes (its post, if it made one, stays).
    func terminate(id: String, userID: String) async throws {
        let upload = try await find(id: id, userID: userID)
        guard await locks.take(id) else { throw Self.locked }
        do {
            try await repository.delete(id: upload.id)
        } catch {
            await locks.release(id)
            throw error
        }
        removeFile(upload.id)
        await locks.release(id)
    }

    private func appendLocked(
        id: String, userID: String, offset: Int64, checksum: Tus.Checksum?, body: HTTPBody
    ) async throws -> (offset: Int64, expiresAt: Int64, postID: String?) {
        let upload = try await find(id: id, userID: userID)
        if let postID = upload.postID {
            guard offset == upload.length else { throw Self.mismatch(upload.length) }
            return (upload.length, upload.expiresAt, postID)
        }
        let held = try heldBytes(of: upload)
        guard offset == held else { throw Self.mismatch(held) }
        // Extended now, so that the upload cannot expire (and be swept) while this request writes.
        try await repository.extend(id: id, until: Clock.millis() + expiry.milliseconds)
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: path(id)))
        var closed = false
        defer { if !closed { try? file.close() } }
        let head = held < Self.sniffLength ? try readHead(file, count: Int(held)) : []
        try file.seek(toOffset: UInt64(held))
        let received: Received
        do {
            received = try await receive(body, into: file, upload: upload, held: held, head: head, checksum: checksum)
        } catch let error as APIError {
            throw error
        } catch let failure as WriteFailure {
            throw failure.error  // ours (a full disk, say): a 500, and the client may resume later
        } catch {
            // The connection dropped, or sent nothing for `bodyIdle`: what arrived is kept for the
            // resume, unless a checksum was promised for the whole request.
            if checksum != nil { try? file.truncate(atOffset: UInt64(held)) }
            try? await repository.extend(id: id, until: Clock.millis() + expiry.milliseconds)
            throw APIError.badRequest(
                "The upload was interrupted; resume from the server's offset.", code: .invalidUpload)
        }
        if !received.checksumMatches {
            try? file.truncate(atOffset: UInt64(held))
            throw APIError(
                status: .init(code: 460), code: .checksumMismatch,
                detail: "The bytes do not match Upload-Checksum; none of them were kept.")
        }
        closed = true
        try file.close()
        let now = held + received.written
        let expires = Clock.millis() + expiry.milliseconds
        guard now == upload.length else {
            try await repository.extend(id: id, until: expires)
            return (now, expires, nil)
        }
        if !received.sniffed { try await refuseUnless(acceptable: received.head, upload: upload) }
        let postID = try await finish(upload)
        return (now, upload.expiresAt, postID)
    }

    /// What one request's body delivered.
    private struct Received: Sendable {
        var written: Int64
        var head: [UInt8]
        var sniffed: Bool
        var checksumMatches: Bool
    }

    /// A failure to write the file (the server's, not the client's).
    private struct WriteFailure: Error {
        var error: any Error
    }

    /// Writes `body` to `file` (at `held`), giving up when no byte arrives for ``bodyIdle``: a
    /// phone that lost its network without closing the connection must not hold the upload's lock
    /// (and a task) until the connection times out, if it ever does.
    private func receive(
        _ body: HTTPBody, into file: FileHandle, upload: UploadRecord, held: Int64, head: [UInt8],
        checksum: Tus.Checksum?
    ) async throws -> Received {
        let lastByte = LastByte()
        let idle = bodyIdle
        return try await withThrowingTaskGroup(of: Received?.self) { group in
            group.addTask {
                var received = Received(
                    written: 0, head: head, sniffed: held >= Self.sniffLength, checksumMatches: true)
                var hasher = checksum?.hasher()
                for try await chunk in body {
                    lastByte.time.withLock { $0 = .now }
                    guard held + received.written + Int64(chunk.count) <= upload.length else {
                        try? file.truncate(atOffset: UInt64(held))
                        throw APIError.badRequest("The bytes run past Upload-Length.", code: .invalidUpload)
                    }
                    hasher?.update(chunk)
                    let data = Data(chunk)
                    do {
                        try await NIOThreadPool.singleton.runIfActive { try file.write(contentsOf: data) }
                    } catch { throw WriteFailure(error: error) }
                    received.written += Int64(chunk.count)
                    if !received.sniffed {
                        received.head.append(contentsOf: chunk.prefix(Self.sniffLength - received.head.count))
                        if received.head.count >= Self.sniffLength {
                            received.sniffed = true
                            try await refuseUnless(acceptable: received.head, upload: upload)
                        }
                    }
                }
                if let hasher, let checksum { received.checksumMatches = hasher.matches(checksum.expected) }
                return received
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: .milliseconds(500))
                    if lastByte.time.withLock({ $0 }).duration(to: .now) > idle { throw BodyStalled() }
                }
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let received = first else { throw BodyStalled() }
            return received
        }
    }

    /// No byte of a request body arrived for ``bodyIdle``.
    private struct BodyStalled: Error {}

    /// When the last byte of a request body arrived.
    private final class LastByte: Sendable {
        let time = Mutex(ContinuousClock.now)
    }

    /// Stores the finished file as a post (the fields are checked again: a place may have gone) and
    /// records it; a failure leaves the file whole, so the same `PATCH` at the end retries. The post
    /// takes the upload's id, so a retry after the post was stored (but not recorded here) finds it
    /// instead of making a second one.
    private func finish(_ upload: UploadRecord) async throws -> String {
        if try await postService.posts.find(id: upload.id) == nil {
            let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: path(upload.id)))
            let head = try file.read(upToCount: Self.sniffLength) ?? Data()
            try file.close()
            let container = try UploadFile.accepted(ContainerSniffer.sniff(Array(head)))
            let post = try await form.validated(upload.fields)
            _ = try await postService.create(
                post, author: upload.userID, file: path(upload.id), container: container, id: upload.id)
        }
        try await repository.finish(id: upload.id, postID: upload.id)
        removeFile(upload.id)
        return upload.id
    }

    /// Ends the upload when its first bytes are not a format posts take (415; nothing is kept).
    private func refuseUnless(acceptable head: [UInt8], upload: UploadRecord) async throws {
        do {
            _ = try UploadFile.accepted(ContainerSniffer.sniff(head))
        } catch let problem as UploadFile.Problem {
            removeFile(upload.id)
            try? await repository.delete(id: upload.id)
            throw problem.apiError()
        }
    }

    /// The caller's upload: 404 for anyone else's or an unknown id, 410 once expired unfinished.
    private func find(id: String, userID: String) async throws -> UploadRecord {
        guard let upload = try await repository.find(id: id), upload.userID == userID else {
            throw APIError.notFound("No such upload.")
        }
        if upload.postID == nil, upload.expiresAt <= Clock.millis() {
            throw APIError(
                status: .gone, code: .uploadExpired,
                detail: "This upload expired and its bytes were deleted. Start again.")
        }
        return upload
    }

    /// The bytes held: the file's size (404 when this instance does not hold the file).
    private func heldBytes(of upload: UploadRecord) throws -> Int64 {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path(upload.id)))?[.size] as? NSNumber
        else {
            throw APIError.notFound("This upload is not on this server any more. Start again.")
        }
        return size.int64Value
    }

    private func readHead(_ file: FileHandle, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        try file.seek(toOffset: 0)
        let data = try file.read(upToCount: count) ?? Data()
        try file.seek(toOffset: UInt64(count))
        return Array(data)
    }

    func path(_ id: String) -> String { directory + "/" + id + ".part" }

    private func removeFile(_ id: String) { try? FileManager.default.removeItem(atPath: path(id)) }

    private static let locked = APIError(
        status: .init(code: 423), code: .uploadLocked,
        detail: "Another request is writing this upload. Try again in a moment.", retryAfter: 1)

    private static func mismatch(_ held: Int64) -> APIError {
        APIError(
            status: .conflict, code: .offsetMismatch,
            detail: "The server holds \(held) bytes of this upload; resume from there.")
    }
}

/// The uploads being written on this instance (one request each).
actor UploadLocks {
    private var taken: Set<String> = []

    /// The uploads being written now.
    var held: Set<String> { taken }

    /// Takes `id`'s lock unless a request already holds it.
    func take(_ id: String) -> Bool { taken.insert(id).inserted }

    func release(_ id: String) { taken.remove(id) }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
