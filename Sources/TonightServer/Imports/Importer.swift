import Foundation
import SQLKit
import TonightCore

/// The import formats `tonight import` reads.
public enum ImportKind: String, Sendable, CaseIterable {
    case feed, affinity, discovery, ics, osm, geonames

    /// The `source` that keys the rows this format creates (`feed:735647`).
    var source: String {
        switch self {
        case .feed, .affinity: "feed"
        case .discovery: "tm"
        case .ics: "ics"
        case .osm: "osm"
        case .geonames: "geonames"
        }
    }
}

/// One item a parser produced, in file order.
enum Parsed<Record: Sendable>: Sendable {
    case record(Record)
    case reject(ImportReject)
}

/// Runs an import: parses on its own thread, writes in batches, returns the summary.
public enum Importer {
    /// Imports `path` as `kind`. `progress` is called after each batch with the records seen so far.
    /// `full` (feeds only) says the file is the whole catalogue: the source's events it does not
    /// list are marked removed.
    public static func run(
        _ kind: ImportKind, path: String, dryRun: Bool, full: Bool = false, services: AppServices,
        progress: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> ImportSummary {
        switch kind {
        case .affinity:
            return try await importAffinity(path: path, dryRun: dryRun, services: services, progress: progress)
        case .geonames:
            return try await importCities(path: path, dryRun: dryRun, services: services, progress: progress)
        case .feed, .discovery, .ics, .osm:
            if kind == .feed || kind == .osm { try MarkupDeclarationScan.check(path: path) }
            let writer = ImportWriter(services: services, source: kind.source, dryRun: dryRun, full: full)
            // The parser starts while the writer reads what is stored (a refresh of the benchmark
            // feed reads 340,000 fingerprints, a core's 0.4 s): up to 32 batches wait for it, then
            // 4 as usual (a first import's writer is slower than its parser all along).
            let pipe = ParserPipe<Parsed<ImportRecord>>(depth: 32)
            startParser(kind, path: path, known: writer.knownHashes, on: pipe)
            do {
                // Inside: a first import's session holds the write gate from the start of prepare().
                try await writer.prepare()
                pipe.limit(to: 4)
                return try await feedRecords(from: pipe, writer: writer, services: services, progress: progress)
            } catch {
                pipe.cancel()
                await writer.abort()
                throw error
            }
        }
    }

    /// Hands the records `pipe` parses to `writer`.
    static func feedRecords(
        from pipe: ParserPipe<Parsed<ImportRecord>>, writer: ImportWriter, services: AppServices,
        progress: @escaping @Sendable (Int) -> Void
    ) async throws -> ImportSummary {
        var seen = 0
        try await pipe.forEachBatch { batch in
            try await writer.add(batch)
            seen += batch.count
            progress(seen)
        }
        let summary = try await writer.finish()
        services.catalog.forgetCached()
        await services.suggester.invalidate()
        return summary
    }

    /// Parses `path` as `kind` on a thread of its own, into `pipe`; a feed's events whose bytes hash
    /// to one of `known` are passed unread.
    static func startParser(
        _ kind: ImportKind, path: String, known: KnownRecordHashes, on pipe: ParserPipe<Parsed<ImportRecord>>
    ) {
        pipe.start { emit in
            let handle: (ImportRecord) throws -> Void = { try emit(.record($0)) }
            let reject: (ImportReject) throws -> Void = { try emit(.reject($0)) }
            switch kind {
            case .feed: try EventFeedParser(path: path).parse(handle, reject: reject, known: known)
            case .discovery: try DiscoveryParser(path: path).parse(handle, reject: reject)
            case .ics: try ICalendarParser(path: path).parse(handle, reject: reject)
            default: try OSMParser(path: path).parse(handle, reject: reject)
            }
        }
    }

    /// GeoNames cities are stored apart and merged into the gazetteer when the server starts.
    static func importCities(
        path: String, dryRun: Bool, services: AppServices, progress: @escaping @Sendable (Int) -> Void
    ) async throws -> ImportSummary {
        let pipe = ParserPipe<Parsed<City>>()
        pipe.start { emit in
            try GeoNamesParser(path: path).parse({ try emit(.record($0)) }, reject: { try emit(.reject($0)) })
        }
        var summary = ImportSummary()
        var seen = 0
        try await pipe.forEachBatch { batch in
            var cities: [City] = []
            for item in batch {
                switch item {
                case .record(let city): cities.append(city)
                case .reject(let reject): summary.reject(reject)
                }
            }
            let tally: ImportTally
            if dryRun {
                tally = ImportTally()
            } else {
                let batch = cities
                tally = try await services.database.transaction { db in
                    try await CityRepository(db: db).upsert(batch, now: Clock.millis())
                }
            }
            summary.tallies["cities", default: ImportTally()] =
                summary.tallies["cities", default: ImportTally()] + tally
            seen += batch.count
            progress(seen)
        }
        return summary
    }

    /// Affinity lines name an artist (matched to artists by folded name) and list the feed's ids of
    /// similar artists with scores. A line whose artist is unknown is rejected; unknown similar ids
    /// are reported and skipped. Every artist with the line's name gets the line's scores.
    static func importAffinity(
        path: String, dryRun: Bool, services: AppServices, progress: @escaping @Sendable (Int) -> Void
    ) async throws -> ImportSummary {
        let pipe = ParserPipe<Parsed<AffinityEntry>>(batchSize: 1000)
        pipe.start { emit in
            try AffinityParser(path: path).parse({ try emit(.record($0)) }, reject: { try emit(.reject($0)) })
        }
        var summary = ImportSummary()
        var seen = 0
        let prefix = ImportKind.affinity.source + ":"
        try await pipe.forEachBatch { batch in
            var entries: [AffinityEntry] = []
            for item in batch {
                switch item {
                case .record(let entry): entries.append(entry)
                case .reject(let reject): summary.reject(reject)
                }
            }
            let byName = try await services.catalog.artistIDs(
                byFoldedName: Array(Set(entries.map { SearchText.fold($0.artistName) })))
            let known = try await services.catalog.existingArtists(
                Array(Set(entries.flatMap { $0.recommendations.map { prefix + $0.artistId } })))
            var pairs: [String: (String, String, Double)] = [:]
            for entry in entries {
                guard let artists = byName[SearchText.fold(entry.artistName)] else {
                    summary.reject(.init(position: "line \(entry.line)", reason: "unknown artist \(entry.artistName)"))
                    continue
                }
                for recommendation in entry.recommendations {
                    let similar = prefix + recommendation.artistId
                    guard known.contains(similar) else {
                        summary.reject(
                            .init(
                                position: "line \(entry.line)", reason: "unknown artist id \(recommendation.artistId)"))
                        continue
                    }
                    for artist in artists where artist != similar {
                        pairs[artist + "\u{1F}" + similar] = (artist, similar, recommendation.score)
                    }
                }
            }
            let existing = try await services.catalog.affinityScores(from: Array(Set(pairs.values.map(\.0))))
            var rows: [[SQLValue]] = []
            for (key, pair) in pairs {
                if let old = existing[key] {
                    if abs(old - pair.2) < 1e-12 {
                        summary.count("affinity") { $0.unchanged += 1 }
                        continue
                    }
                    summary.count("affinity") { $0.updated += 1 }
                } else {
                    summary.count("affinity") { $0.inserted += 1 }
                }
                rows.append([.init(pair.0), .init(pair.1), .init(pair.2)])
            }
            if !dryRun {
                try await services.catalog.upsertAffinity(rows)
            }
            seen += batch.count
            progress(seen)
        }
        return summary
    }
}
