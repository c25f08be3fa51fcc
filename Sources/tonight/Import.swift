import ArgumentParser
import Foundation
import TonightServer

/// `tonight import KIND FILE…`: streams real-world files into the database.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import places, events, artists and cities from files.",
        discussion: """
            Kinds: feed (event feed XML), affinity (artist affinity text), discovery (Ticketmaster \
            Discovery API pages or Discovery Feed JSON), ics (iCalendar), osm (OpenStreetMap XML), \
            geonames (GeoNames cities dump). Every import is idempotent: running it again changes nothing.
            """)

    @Argument(help: "feed, affinity, discovery, ics, osm or geonames.") var kind: String
    @Argument(help: "Files to import, in order.") var files: [String]
    @Flag(help: "Validate and count without writing.") var dryRun = false
    @OptionGroup var storage: StorageOptions

    func run() async throws {
        guard let kind = ImportKind(rawValue: kind) else {
            throw ValidationError("KIND must be one of \(ImportKind.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        let config = try await AppConfig.load(overrides: storage.overrides)
        let services = try await AppServices.make(config: config)
        var failed = false
        for file in files {
            let started = Date()
            let progress = Progress(file: file, size: Self.size(of: file))
            do {
                let summary = try await Importer.run(
                    kind, path: file, dryRun: dryRun, services: services, progress: { progress.show($0) })
                progress.finish()
                Self.printSummary(summary, file: file, seconds: Date().timeIntervalSince(started), dryRun: dryRun)
            } catch {
                progress.finish()
                FileHandle.standardError.write(Data("\(file): \(error)\n".utf8))
                failed = true
            }
        }
        try await services.database.shutdown()
        if failed { throw ExitCode(2) }
    }

    static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    static func printSummary(_ summary: ImportSummary, file: String, seconds: Double, dryRun: Bool) {
        print("\(file)\(dryRun ? " (dry run: nothing written)" : ""): \(String(format: "%.1f", seconds)) s")
        for (kind, tally) in summary.tallies.sorted(by: { $0.key < $1.key }) {
            print(
                "  \(kind.padding(toLength: 11, withPad: " ", startingAt: 0)) inserted \(tally.inserted)  updated \(tally.updated)  unchanged \(tally.unchanged)"
            )
        }
        if summary.changes > 0 { print("  events with a changed place, start or status: \(summary.changes)") }
        print("  rejected \(summary.rejectedCount)")
        for reject in summary.rejects { print("    \(reject)") }
        if summary.rejectedCount > summary.rejects.count {
            print("    … and \(summary.rejectedCount - summary.rejects.count) more")
        }
    }
}

/// A one-line progress display on a terminal (nothing when output is redirected).
final class Progress: @unchecked Sendable {
    let file: String
    let size: Int
    let started = Date()
    let enabled = isatty(STDERR_FILENO) != 0
    private let lock = NSLock()

    init(file: String, size: Int) {
        self.file = file
        self.size = size
    }

    func show(_ records: Int) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        let seconds = max(0.001, Date().timeIntervalSince(started))
        let line = String(
            format: "\r%@: %d records, %.0f/s, %.0f MB file   ", (file as NSString).lastPathComponent, records,
            Double(records) / seconds, Double(size) / 1_048_576)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
