import AsyncHTTPClient
import Foundation
import NIOCore
import TonightCore

/// `tonight import media PATH --place ID`: seeds a venue's feed with its own clips and photos
/// (PartyUP filled empty venues from the venues' pages) — every video or image in a folder, or
/// every enclosure of the venue's RSS or Atom feed file (http(s) enclosures are downloaded,
/// `file:` and relative ones read beside the feed).
///
/// Posts are attributed to the venue (no author; `source` is the venue's name) and keyed by
/// `<place id>:<item id>` (the file name in a folder, the item's guid or id in a feed), so running
/// the import again adds only what is new. Each file is judged by its bytes like an upload, then
/// queued for processing. They are dated at import time, so they show in the venue feed's recent
/// window.
public enum MediaImporter {
    /// Imports `path` (a folder or a feed file) into the feed of `placeID`.
    public static func run(path: String, placeID: String, services: AppServices) async throws -> ImportSummary {
        guard let place = try await services.places.find(id: placeID) else {
            throw ConfigurationError("no place has the id \(placeID)")
        }
        guard let cityKey = place.cityKey else { throw ConfigurationError("the place \(place.name) has no city") }
        var summary = ImportSummary()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigurationError("\(path) does not exist")
        }
        let items: [MediaFeedItem]
        let base = isDirectory.boolValue ? path : (path as NSString).deletingLastPathComponent
        if isDirectory.boolValue {
            items = try FileManager.default.contentsOfDirectory(atPath: path).sorted().filter { !$0.hasPrefix(".") }
                .map { MediaFeedItem(id: $0, title: "", url: $0, type: nil, published: nil) }
        } else {
            items = try MediaFeedParser(path: path).parse().items
        }
        let work = services.config.uploadDirectory
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        for item in items {
            let sourceID = "\(placeID):\(item.id)"
            if try await services.posts.posts.find(source: "import", sourceID: sourceID) != nil {
                summary.count("posts") { $0.unchanged += 1 }
                continue
            }
            do {
                let (file, temporary) = try await localFile(
                    item.url, base: base, work: work, limit: services.config.mediaMaxBytes)
                defer { if temporary { try? FileManager.default.removeItem(atPath: file) } }
                let container = try sniff(file, limit: services.config.mediaMaxBytes)
                let caption = String(item.title.prefix(PostRules.captionLimit))
                let post = NewPost(
                    placeID: placeID, cityKey: cityKey, eventID: nil, caption: caption,
                    tags: PostRules.hashtags(in: caption).prefix(PostRules.tagLimit).map { $0 })
                _ = try await services.posts.store(
                    post, author: nil, source: (name: place.name, kind: "import", id: sourceID), file: file,
                    container: container, now: Clock.millis())
                summary.count("posts") { $0.inserted += 1 }
            } catch let problem as MediaImportProblem {
                summary.reject(ImportReject(position: item.id, reason: problem.reason))
            }
        }
        return summary
    }

    /// Why one item was skipped.
    struct MediaImportProblem: Error {
        var reason: String
    }

    /// The item as a local file: as is for local paths, downloaded (and temporary) for http(s).
    private static func localFile(_ url: String, base: String, work: String, limit: Int) async throws
        -> (path: String, temporary: Bool)
    {
        if url.hasPrefix("http://") || url.hasPrefix("https://") {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(120))
            guard response.status == .ok else {
                throw MediaImportProblem(reason: "\(url) answered \(response.status.code)")
            }
            let body: ByteBuffer
            do { body = try await response.body.collect(upTo: limit) } catch {
                throw MediaImportProblem(reason: "\(url) is larger than \(limit) bytes")
            }
            let file = work + "/" + Identifier.make() + ".import"
            FileManager.default.createFile(atPath: file, contents: Data(buffer: body))
            return (file, true)
        }
        let path =
            url.hasPrefix("file://") ? (URL(string: url)?.path ?? "") : (url.hasPrefix("/") ? url : base + "/" + url)
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw MediaImportProblem(reason: "cannot read \(path)")
        }
        return (path, false)
    }

    /// The container by the file's first bytes; refuses other files and files over the limit.
    private static func sniff(_ path: String, limit: Int) throws -> MediaContainer {
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        guard size > 0 else { throw MediaImportProblem(reason: "the file is empty") }
        guard size <= limit else { throw MediaImportProblem(reason: "the file is larger than \(limit) bytes") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw MediaImportProblem(reason: "cannot read it")
        }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 64)) ?? Data())
        guard let container = ContainerSniffer.sniff(head) else {
            throw MediaImportProblem(reason: "not a supported video or image (MP4, MOV, WebM, JPEG, PNG)")
        }
        guard container != .heic else { throw MediaImportProblem(reason: "a HEIC photo: convert it to JPEG") }
        return container
    }
}
