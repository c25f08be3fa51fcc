import Foundation
import Logging
import ServiceLifecycle

/// Deletes expired resumable uploads (rows on any instance, files on this one) and files this
/// instance holds for no open upload (left by a crash between finishing a post and removing the
/// file, or by an upload whose row went with its account). A file is only removed as a leftover
/// once unmodified for ``grace``, so one being created right now is never mistaken for one.
struct UploadSweeper: Service {
    let uploads: ResumableUploads
    let interval: Duration
    var grace: TimeInterval = 3600
    let logger: Logger

    func run() async throws {
        try await runUntilShutdown {
            while !Task.isCancelled {
                do {
                    let removed = try await sweep()
                    if removed > 0 { logger.info("upload sweep", metadata: ["removed": "\(removed)"]) }
                } catch {
                    logger.warning("upload sweep failed", metadata: LoggedError.metadata(error))
                }
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One sweep at `now`; returns how many uploads and files it removed.
    func sweep(now: Date = Date()) async throws -> Int {
        var removed = 0
        while true {
            let expired = try await uploads.repository.deleteExpired(
                now: Clock.millis(now), limit: 500, except: await uploads.locks.held)
            for id in expired { try? FileManager.default.removeItem(atPath: uploads.path(id)) }
            removed += expired.count
            if expired.count < 500 { break }
        }
        let manager = FileManager.default
        let names = (try? manager.contentsOfDirectory(atPath: uploads.directory)) ?? []
        let ids = names.compactMap { $0.hasSuffix(".part") ? String($0.dropLast(5)) : nil }
        var open = Set<String>()
        for start in stride(from: 0, to: ids.count, by: 500) {
            open.formUnion(
                try await uploads.repository.open(
                    ids: Array(ids[start..<min(ids.count, start + 500)]), now: Clock.millis(now)))
        }
        for id in ids where !open.contains(id) {
            let path = uploads.path(id)
            guard let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                now.timeIntervalSince(modified) > grace
            else { continue }
            if (try? manager.removeItem(atPath: path)) != nil { removed += 1 }
        }
        return removed
    }
}
