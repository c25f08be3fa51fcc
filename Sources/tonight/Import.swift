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
            geonames (GeoNames cities dump), media (a venue's clips and photos: a folder or an RSS/Atom \
            feed file, with --place). Every import is idempotent: running it again changes nothing.
            """)

    @Argument(help: "feed, affinity, discovery, ics, osm, geonames or media.") var kind: String
    @Argument(help: "Files to import, in order (media: a folder or an RSS/Atom feed file).") var files: [String]
    @Option(help: "media: the id of the venue whose feed the clips and photos go to.") var place: String?
    @Flag(help: "Validate and count without writing.") var dryRun = false
    @Flag(
        help: """
            feed: the file is the whole catalogue. Events imported from earlier feeds that it no longer \
            lists are marked removed (kept with their attendance and history, no longer on sale).
            """)
    var full = false
    @OptionGroup var storage: StorageOptions
    @OptionGroup var output: OneShotOptions

    func run() async throws {
        if kind == "media" { return try await importMedia() }
        guard let kind = ImportKind(rawValue: kind) else {
            throw ValidationError("KIND must be one of \(ImportKind.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        if full && kind != .feed { throw ValidationError("--full is for feed imports only.") }
        var config = try await AppConfig.load(overrides: output.overrides(storage))
        // An import may hold one transaction for minutes: no per-query limit.
        config.databaseQueryTimeoutMilliseconds = 0
        let services = try await AppServices.make(config: config)
        var failed = false
        for file in files {
            let started = Date()
            let progress = Progress(file: file, size: Self.size(of: file))
            do {
                let summary = try await Importer.run(
                    kind, path: file, dryRun: dryRun, full: full, services: services,
                    progress: { progress.show($0) })
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

    /// `import media PATH… --place ID`.
    private func importMedia() async throws {
        guard let place else { throw ValidationError("import media needs --place <place id>.") }
        var config = try await AppConfig.load(overrides: output.overrides(storage))
        // An import may hold one transaction for minutes: no per-query limit.
        config.databaseQueryTimeoutMilliseconds = 0
        let services = try await AppServices.make(config: config)
        var failed = false
        for file in files {
            let started = Date()
            do {
                let summary = try await MediaImporter.run(path: file, placeID: place, services: services)
                Self.printSummary(summary, file: file, seconds: Date().timeIntervalSince(started), dryRun: false)
            } catch {
                FileHandle.standardError.write(Data("\(file): \(error)\n".utf8))
                failed = true
            }
        }
        print("Clips are processed by the server's job worker (tonight serve).")
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
        if summary.removed > 0 { print("  events removed (no longer in this full feed): \(summary.removed)") }
        if summary.changes > 0 { print("  events with a changed place, start or status: \(summary.changes)") }
        print("  rejected \(summary.rejectedCount)")
        for reject in summary.rejects { print("    \(reject)") }
        if summary.rejectedCount > summary.rejects.count {
            print("    … and \(summary.rejectedCount - summary.rejects.count) more")
        }
    }
}

/// A one-line progress bar on a terminal (nothing when standard error is redirected). The bar
/// follows the parser's read position in the file, read from `/proc/self/fdinfo` where there is
/// one; elsewhere it shows records and their rate only.
final class Progress: @unchecked Sendable {
    let file: String
    let size: Int
    let started = Date()
    let enabled = isatty(STDERR_FILENO) != 0
    private let lock = NSLock()
    private var descriptor: Int?

    init(file: String, size: Int) {
        self.file = file
        self.size = size
    }

    func show(_ records: Int) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        let seconds = max(0.001, Date().timeIntervalSince(started))
        var line = "\r\((file as NSString).lastPathComponent) "
        if size > 0, let offset = readOffset() {
            let fraction = min(1, Double(offset) / Double(size))
            let filled = Int(fraction * 30)
            line += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: 30 - filled) + "] "
            line += String(
                format: "%3.0f%% %.0f/%.0f MB %.1f MB/s ", fraction * 100, Double(offset) / 1_048_576,
                Double(size) / 1_048_576, Double(offset) / 1_048_576 / seconds)
        }
        line += String(format: "%d records (%.0f/s)   ", records, Double(records) / seconds)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    /// The read position of the descriptor this process has open on `file`, if the system says.
    private func readOffset() -> Int? {
        if descriptor == nil {
            let target = URL(fileURLWithPath: file).resolvingSymlinksInPath().path
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            descriptor = entries.compactMap(Int.init).first { fd in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) == target
            }
        }
        guard let descriptor,
            let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8),
            let line = info.split(separator: "\n").first(where: { $0.hasPrefix("pos:") })
        else { return nil }
        return Int(line.dropFirst(4).trimmingCharacters(in: .whitespaces))
    }
}
