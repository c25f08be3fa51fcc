import Foundation
import Logging
import ServiceLifecycle

/// The scheduled clean-up of media: deletes posts whose retention ran out (tier `media`) with
/// their blobs, blobs whose post no longer exists (left by a crash between storing a blob and
/// its row, or by a failed delete), and upload or work files a crash left behind.
///
/// Orphans and leftovers are only removed once older than ``grace``, so an upload that is being
/// stored right now is never mistaken for one.
struct PostSweeper: Service {
    let service: PostService
    let uploadDirectory: String
    let workDirectory: String
    let interval: Duration
    var grace: TimeInterval = 3600
    let logger: Logger

    /// What one sweep removed.
    struct Result: Equatable {
        var expiredPosts = 0
        var orphanBlobs = 0
        var leftoverFiles = 0
    }

    func run() async throws {
        try await runUntilShutdown {
            while !Task.isCancelled {
                do {
                    let result = try await sweep()
                    if result != Result() {
                        logger.info(
                            "media sweep",
                            metadata: [
                                "expired": "\(result.expiredPosts)", "orphans": "\(result.orphanBlobs)",
                                "leftovers": "\(result.leftoverFiles)",
                            ])
                    }
                } catch {
                    logger.warning("media sweep failed", metadata: LoggedError.metadata(error))
                }
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One sweep at `now`.
    func sweep(now: Date = Date()) async throws -> Result {
        var result = Result()
        while true {
            let expired = try await service.posts.expired(now: Clock.millis(now), limit: 200)
            for post in expired { try await service.delete(post) }
            result.expiredPosts += expired.count
            if expired.count < 200 { break }
        }
        // Blobs by owner: posts/<id>/<file>.
        var byPost: [String: [String]] = [:]
        for key in try await service.blobs.list(prefix: "posts/") {
            let parts = key.split(separator: "/")
            if parts.count >= 3 { byPost[String(parts[1]), default: []].append(key) }
        }
        let owners = Array(byPost.keys)
        var existing = Set<String>()
        for start in stride(from: 0, to: owners.count, by: 500) {
            existing.formUnion(
                try await service.posts.existing(ids: Array(owners[start..<min(owners.count, start + 500)])))
        }
        for (post, keys) in byPost where !existing.contains(post) {
            for key in keys {
                guard let info = try await service.blobs.head(key: key),
                    now.timeIntervalSince(info.lastModified) > grace
                else { continue }
                try await service.blobs.delete(key: key)
                result.orphanBlobs += 1
            }
        }
        result.leftoverFiles = removeOld(in: uploadDirectory, now: now) + removeOld(in: workDirectory, now: now)
        return result
    }

    /// Removes entries of `directory` not modified for ``grace``; returns how many.
    private func removeOld(in directory: String, now: Date) -> Int {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory) else { return 0 }
        var removed = 0
        for name in names {
            let path = directory + "/" + name
            guard let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                now.timeIntervalSince(modified) > grace
            else { continue }
            if (try? manager.removeItem(atPath: path)) != nil { removed += 1 }
        }
        return removed
    }
}
