import Foundation
import Logging
import TonightCore

/// What a member sends with an upload, validated.
struct NewPost: Sendable {
    var placeID: String?
    var cityKey: String
    var eventID: String?
    var caption: String
    var tags: [String]
    var songTitle: String?
    var songArtist: String?
    var songURI: String?
}

/// Posts end to end: stores uploads and imports (blob first, then the row and its processing job
/// in one transaction), deletes posts with their blobs, groups votes, and counts views.
///
/// No orphan blobs: a blob is written before its row, and if the row's transaction fails the
/// blob is deleted at once; whatever a crash leaves between the two is found by the sweep (every
/// blob lives under `posts/<id>/`, and a blob whose post does not exist is an orphan).
struct PostService: Sendable {
    let posts: PostRepository
    let blobs: any BlobStore
    let urls: MediaURLs
    let votes: VoteBatcher
    let views: ViewCounter
    let storageClass: String?
    let retentionDays: Int
    let logger: Logger

    /// The job kind that processes a post's media.
    static let processJob = "media.process"

    /// Stores an uploaded file as a new `processing` post by `author`. An upload whose client has
    /// gone (`clientGone`, asked before the blob is written and again before the post is) is
    /// abandoned: nothing is kept, so a client that gave up and retries without an
    /// `Idempotency-Key` does not find a post it never saw.
    func create(
        _ post: NewPost, author: String, file: String, container: MediaContainer, id: String = Identifier.make(),
        clientGone: @Sendable () -> Bool = { false }
    ) async throws -> PostRecord {
        try await store(
            post, author: author, source: nil, file: file, container: container, now: Clock.millis(), id: id,
            clientGone: clientGone)
    }

    /// The answer to an upload whose client left before it was stored (nobody reads it).
    static let abandoned = APIError.badRequest(
        "The connection was closed before the upload was stored; nothing was posted.", code: .invalidUpload)

    /// Stores a post (a member's or an import's) from a local file and queues its processing, under
    /// `id` (a new one unless the caller has one: a resumable upload's own).
    func store(
        _ post: NewPost, author: String?, source: (name: String, kind: String, id: String)?, file: String,
        container: MediaContainer, now: Int64, id: String = Identifier.make(),
        clientGone: @Sendable () -> Bool = { false }
    ) async throws -> PostRecord {
        let key = "posts/\(id)/original.\(container.fileExtension)"
        if clientGone() { throw Self.abandoned }
        try await blobs.put(key: key, from: file, contentType: container.contentType, storageClass: storageClass)
        if clientGone() {
            try? await blobs.delete(key: key)
            throw Self.abandoned
        }
        let record = PostRecord(
            id: id, authorID: author, source: source?.kind, sourceID: source?.id, sourceName: source?.name,
            placeID: post.placeID, cityKey: post.cityKey, eventID: post.eventID, caption: post.caption,
            songTitle: post.songTitle, songArtist: post.songArtist, songURI: post.songURI, status: .processing,
            mediaKind: ContainerSniffer.isVideo(container) ? .video : .image, originalKey: key,
            originalType: container.contentType, expiresAt: now + Int64(retentionDays) * 86_400_000,
            createdAt: now, updatedAt: now, tags: post.tags)
        do {
            let payload = String(decoding: try JSONEncoder().encode(["postId": id]), as: UTF8.self)
            try await posts.create(
                record, job: NewJob(kind: Self.processJob, payload: payload, runAt: now, maxAttempts: 5))
        } catch {
            try? await blobs.delete(key: key)
            throw error
        }
        return try await posts.find(id: id) ?? record
    }

    /// Deletes a post and then its blobs (a blob left by a failure here is swept later).
    func delete(_ post: PostRecord) async throws {
        _ = try await posts.delete(id: post.id)
        await deleteBlobs(of: post)
    }

    /// Deletes every blob a post owns, logging (not throwing) failures: the sweep retries.
    func deleteBlobs(of post: PostRecord) async {
        for key in post.blobKeys {
            do { try await blobs.delete(key: key) } catch {
                logger.warning(
                    "blob delete failed", metadata: LoggedError.metadata(error).merging(["key": "\(key)"]) { $1 })
            }
        }
    }
}
