import Foundation
import Testing

@testable import TonightServer

@Suite("Importing a venue's media")
struct MediaImportTests {
    @Test(
        "a folder and a feed file become the venue's posts, judged by their bytes, once", arguments: Backend.available)
    func importVenueMedia(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let moderator = try await moderatorToken(services, client)
            let place = try await createPlace(client, token: moderator, name: "The Dome", lat: 44.6488, lon: -63.5752)
            let placeID = place["id"] as? String ?? ""
            let folder = Clips.directory + "/venue-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: folder + "/a.jpg", contents: Data(try await Clips.jpeg()))
            FileManager.default.createFile(atPath: folder + "/b.mp4", contents: Data(try await Clips.mp4()))
            FileManager.default.createFile(atPath: folder + "/c.mp4", contents: Data("PK\u{3}\u{4} not a video".utf8))
            var summary = try await MediaImporter.run(path: folder, placeID: placeID, services: services)
            #expect(summary.tallies["posts"]?.inserted == 2)
            #expect(summary.rejectedCount == 1 && summary.rejects.first?.position == "c.mp4")
            summary = try await MediaImporter.run(path: folder, placeID: placeID, services: services)
            #expect(summary.tallies["posts"]?.unchanged == 2 && summary.tallies["posts"]?.inserted ?? 0 == 0)
            // A feed file whose enclosures sit beside it.
            let feed = folder + "/feed.rss"
            try """
            <rss version="2.0"><channel><title>The Dome</title>
            <item><title>Tonight #live</title><guid>dome-77</guid><enclosure url="a.jpg" type="image/jpeg"/></item>
            <item><title>Gone</title><guid>dome-78</guid><enclosure url="missing.jpg" type="image/jpeg"/></item>
            </channel></rss>
            """.write(toFile: feed, atomically: true, encoding: .utf8)
            summary = try await MediaImporter.run(path: feed, placeID: placeID, services: services)
            #expect(summary.tallies["posts"]?.inserted == 1 && summary.rejectedCount == 1)
            let worker = JobWorker(queue: services.jobs, handlers: services.jobHandlers, logger: services.logger)
            #expect(try await worker.runOnce() == 3)
            let items = try await client.send(.get, "/v1/places/\(placeID)/posts").json["items"] as? [JSON] ?? []
            #expect(items.count == 3)
            #expect(
                items.allSatisfy { ($0["source"] as? JSON)?["name"] as? String == "The Dome" && $0["author"] == nil })
            #expect(
                items.first?["caption"] as? String == "Tonight #live" && items.first?["tags"] as? [String] == ["live"])
        }
    }
}
