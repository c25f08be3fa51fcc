import Foundation
import Logging
import TonightCore

/// The `media.process` job: probes and transcodes a post's upload, stores the playable file and
/// poster beside it, records size, duration and tempo, and marks the post ready. Broken media
/// marks the post failed with the reason (and drops its blob); infrastructure trouble (disk, a
/// killed ffmpeg, storage) throws, so the job is retried.
struct MediaJob: Sendable {
    let service: PostService
    let processor: MediaProcessor
    /// Where jobs unpack their work (`<data dir>/tmp/media-work`).
    let workRoot: String
    let logger: Logger

    struct Payload: Codable { var postId: String }

    /// The handler for ``PostService/processJob``.
    func run(_ job: ClaimedJob) async throws {
        let payload = try JSONDecoder().decode(Payload.self, from: Data(job.payload.utf8))
        guard let post = try await service.posts.find(id: payload.postId), post.status == .processing else { return }
        guard let container = MediaContainer(contentType: post.originalType) else {
            try await fail(post, "The stored file has an unknown type.")
            return
        }
        let work = URL(fileURLWithPath: workRoot).appendingPathComponent(job.id)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let input = try await localCopy(of: post, container: container, in: work)
        let result: ProcessedMedia
        do {
            result = try await processor.process(input: input, container: container, workDirectory: work)
        } catch let rejection as MediaRejection {
            try await fail(post, rejection.message)
            return
        }
        var written: [String] = []
        var videoKey = post.originalKey
        var posterKey: String?
        if result.transcoded {
            let name = ContainerSniffer.isVideo(container) ? "video.mp4" : "image.\(result.output.pathExtension)"
            videoKey = "posts/\(post.id)/\(name)"
            try await service.blobs.put(
                key: videoKey, from: result.output.path, contentType: result.outputContentType,
                storageClass: service.storageClass)
            written.append(videoKey)
        }
        if let poster = result.poster {
            if poster == result.output {
                posterKey = videoKey
            } else {
                let key = "posts/\(post.id)/poster.jpg"
                try await service.blobs.put(
                    key: key, from: poster.path, contentType: "image/jpeg", storageClass: service.storageClass)
                written.append(key)
                posterKey = key
            }
        }
        let beats = result.tempo.map { tempo in
            String(
                decoding: (try? JSONEncoder().encode(tempo.beats.map { ($0 * 1000).rounded() / 1000 }))
                    ?? Data("[]".utf8), as: UTF8.self)
        }
        let ready = try await service.posts.markReady(
            id: post.id,
            media: ProcessedPost(
                videoKey: videoKey, contentType: result.outputContentType, posterKey: posterKey, width: result.width,
                height: result.height, duration: result.duration, bpm: result.tempo?.bpm, beats: beats),
            now: Clock.millis())
        if ready { logger.info("media processed", metadata: ["post": "\(post.id)"]) }
        if !ready {
            // Deleted while processing: drop what this job wrote.
            for key in written { try? await service.blobs.delete(key: key) }
        } else if videoKey != post.originalKey {
            // The playable copy replaces the upload.
            try? await service.blobs.delete(key: post.originalKey)
        }
    }

    private func fail(_ post: PostRecord, _ reason: String) async throws {
        try await service.posts.markFailed(id: post.id, reason: reason, now: Clock.millis())
        try? await service.blobs.delete(key: post.originalKey)
        logger.info("media rejected", metadata: ["post": "\(post.id)", "reason": "\(reason)"])
    }

    /// The upload as a local file: the blob itself on a local store, else downloaded into `work`.
    private func localCopy(of post: PostRecord, container: MediaContainer, in work: URL) async throws -> URL {
        if let path = service.blobs.localFile(key: post.originalKey) { return URL(fileURLWithPath: path) }
        let (data, _) = try await service.blobs.get(key: post.originalKey, range: nil)
        let file = work.appendingPathComponent("original.\(container.fileExtension)")
        try Data(data).write(to: file)
        return file
    }
}

extension MediaContainer {
    /// The container whose MIME type is `contentType`.
    init?(contentType: String) {
        guard
            let match = [MediaContainer.mp4, .mov, .webm, .jpeg, .png, .heic].first(where: {
                $0.contentType == contentType
            })
        else { return nil }
        self = match
    }
}
