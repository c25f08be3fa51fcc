import Foundation
import HTTPTypes
import OpenAPIRuntime
import TonightAPI

/// A resumable upload on the server (tus 1.0): where it lives and how long the file is. Keep it
/// (it is `Codable`) while the upload runs, so that an upload the app could not finish — the
/// network went, or the app was closed — goes on from the server's offset at the next launch
/// with ``TonightClient/resumeUpload(_:file:chunkSize:attempts:progress:)``.
public struct ResumableUpload: Sendable, Codable, Hashable {
    /// The upload's path on the server, `/v1/uploads/<id>`.
    public var location: String
    /// The size of the whole file.
    public var length: Int64

    /// An upload at `location` of `length` bytes.
    public init(location: String, length: Int64) {
        self.location = location
        self.length = length
    }

    /// The upload's id (the last path component of ``location``).
    public var id: String { String(location.split(separator: "/").last ?? "") }
}

extension TonightClient {
    /// Uploads a clip or still as a post in chunks that survive a bad network: starts a resumable
    /// upload (the draft is checked before any byte is sent) and sends it with
    /// ``resumeUpload(_:file:chunkSize:attempts:progress:)``. `started` is told the upload first,
    /// for the app to keep until this returns.
    public func uploadPost(
        file: URL, draft: PostDraft, chunkSize: Int = 4 << 20, attempts: Int = 8,
        started: (@Sendable (ResumableUpload) -> Void)? = nil,
        progress: (@Sendable (_ sent: Int64, _ total: Int64) -> Void)? = nil
    ) async throws -> Post {
        let upload = try await startUpload(file: file, draft: draft)
        started?(upload)
        return try await resumeUpload(
            upload, file: file, chunkSize: chunkSize, attempts: attempts, progress: progress)
    }

    /// Starts a resumable upload of `file` with the draft's fields; no bytes are sent yet.
    public func startUpload(file: URL, draft: PostDraft) async throws -> ResumableUpload {
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
        let length = size?.int64Value ?? 0
        var fields: [(String, String?)] = [
            ("placeId", draft.placeID), ("city", draft.cityKey), ("eventId", draft.eventID),
            ("caption", draft.caption), ("songTitle", draft.songTitle), ("songArtist", draft.songArtist),
            ("songUri", draft.songURI), ("filename", file.lastPathComponent), ("uploadKey", UUID().uuidString),
        ]
        if !draft.tags.isEmpty { fields.append(("tags", draft.tags.joined(separator: ","))) }
        let metadata = fields.compactMap { key, value in
            value.flatMap { $0.isEmpty ? nil : "\(key) \(Data($0.utf8).base64EncodedString())" }
        }.joined(separator: ",")
        let created = try await call {
            try await api.createUpload(
                headers: .init(tusResumable: Self.tusVersion, uploadLength: length, uploadMetadata: metadata)
            ).created
        }
        return ResumableUpload(location: created.headers.location, length: length)
    }

    /// Sends what the server does not hold yet of `upload` from `file` (the same file), in chunks
    /// of `chunkSize`, and returns the post it made. After a lost connection, a busy server or
    /// another writer, it asks the server's offset again and goes on from there, giving up after
    /// `attempts` tries in a row that moved nothing. An upload that expired or is not known to
    /// the server any more throws ``TonightError/problem(_:)`` with status 410 or 404: start again.
    /// A `file` shorter than the upload throws `CocoaError.fileReadCorruptFile` once its bytes are
    /// sent.
    public func resumeUpload(
        _ upload: ResumableUpload, file: URL, chunkSize: Int = 4 << 20, attempts: Int = 8,
        progress: (@Sendable (_ sent: Int64, _ total: Int64) -> Void)? = nil
    ) async throws -> Post {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var failures = 0
        var best: Int64 = -1
        while true {
            do {
                var (offset, postID) = try await uploadOffset(upload)
                // Tries in a row that moved nothing count; any progress starts the count again.
                if offset > best { (best, failures) = (offset, 0) }
                while postID == nil {
                    progress?(offset, upload.length)
                    // All bytes in but no post yet (still being stored, or storing it failed): an
                    // empty PATCH at the end asks again.
                    var chunk = Data()
                    if offset < upload.length {
                        try handle.seek(toOffset: UInt64(offset))
                        chunk = try handle.read(upToCount: max(1, chunkSize)) ?? Data()
                        // A file shorter than the upload is not the file it was started with.
                        guard !chunk.isEmpty else {
                            throw CocoaError(.fileReadCorruptFile, userInfo: [NSURLErrorKey: file])
                        }
                    }
                    let sent = try await call {
                        try await api.appendUpload(
                            path: .init(uploadId: upload.id),
                            headers: .init(tusResumable: Self.tusVersion, uploadOffset: offset),
                            body: .applicationOffsetOctetStream(HTTPBody(chunk))
                        ).noContent.headers
                    }
                    (offset, postID) = (sent.uploadOffset, sent.tonightPostId)
                    if offset > best { (best, failures) = (offset, 0) }
                }
                progress?(upload.length, upload.length)
                return try await post(postID ?? "")
            } catch let error as TonightError where !Self.isTransient(error) {
                throw error
            } catch let error as CocoaError {
                throw error
            } catch {
                failures += 1
                guard failures < attempts else { throw error }
                // Back off (0.5 s, 1 s, 2 s … up to 15 s), then ask where the server stands.
                try await Task.sleep(for: .milliseconds(min(15_000, 500 << min(failures - 1, 5))))
            }
        }
    }

    /// How many bytes of `upload` the server holds, and the post once it is finished.
    public func uploadOffset(_ upload: ResumableUpload) async throws -> (offset: Int64, postID: String?) {
        let state = try await call {
            try await api.getUploadOffset(
                path: .init(uploadId: upload.id), headers: .init(tusResumable: Self.tusVersion)
            ).ok.headers
        }
        return (state.uploadOffset, state.tonightPostId)
    }

    /// Abandons an upload: the server deletes its bytes.
    public func cancelUpload(_ upload: ResumableUpload) async throws {
        _ = try await call {
            try await api.deleteUpload(
                path: .init(uploadId: upload.id), headers: .init(tusResumable: Self.tusVersion)
            ).noContent
        }
    }

    static let tusVersion = "1.0.0"

    /// Whether a problem is worth another try after asking the offset: a stale offset (409),
    /// another writer (423), a corrupted chunk (460), a busy or unreachable server (5xx).
    static func isTransient(_ error: TonightError) -> Bool {
        switch error {
        case .problem(let problem): [409, 423, 460].contains(problem.status) || problem.status >= 500
        case .unexpectedResponse(let status): status >= 500
        case .notSignedIn: false
        }
    }
}
