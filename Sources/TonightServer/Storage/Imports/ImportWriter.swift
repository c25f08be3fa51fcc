// One file on purpose (~1,050 lines): the import's writer is one batching state machine (what a
// batch holds, what it has written, what it must look up) over every imported table, and its
// steps share that state; passing records by their bytes (`passes`) marks the same rows. What it
// reports is in ImportSummary.swift; how a record becomes a row and a fingerprint, in
// ImportedEventMapping.swift and ImportFingerprint.swift.
import Foundation
import Logging
import SQLKit
import TonightCore

/// Writes imported records in batches: a record stored with the same fingerprint is counted as
/// unchanged as it arrives (a refresh of a large feed is mostly such records); each batch reads
/// the rows its other records may replace, compares, and writes only what is new or changed, so a
/// re-import of the same file changes nothing and counts every record as unchanged. Event place,
/// start and status changes become change records.
///
/// Rows are keyed `source:id` (`feed:735647`), so the ids of one source never meet another's and
/// references resolve without a lookup. Records may refer to ids later in the file: an event whose
/// place or performers are not known yet waits until the end of the file.
public actor ImportWriter {
    let source: String
    let dryRun: Bool
    /// The file is the source's whole catalogue: its events that it does not list are removed.
    let full: Bool
    let database: Database
    let geo: GeoService
    let batchSize: Int
    let logger: Logger
    /// SQLite imports write through a connection of their own (nil on PostgreSQL and in dry runs).
    private var session: SQLiteImportSession?
    public private(set) var summary = ImportSummary()

    private var categories: [ImportedCategory] = []
    private var artists: [ImportedArtist] = []
    private var venues: [ImportedVenue] = []
    private var events: [ImportedEvent] = []
    /// Events waiting for a venue or artist listed after them, by id, in file order: a later
    /// record of the same id that could be written replaces its waiting one (the last one wins).
    private var waiting: [String: (order: Int, event: ImportedEvent)] = [:]
    private var waited = 0
    /// OpenStreetMap files hold venues only: no event looks up a place's zone.
    private var venuesOnly: Bool { source == ImportKind.osm.source }
    /// Place id → time zone of every place of this source known so far (none for venues only).
    private var placeZones: [String: String] = [:]
    /// Artists whose billing this import changed: only their popularity is counted again.
    private var touchedArtists = Set<String>()
    /// The stored rows of this source by id, per table, as read at the start and written since.
    /// Rows are keyed by source, so an id missing here is not a row: only the ids found here are
    /// compared or read back (a first import reads nothing). The artists here are those an event
    /// may bill.
    private var artistRows: [String: StoredRow] = [:]
    private var placeRows: [String: StoredRow] = [:]
    private var eventRows: [ImportKey: StoredRow] = [:]
    /// The events' rows while they are still read (on SQLite, the feed's artists and venues are
    /// sifted meanwhile); taken into `eventRows` before the first event (``readEventRows()``).
    private var eventRowsRead: Task<([ImportKey: StoredRow], KnownEventRows), any Error>?
    /// Stored rows by the ``ByteHash`` of the bytes they were made from (migration 0038), whose
    /// hashes are published to the feed's parser (``knownHashes``): a record with the same bytes
    /// is passed unread (see ``passes(_:)``).
    private var knownArtists: [Int64: String] = [:]
    private var knownVenues: [Int64: String] = [:]
    private var knownEvents = KnownEventRows(zones: [:])
    /// The next of ``knownEvents``' rows in the order they were read: a feed lists its events in
    /// the order a first import stored them, so the next event passed unread is mostly that one.
    private var knownCursor = 0
    /// Whether events at each place of ``knownEvents`` may be passed unread (0: not known yet,
    /// 1: yes, 2: no; emptied when a venue changes).
    private var placeStates: [UInt8] = []
    /// Places whose time zone this import changed: their events' rows change with it.
    private var movedZones = Set<String>()
    /// The known hashes, for the feed's parser: the artists' and venues' published by
    /// ``prepare()``, then the events' once read.
    nonisolated let knownHashes = KnownRecordHashes(parts: 2)
    /// Rows passed by their fingerprint whose bytes' hash is not the stored one, by table: written
    /// with the next batch (the first refresh after migration 0038 writes one for every row).
    private var byteHashes: [String: [(String, Int64)]] = [:]
    private var byteHashCount = 0
    /// Events passed unread (counted as unchanged when the import ends: one tally a record is a
    /// tenth of passing it).
    private var passedEvents = 0
    /// Whether this source had events stored when the import began.
    private var hasStoredEvents = false
    /// Places whose venue record this import has passed (unchanged or written): only their events
    /// are sifted, since an event's row depends on its place's time zone, which a venue record
    /// later in the file could still change. (A feed lists its venues before its events.)
    private var settledPlaces = Set<String>()
    /// Settled places with their zones by the feed's own venue id, filled as events sift on them:
    /// one lookup of an inline key for each event instead of two of a made-up `source:id` one.
    private var siftZones: [String: (key: String, zone: String)] = [:]
    /// Batches written so far: records repeated within one are counted once.
    private var batchNumber = 0
    /// Places whose changed venue record waits in this batch: settled once it is written.
    private var unsettledPlaces = Set<String>()
    /// Where the time went, by step (logged at debug level when the import ends).
    private var timings: [String: Duration] = [:]
    /// Time zones by identifier (looking one up is costly, and a feed has few).
    private var zones: [String: TimeZone] = [:]

    /// Records a batch holds before it is written: `batchSize`, or in a refresh on SQLite
    /// ``refreshBatchSize`` (known once ``prepare()`` has opened the session).
    private var pendingLimit: Int
    /// A refresh's batches on SQLite: SQLite writes one (its commit queued, not awaited) while the
    /// next fills, so they are small enough that the last one, written after the parse, is short.
    /// The benchmark feed's refresh (6,530 changed records): 2.73-3.03 s in one batch of 10,000,
    /// 2.51-2.58 s in batches of 2,000, 2.52-2.59 s of 1,000.
    static let refreshBatchSize = 2_000

    /// Runs `body`, adding its time to `step`'s.
    private func timed<T>(_ step: String, _ body: () async throws -> T) async rethrows -> T {
        let start = ContinuousClock.now
        defer { timings[step, default: .zero] += ContinuousClock.now - start }
        return try await body()
    }

    private func timeZone(_ id: String) -> TimeZone {
        if let zone = zones[id] { return zone }
        let zone = TimeZone(identifier: id) ?? .gmt
        zones[id] = zone
        return zone
    }

    /// Creates a writer for records of `source` (`feed`, `discovery`, `ics`, `osm`); `full` when the
    /// file is the source's whole catalogue.
    public init(services: AppServices, source: String, dryRun: Bool, full: Bool = false, batchSize: Int = 10_000) {
        self.source = source
        self.dryRun = dryRun
        self.full = full
        self.database = services.database
        self.geo = services.geo
        self.batchSize = batchSize
        self.pendingLimit = batchSize
        self.logger = services.logger
    }

    /// Loads the ids this source already has, so references to earlier imports resolve.
    public func prepare() async throws {
        let start = ContinuousClock.now
        defer { timings["prepare", default: .zero] += ContinuousClock.now - start }
        // The parser waits for the known hashes: it goes on without them if this fails.
        var publishing = true
        defer { if publishing { knownHashes.giveUp() } }
        if !dryRun, let path = database.sqlitePath {
            session = try await SQLiteImportSession.begin(
                database: database, path: path, tables: venuesOnly ? ["places"] : SQLiteImportSession.tables,
                main: venuesOnly ? "places" : "events", logger: logger)
        }
        pendingLimit = session?.isBulkLoad == false ? min(batchSize, Self.refreshBatchSize) : batchSize
        // On SQLite through the import's own connection (in a first import's one transaction).
        let db: any SQLDatabase = session?.db ?? database.sql
        let prefix = source + ":%"
        let places: SQLQueryString =
            "SELECT id, time_zone, import_hash, import_raw_hash FROM places WHERE id LIKE \(bind: prefix)"
        // Every fingerprint at once: one pass over each table instead of a lookup per batch. A
        // removed event counts as listed: a full import has nothing more to remove there.
        let artists: SQLQueryString =
            "SELECT id, import_hash, import_raw_hash FROM artists WHERE id LIKE \(bind: prefix)"
        let events: SQLQueryString = """
            SELECT id, import_hash, status = 'removed' AS removed, import_raw_hash, place_id, time_zone
            FROM events WHERE source = \(bind: source)
            """
        if let bulk = db as? SQLiteBulkConnection {
            // Read in place: a refresh reads one such row for every record of the feed (decoded
            // row by row, the 20,000 venues of the benchmark feed alone took 0.07–0.12 s). Every
            // source's rows (counted from the smallest index) bound this one's.
            let counts = try await bulk.rows(
                """
                SELECT (SELECT count(*) FROM artists) AS a, (SELECT count(*) FROM events) AS e,
                    EXISTS (SELECT 1 FROM events WHERE source = ?) AS s
                """, [.text(source)])
            let (artistCount, eventCount) = (
                try counts.first?.decode(column: "a", as: Int.self) ?? 0,
                try counts.first?.decode(column: "e", as: Int.self) ?? 0
            )
            hasStoredEvents = try counts.first?.decode(column: "s", as: Bool.self) ?? false
            let stored = try await bulk.keyed(places, key: { String(decoding: $0, as: UTF8.self) }) {
                (zone: $0.text(1) ?? "", row: StoredRow(print: $0[2], raw: $0[3]))
            }
            placeRows = stored.mapValues(\.row)
            if !venuesOnly { placeZones = stored.mapValues(\.zone) }
            warmGazetteer()
            if hasStoredEvents, let path = database.sqlitePath {
                // On a connection of its own, on another thread: read while the artists are read
                // and sifted (a tenth of a second or two for the benchmark's 220,000), since the
                // parser waits for their hashes at the first event.
                let reader = try SQLiteBulkConnection(
                    path: path, busyTimeoutMilliseconds: database.busyTimeoutMilliseconds, logger: logger)
                do {
                    try await reader.exec("PRAGMA cache_size = -2048")  // one pass in order: no cache to speak of
                } catch {
                    reader.close()
                    throw error
                }
                let known = KnownEventRows(zones: placeZones), hashes = knownHashes
                eventRowsRead = Task.detached {
                    defer { reader.close() }
                    do {
                        let rows = try await reader.keyed(
                            events, capacity: eventCount, key: { ImportKey(bytes: $0) }
                        ) { columns in
                            columns.withText(4) { place in
                                columns.withText(5) { zone in
                                    known.row(
                                        print: columns[1], removed: columns[2] == 1, raw: columns[3], place: place,
                                        zone: zone)
                                }
                            }
                        }
                        hashes.publish(Set(known.ordinals.keys), part: 1)
                        return (rows, known)
                    } catch {
                        hashes.giveUp()
                        throw error
                    }
                }
            }
            artistRows = try await bulk.keyed(
                artists, capacity: artistCount, key: { String(decoding: $0, as: UTF8.self) }
            ) { StoredRow(print: $0[1], raw: $0[2]) }
            publishKnownArtistsAndVenues()
            if eventRowsRead == nil { knownHashes.publish([], part: 1) }
            publishing = false
            return
        }
        for row in try await db.raw(places).all() {
            let id = try row.decode(column: "id", as: String.self)
            if !venuesOnly { placeZones[id] = try row.decode(column: "time_zone", as: String.self) }
            placeRows[id] = StoredRow(
                print: try row.decode(column: "import_hash", as: Int64?.self),
                raw: try row.decode(column: "import_raw_hash", as: Int64?.self))
        }
        warmGazetteer()
        for row in try await db.raw(artists).all() {
            artistRows[try row.decode(column: "id", as: String.self)] = StoredRow(
                print: try row.decode(column: "import_hash", as: Int64?.self),
                raw: try row.decode(column: "import_raw_hash", as: Int64?.self))
        }
        publishKnownArtistsAndVenues()
        let known = KnownEventRows(zones: placeZones)
        for row in try await db.raw(events).all() {
            var place = try row.decode(column: "place_id", as: String.self)
            var zone = try row.decode(column: "time_zone", as: String.self)
            let stored = place.withUTF8 { place in
                zone.withUTF8 { zone in
                    known.row(
                        print: try? row.decode(column: "import_hash", as: Int64?.self),
                        removed: (try? row.decode(column: "removed", as: Bool.self)) ?? false,
                        raw: try? row.decode(column: "import_raw_hash", as: Int64?.self), place: place, zone: zone)
                }
            }
            eventRows[ImportKey(try row.decode(column: "id", as: String.self))] = stored
        }
        hasStoredEvents = !eventRows.isEmpty
        knownEvents = known
        knownHashes.publish(Set(known.ordinals.keys), part: 1)
    }

    /// Stored artists and venues by their bytes' hash, published for the parser (the events'
    /// follow once read).
    private func publishKnownArtistsAndVenues() {
        knownArtists = Self.known(artistRows)
        knownVenues = Self.known(placeRows)
        knownHashes.publish(Set(knownArtists.keys).union(knownVenues.keys), part: 0)
    }

    /// The rows of `rows` that may be passed by their bytes (with a fingerprint and a bytes' hash), by that hash.
    private static func known<Key>(_ rows: [Key: StoredRow]) -> [Int64: Key] {
        var known: [Int64: Key] = [:]
        for (key, row) in rows {
            if let raw = row.raw, row.print != nil { known[raw] = key }
        }
        return known
    }

    /// Takes the events' rows once they are read.
    private func readEventRows() async throws {
        guard let read = eventRowsRead else { return }
        eventRowsRead = nil
        (eventRows, knownEvents) = try await read.value
    }

    /// A first import resolves every venue: the gazetteer is built while the rest is read. A
    /// refresh builds it only if a changed venue needs it.
    private func warmGazetteer() {
        if placeRows.isEmpty { geo.warm() }
    }

    func key(_ id: String) -> String { source + ":" + id }

    /// The rows of `select` (ending in `IN`) for `ids`. None asked, no query: on SQLite a read
    /// waits for the bulk connection's queued writes, which a first import's batches should not.
    private func rows(_ select: SQLQueryString, _ ids: [String], on db: any SQLDatabase) async throws -> [any SQLRow] {
        guard !ids.isEmpty else { return [] }
        return try await db.raw(select + " (\(binds: ids))").all()
    }

    /// Takes a parser's output in file order (one actor hop per batch, not per record).
    func add(_ items: [Parsed<ImportRecord>]) async throws {
        let start = ContinuousClock.now
        defer { timings["add", default: .zero] += ContinuousClock.now - start }
        for item in items {
            switch item {
            case .record(let record): try await add(record)
            case .reject(let reject): summary.reject(reject)
            }
        }
    }

    /// Takes one record; writes when a batch is full.
    public func add(_ record: ImportRecord) async throws {
        switch record {
        case .category(let category):
            categories.append(category)
        case .artist(let artist):
            add(artist)
        case .venue(let venue):
            add(venue)
        case .event(var event):
            try await readEventRows()
            if let venue = event.venue {
                add(venue)
                event.venueId = venue.id
            }
            for artist in event.performers {
                add(artist)
            }
            if event.performerIds.isEmpty { event.performerIds = event.performers.map(\.id) }
            if passed(sift(event), "events") {
                let id = ImportKey(source, event.id)
                noteBytes("events", event.id, event.sourceHash, stored: eventRows[id]?.raw)
            } else {
                events.append(event)
            }
        case .known(let record):
            if record.kind == .event { try await readEventRows() }
            if !passes(record) {
                for item in try parsed(record) {
                    switch item {
                    case .record(let record): try await add(record)
                    case .reject(let reject): summary.reject(reject)
                    }
                }
            }
        }
        if categories.count + artists.count + venues.count + events.count >= pendingLimit
            || byteHashCount >= Self.byteHashBatch
        {
            try await flush()
        }
    }

    /// Byte hashes of unchanged events written at once (the first refresh after migration 0038).
    static let byteHashBatch = 20_000

    /// Whether a record passed unread is stored as it is: its bytes are those its stored row was
    /// made from (no record of its id written or waiting in this import since), and for an event,
    /// its place's venue record came earlier in the file without a new time zone (the row was
    /// read with its place's zone). Then it goes no further, as a record passed by its fingerprint.
    private func passes(_ record: KnownRecord) -> Bool {
        let sifted: StoredRow.Sifted?
        switch record.kind {
        case .artist:
            sifted = knownArtists[record.hash].flatMap {
                StoredRow.sift($0, raw: record.hash, batch: batchNumber, in: &artistRows)
            }
            guard let sifted else { return false }
            _ = passed(sifted, "artists")
            summary.passedUnread += 1
        case .venue:
            guard let id = knownVenues[record.hash] else { return false }
            sifted = StoredRow.sift(id, raw: record.hash, batch: batchNumber, in: &placeRows)
            guard let sifted else { return false }
            _ = passed(sifted, "places")
            settle(id)
            summary.passedUnread += 1
        case .event:
            // Mostly the row after the last one passed; else found by its hash.
            let cursor = knownCursor
            let rows = knownEvents.rows
            guard
                let ordinal = cursor < rows.count && rows[cursor].hash == record.hash
                    ? cursor : knownEvents.ordinals[record.hash].map(Int.init),
                rows[ordinal].state != .read, passable(rows[ordinal].place)
            else { return false }
            knownCursor = ordinal + 1
            // Counted once a batch, as a record passed by its fingerprint is.
            if rows[ordinal].state == .passed && rows[ordinal].batch == batchNumber { return true }
            knownEvents.rows[ordinal].state = .passed
            knownEvents.rows[ordinal].batch = batchNumber
            passedEvents += 1
        }
        return true
    }

    /// Whether events at place `index` (of ``knownEvents``' places) may be passed unread: its venue
    /// record came earlier in this file, and its zone is still the one it had when the rows were read.
    private func passable(_ index: Int32) -> Bool {
        guard index >= 0 else { return false }
        if placeStates.isEmpty { placeStates = Array(repeating: 0, count: knownEvents.placeNames.count) }
        switch placeStates[Int(index)] {
        case 1: return true
        case 2: return false
        default:
            let name = knownEvents.placeNames[Int(index)]
            let yes = settledPlaces.contains(name) && !movedZones.contains(name)
            placeStates[Int(index)] = yes ? 1 : 2
            return yes
        }
    }

    /// The records of bytes passed unread, parsed after all (wrapped as a feed of one record).
    private func parsed(_ record: KnownRecord) throws -> [Parsed<ImportRecord>] {
        var items: [Parsed<ImportRecord>] = []
        let section =
            switch record.kind {
            case .artist: "artists"
            case .venue: "venues"
            case .event: "events"
            }
        let feed = Array("<feed><\(section)>".utf8) + record.bytes + Array("</\(section)></feed>".utf8)
        try EventFeedParser(bytes: feed, chunkSize: feed.count).parse(
            { items.append(.record($0)) }, reject: { items.append(.reject($0)) }, known: .none())
        return items
    }

    /// Notes the bytes' hash of a record passed by its fingerprint, if its row has another.
    private func noteBytes(_ table: String, _ id: String, _ hash: Int64?, stored: Int64?) {
        guard !dryRun, let hash, hash != stored else { return }
        byteHashes[table, default: []].append((key(id), hash))
        byteHashCount += 1
    }

    // Sifting: a record stored with the same fingerprint is counted as unchanged as it arrives and
    // goes no further (a refresh of a large feed is mostly such records); the others wait for
    // their batch, and so does every later record with their id until that batch is written (see
    // ``StoredRow/sift(_:print:batch:in:)``). Records repeated within a batch are counted once.

    private func add(_ artist: ImportedArtist) {
        let id = key(artist.id)
        let sifted =
            artistRows.isEmpty
            ? .waits
            : StoredRow.sift(
                id, print: ImportFingerprint.of(artistValues(artist, id: id)), batch: batchNumber, in: &artistRows)
        if passed(sifted, "artists") {
            noteBytes("artists", artist.id, artist.sourceHash, stored: artistRows[id]?.raw)
        } else {
            artists.append(artist)
        }
    }

    private func add(_ venue: ImportedVenue) {
        let id = key(venue.id)
        let sifted =
            placeRows.isEmpty
            ? .waits : StoredRow.sift(id, print: ImportFingerprint.venue(venue), batch: batchNumber, in: &placeRows)
        if passed(sifted, "places") {
            settle(id)
            noteBytes("places", venue.id, venue.sourceHash, stored: placeRows[id]?.raw)
            return
        }
        venues.append(venue)
        // Only events sift on it (and only when some are stored); its zone may change.
        if hasStoredEvents {
            settledPlaces.remove(id)
            siftZones[venue.id] = nil
            placeStates = []
            unsettledPlaces.insert(id)
        }
    }

    /// Place `id`'s venue record passed as stored: its events sift on it from now on.
    private func settle(_ id: String) {
        guard hasStoredEvents else { return }
        settledPlaces.insert(id)
        // A place found unsettled before (its events came first) may pass events now.
        if !placeStates.isEmpty { placeStates = [] }
    }

    /// Whether a sifted record goes no further, counting it as unchanged the first time in a batch.
    private func passed(_ sifted: StoredRow.Sifted, _ kind: String) -> Bool {
        switch sifted {
        case .stored:
            summary.count(kind) { $0.unchanged += 1 }
            return true
        case .storedAgain: return true
        case .waits: return false
        }
    }

    /// Whether `event` is stored as it is, at a settled place.
    private func sift(_ event: ImportedEvent) -> StoredRow.Sifted {
        guard !eventRows.isEmpty else { return .waits }
        // Read whole: a later record of its id is no longer passed unread (it may have changed).
        // If one passed unread before, its row counts as listed and counted in that batch.
        if let index = eventRows.index(forKey: ImportKey(source, event.id)), eventRows.values[index].ordinal >= 0 {
            let ordinal = Int(eventRows.values[index].ordinal)
            if knownEvents.rows[ordinal].state == .passed {
                eventRows.values[index].listed = true
                eventRows.values[index].counted = knownEvents.rows[ordinal].batch
            }
            knownEvents.rows[ordinal].state = .read
        }
        var print: Int64?
        if let place = settledZone(event.venueId ?? "") {
            print = ImportFingerprint.event(
                event, placeID: place.key, zone: place.zone, category: event.categoryId.map(key),
                performers: billing(event))
        }
        return StoredRow.sift(ImportKey(source, event.id), print: print, batch: batchNumber, in: &eventRows)
    }

    /// The key and zone of venue `id`'s place if it is settled.
    private func settledZone(_ id: String) -> (key: String, zone: String)? {
        if let place = siftZones[id] { return place }
        let placeID = key(id)
        guard settledPlaces.contains(placeID), let zone = placeZones[placeID] else { return nil }
        siftZones[id] = (placeID, zone)
        return (placeID, zone)
    }

    /// An event's performers as keys in billing order, each once (stored once, so compared once).
    private func billing(_ event: ImportedEvent) -> [String] {
        var performers: [String] = []
        performers.reserveCapacity(event.performerIds.count)
        for id in event.performerIds {
            let performer = key(id)
            if !performers.contains(performer) { performers.append(performer) }
        }
        return performers
    }

    /// Records a rejected record.
    public func reject(_ reject: ImportReject) {
        summary.reject(reject)
    }

    /// Writes what is buffered, resolves waiting events, and returns the summary.
    public func finish() async throws -> ImportSummary {
        try await readEventRows()
        try await flush()
        let retry = waiting.values.sorted { $0.order < $1.order }.map(\.event)
        waiting = [:]
        for event in retry {
            if placeZones[key(event.venueId ?? "")] == nil {
                summary.reject(.init(position: "event \(event.id)", reason: "unknown venue \(event.venueId ?? "")"))
            } else {
                events.append(event)
            }
        }
        try await flush(final: true)
        summary.count("events") { $0.unchanged += passedEvents }
        summary.passedUnread += passedEvents
        passedEvents = 0
        if full { try await timed("remove unlisted") { try await removeUnlisted(now: Clock.millis()) } }
        guard !dryRun else { return summary }
        // A first import counts every artist's events at once; a refresh only those it rebilled.
        let everyone = session?.isBulkLoad == true
        let touched = Array(touchedArtists)
        touchedArtists = []
        let popularity: @Sendable (any SQLDatabase) async throws -> Void = { [source] db in
            let count: SQLQueryString = """
                UPDATE artists SET popularity = (SELECT COUNT(*) FROM event_performers ep WHERE ep.artist_id = artists.id)
                """
            if everyone {
                try await db.raw(count + " WHERE id LIKE \(bind: source + ":%")").run()
                return
            }
            for start in stride(from: 0, to: touched.count, by: 1000) {
                let chunk = Array(touched[start..<min(start + 1000, touched.count)])
                try await db.raw(count + " WHERE id IN (\(binds: chunk))").run()
            }
        }
        try await timed("popularity and commit") {
            if let session {
                // The count reads the performers' artist index: built before it, the others after.
                try await session.rebuildIndexes(of: ["event_performers"])
                try await session.batch(popularity)
                try await session.commit()
                self.session = nil
            } else {
                try await popularity(database.sql)
            }
        }
        var steps: Logger.Metadata = timings.mapValues { .string("\($0)") }
        steps["events passed unread"] = .stringConvertible(summary.passedUnread)
        logger.debug("import steps", metadata: steps)
        return summary
    }

    /// A full import: the source's events the file did not list are marked removed, with a status
    /// change record each (so the people going hear of it). Their fingerprint goes, so an event
    /// listed again is compared and restored. Which ids the file did not list is known from the
    /// fingerprints read at the start; only those rows are read.
    private func removeUnlisted(now: Int64) async throws {
        let keys = eventRows.compactMap { key, row in
            row.listed || row.ordinal >= 0 && knownEvents.rows[Int(row.ordinal)].state == .passed ? nil : key
        }
        for key in keys { eventRows[key] = StoredRow(print: nil, listed: true) }
        let unlisted = keys.map(\.text)
        let remove: @Sendable (any SQLDatabase) async throws -> Int = { [dryRun] db in
            var count = 0
            for start in stride(from: 0, to: unlisted.count, by: 1000) {
                let chunk = Array(unlisted[start..<min(start + 1000, unlisted.count)])
                var gone: [(id: String, status: String)] = []
                for row in try await db.raw(
                    "SELECT id, status FROM events WHERE status <> 'removed' AND id IN (\(binds: chunk))"
                ).all() {
                    gone.append(
                        (
                            try row.decode(column: "id", as: String.self),
                            try row.decode(column: "status", as: String.self)
                        ))
                }
                count += gone.count
                guard !dryRun, !gone.isEmpty else { continue }
                try await db.raw(
                    """
                    UPDATE events SET status = 'removed', import_hash = NULL, import_raw_hash = NULL,
                        updated_at = \(bind: now)
                    WHERE id IN (\(binds: gone.map(\.id)))
                    """
                ).run()
                try await EventRepository.insert(
                    gone.map {
                        EventChangeRecord(
                            id: Identifier.make(), eventID: $0.id, field: "status", oldValue: $0.status,
                            newValue: EventStatus.removed.rawValue, origin: "import", changedAt: now)
                    }, on: db)
            }
            return count
        }
        let count: Int
        if dryRun {
            count = try await remove(database.sql)
        } else if let session {
            count = try await session.batch(remove)
        } else {
            count = try await database.transaction(remove)
        }
        summary.removed = count
        summary.changes += count
    }

    /// Gives up an import that failed part-way: a first import's transaction is rolled back whole.
    public func abort() async {
        await session?.abort()
        session = nil
    }

    private func flush(final: Bool = false) async throws {
        let now = Clock.millis()
        defer { batchNumber += 1 }
        settledPlaces.formUnion(unsettledPlaces)
        unsettledPlaces = []
        let batch = (categories, artists, venues, events)
        let bytes = byteHashes
        byteHashes = [:]
        byteHashCount = 0
        placeStates = []
        categories = []
        artists = []
        venues = []
        events = []
        let venues = batch.2
        let started = ContinuousClock.now
        defer { timings["batches", default: .zero] += ContinuousClock.now - started }
        if dryRun {
            try await write(batch.0, batch.1, venues, batch.3, bytes, now: now, final: final, on: database.sql)
        } else if let session {
            try await session.batch { db in
                try await self.write(batch.0, batch.1, venues, batch.3, bytes, now: now, final: final, on: db)
            }
        } else {
            let sqlite = database.kind == .sqlite
            try await database.transaction { db in
                // Batches of ten thousand records touch many index pages: give SQLite room to keep them.
                if sqlite { try await db.raw("PRAGMA cache_size = -131072").run() }
                try await self.write(batch.0, batch.1, venues, batch.3, bytes, now: now, final: final, on: db)
            }
        }
    }

    /// Venues as place rows: coordinates from the record or the gazetteer, city keys and zone from
    /// the nearest city. A venue with neither coordinates nor a known city is rejected.
    private func resolvePlaces(_ venues: [ImportedVenue]) throws -> [PlaceRecord] {
        var rows: [String: PlaceRecord] = [:]
        for venue in venues {
            var location = venue.location
            if location == nil, let city = venue.city {
                location = geo.gazetteer.search(city, country: venue.country ?? "US", limit: 1).first?.location
            }
            guard let location, let locality = geo.locality(of: location) else {
                summary.reject(
                    .init(position: "venue \(venue.id)", reason: "no coordinates and no known city"))
                continue
            }
            let id = key(venue.id)
            rows[id] = PlaceRecord(
                id: id, name: venue.name, category: venue.category ?? PlaceCategory.eventsVenue.rawValue,
                latitude: location.latitude, longitude: location.longitude, street: venue.street,
                postalCode: venue.postalCode, city: venue.city ?? locality.city, region: venue.state ?? locality.region,
                country: venue.country ?? locality.country, cityKey: locality.cityKey, regionKey: locality.regionKey,
                timeZone: locality.timeZone, openingHours: venue.openingHours, imageURL: venue.imageURL,
                website: venue.url, source: source, sourceID: venue.id, createdAt: 0, updatedAt: 0)
            if !venuesOnly {
                if let zone = placeZones[id], zone != locality.timeZone { movedZones.insert(id) }
                placeZones[id] = locality.timeZone
                siftZones[venue.id] = nil
                placeStates = []
            }
        }
        return Array(rows.values)
    }

    private func write(
        _ categories: [ImportedCategory], _ artists: [ImportedArtist], _ venues: [ImportedVenue],
        _ events: [ImportedEvent], _ bytes: [String: [(String, Int64)]], now: Int64, final: Bool,
        on db: any SQLDatabase
    ) async throws {
        let written = summary.written
        // Before the rows: a record of the same id later in the batch writes its own.
        for (table, hashes) in bytes.sorted(by: { $0.key < $1.key }) where !dryRun {
            try await BulkWrite.setFingerprints(of: table, hashes, column: "import_raw_hash", on: db)
        }
        try await writeCategories(categories, now: now, on: db)
        try await writeArtists(artists, now: now, on: db)
        try await writePlaces(venues, now: now, on: db)
        try await writeEvents(events, now: now, final: final, on: db)
        // Inserted rows have no trigger that moves it (migration 0035): once per batch that wrote
        // something instead (a feed imported again unchanged keeps what is kept).
        if !dryRun && summary.written != written { try await database.moveRecommendationVersion(on: db) }
    }

    /// The last record with each id wins (a later record replaces an earlier one).
    private func lastByID<T>(_ items: [T], id: (T) -> String) -> [String: T] {
        var result: [String: T] = [:]
        for item in items { result[id(item)] = item }
        return result
    }

    private func writeCategories(_ items: [ImportedCategory], now: Int64, on db: any SQLDatabase) async throws {
        let byID = lastByID(items) { key($0.id) }
        guard !byID.isEmpty else { return }
        var existing: [String: (String, String?)] = [:]
        for row in try await rows(
            "SELECT id, name, parent_id FROM categories WHERE id IN", Array(byID.keys), on: db)
        {
            existing[try row.decode(column: "id", as: String.self)] = (
                try row.decode(column: "name", as: String.self), try row.decode(column: "parent_id", as: String?.self)
            )
        }
        var rows: [[SQLValue]] = []
        for (id, category) in byID {
            let parent = category.parentId.map(key)
            if let old = existing[id] {
                if old.0 == category.name && old.1 == parent {
                    summary.count("categories") { $0.unchanged += 1 }
                    continue
                }
                summary.count("categories") { $0.updated += 1 }
            } else {
                summary.count("categories") { $0.inserted += 1 }
            }
            rows.append([.init(id), .init(category.name), .init(parent), .init(source), .init(category.id), .init(now)])
        }
        if !dryRun {
            try await BulkWrite.upsert(
                "categories", columns: ["id", "name", "parent_id", "source", "source_id", "updated_at"], rows: rows,
                key: ["id"], on: db)
        }
    }

    /// An artist's row values as its fingerprint covers them.
    private func artistValues(_ artist: ImportedArtist, id: String) -> [SQLValue] {
        [
            .init(id), .init(artist.name), .init(artist.categoryId.map(key)), .init(artist.imageURL), .init(artist.url),
            .init(source), .init(artist.id),
        ]
    }

    private func writeArtists(_ items: [ImportedArtist], now: Int64, on db: any SQLDatabase) async throws {
        let byID = lastByID(items) { key($0.id) }
        guard !byID.isEmpty else { return }
        let content = byID.mapValues { artistValues($0, id: key($0.id)) }
        let prints = content.mapValues { ImportFingerprint.of($0) }
        let (stored, unsure) = StoredRow.compare(prints, batch: batchNumber, with: &artistRows)
        var existing: [String: ArtistRecord] = [:]
        for row in try await rows(
            "SELECT \(unsafeRaw: CatalogRepository.columns) FROM artists a WHERE a.id IN", unsure, on: db)
        {
            let artist = try CatalogRepository.decode(row)
            existing[artist.id] = artist
        }
        var rows: [[SQLValue]] = []
        var reprinted: [(String, Int64)] = []
        var rebytes: [(String, Int64?)] = []
        for (id, artist) in byID {
            let (values, print) = (content[id]!, prints[id]!)
            if stored[id] == print {
                summary.count("artists") { $0.unchanged += 1 }
                continue
            }
            var created = now
            if let old = existing[id] {
                created = old.createdAt
                if old.name == artist.name && old.categoryID == artist.categoryId.map(key)
                    && old.imageURL == artist.imageURL && old.url == artist.url
                {
                    // The same values without a fingerprint yet: only the fingerprint is written.
                    summary.count("artists") { $0.unchanged += 1 }
                    reprinted.append((id, print))
                    rebytes.append((id, artist.sourceHash))
                    continue
                }
                summary.count("artists") { $0.updated += 1 }
            } else {
                summary.count("artists") { $0.inserted += 1 }
            }
            rows.append(
                values + [
                    .init(SearchText.fold(artist.name)), .init(created), .init(now), .init(print),
                    .init(artist.sourceHash),
                ])
        }
        guard !dryRun else { return }
        try await BulkWrite.setFingerprints(of: "artists", reprinted, on: db)
        try await BulkWrite.setByteHashes(of: "artists", rebytes, on: db)
        try await BulkWrite.upsert(
            "artists",
            columns: [
                "id", "name", "category_id", "image_url", "url", "source", "source_id", "name_folded", "created_at",
                "updated_at", "import_hash", "import_raw_hash",
            ], rows: rows, key: ["id"], on: db)
    }

    /// Venues as places. A venue's fingerprint is that of the record in the file (its place's row
    /// comes from the gazetteer too): a venue the file did not change is neither resolved nor read.
    private func writePlaces(_ venues: [ImportedVenue], now: Int64, on db: any SQLDatabase) async throws {
        let byID = lastByID(venues) { key($0.id) }
        guard !byID.isEmpty else { return }
        let prints = byID.mapValues(ImportFingerprint.venue)
        let (stored, unsure) = StoredRow.compare(prints, batch: batchNumber, with: &placeRows)
        var changed: [ImportedVenue] = []
        for (id, venue) in byID {
            if stored[id] == prints[id] {
                summary.count("places") { $0.unchanged += 1 }
            } else {
                changed.append(venue)
            }
        }
        let places = try resolvePlaces(changed)
        // A rejected venue keeps no fingerprint: a later copy is resolved (and rejected) again.
        if places.count < changed.count {
            let resolved = Set(places.map(\.id))
            for venue in changed where !resolved.contains(key(venue.id)) { placeRows[key(venue.id)]?.print = nil }
        }
        let existing = try await PlaceRepository(db: db).find(ids: unsure)
        var rows: [[SQLValue]] = []
        var reprinted: [(String, Int64)] = []
        var rebytes: [(String, Int64?)] = []
        for var place in places {
            let print = prints[place.id]!
            let bytes = byID[place.id]?.sourceHash
            if let old = existing[place.id] {
                place.createdAt = old.createdAt
                place.updatedAt = old.updatedAt
                place.createdBy = old.createdBy
                if old == place {
                    // The same values without a fingerprint yet: only the fingerprint is written.
                    summary.count("places") { $0.unchanged += 1 }
                    reprinted.append((place.id, print))
                    rebytes.append((place.id, bytes))
                    continue
                } else {
                    summary.count("places") { $0.updated += 1 }
                    place.updatedAt = now
                }
            } else {
                summary.count("places") { $0.inserted += 1 }
                place.createdAt = now
                place.updatedAt = now
            }
            rows.append([
                .init(place.id), .init(place.name), .init(SearchText.fold(place.name)), .init(place.category),
                .init(place.latitude), .init(place.longitude), .init(PlaceGrid.cell(of: place.location)),
                .init(place.street), .init(place.postalCode), .init(place.city), .init(place.region),
                .init(place.country), .init(place.cityKey), .init(place.regionKey), .init(place.timeZone),
                .init(place.openingHours), .init(place.imageURL), .init(place.website), .init(place.source),
                .init(place.sourceID), .init(place.createdAt), .init(place.updatedAt), .init(print), .init(bytes),
            ])
        }
        guard !dryRun else { return }
        try await BulkWrite.setFingerprints(of: "places", reprinted, on: db)
        try await BulkWrite.setByteHashes(of: "places", rebytes, on: db)
        try await BulkWrite.upsert(
            "places",
            columns: [
                "id", "name", "name_folded", "category", "latitude", "longitude", "cell", "street", "postal_code",
                "city", "region", "country", "city_key", "region_key", "time_zone", "opening_hours", "image_url",
                "website", "source", "source_id", "created_at", "updated_at", "import_hash", "import_raw_hash",
            ], rows: rows, key: ["id"], on: db)
        // Inserted places have no trigger on SQLite (migration 0037): once per batch instead.
        if !rows.isEmpty { try await database.movePlacesVersion(on: db) }
    }

    private func writeEvents(_ items: [ImportedEvent], now: Int64, final: Bool, on db: any SQLDatabase)
        async throws
    {
        // Fingerprinted as parsed: an event the file did not change is not even mapped.
        var parsed: [String: (event: ImportedEvent, placeID: String, zone: String, performers: [String])] = [:]
        // Rows are written in file order: a first import's rows are then read back in the order
        // the next refresh lists them (``KnownEventRows``).
        var order: [String] = []
        var prints: [String: Int64] = [:]
        for event in items {
            let placeID = key(event.venueId ?? "")
            guard let zoneID = placeZones[placeID] else {
                if final {
                    summary.reject(.init(position: "event \(event.id)", reason: "unknown venue \(event.venueId ?? "")"))
                } else {
                    waited += 1
                    waiting[key(event.id)] = (waited, event)
                }
                continue
            }
            let performers = billing(event)
            if let missing = performers.first(where: { artistRows[$0] == nil }) {
                if final {
                    summary.reject(
                        .init(
                            position: "event \(event.id)",
                            reason: "unknown artist \(missing.dropFirst(source.count + 1))"))
                } else {
                    waited += 1
                    waiting[key(event.id)] = (waited, event)
                }
                continue
            }
            let id = key(event.id)
            if !waiting.isEmpty { waiting[id] = nil }
            if parsed.updateValue((event, placeID, zoneID, performers), forKey: id) == nil { order.append(id) }
            prints[id] = ImportFingerprint.event(
                event, placeID: placeID, zone: zoneID, category: event.categoryId.map(key), performers: performers)
        }
        guard !parsed.isEmpty else { return }
        let (stored, unsure) = StoredRow.compare(prints, batch: batchNumber, with: &eventRows, key: ImportKey.init)
        var ready: [String: (EventRecord, [String])] = [:]
        for (id, item) in parsed {
            if stored[id] == prints[id] {
                summary.count("events") { $0.unchanged += 1 }
                continue
            }
            let record = ImportedEventMapping.record(
                item.event, id: id, placeID: item.placeID, zone: item.zone, in: timeZone(item.zone), source: source,
                categoryKey: item.event.categoryId.map(key), now: now)
            ready[id] = (record, item.performers)
        }
        guard !ready.isEmpty else { return }
        var content: [String: [SQLValue]] = [:]
        for (id, (event, _)) in ready { content[id] = ImportedEventMapping.values(of: event) }
        var existing: [String: EventRecord] = [:]
        let changedRows = try await timed("read changed events") {
            try await self.rows(
                "SELECT \(unsafeRaw: EventRepository.selectList) FROM events e WHERE e.id IN", unsure, on: db)
        }
        for row in changedRows {
            let event = try EventRepository.decode(row)
            existing[event.id] = event
        }
        let oldPerformers = try await timed("read changed events") {
            try await EventRepository(db: db, database: database).performers(of: Array(existing.keys))
        }
        // Rows by the columns they update (nil: inserted, or every column).
        var rows: [[String]?: [[SQLValue]]] = [:]
        var reprinted: [(String, Int64)] = []
        var rebytes: [(String, Int64?)] = []
        var performerRows: [[SQLValue]] = []
        var replaced: [String] = []
        var changes: [EventChangeRecord] = []
        for id in order {
            guard var (event, performers) = ready[id] else { continue }
            let print = prints[id]!
            var updating: [String]?
            // Billing is written (and its artists counted again) only where it changed.
            let rebilled = (oldPerformers[id] ?? []) != performers
            if let old = existing[id] {
                event.createdAt = old.createdAt
                event.updatedAt = old.updatedAt
                event.goingCount = old.goingCount
                event.interestedCount = old.interestedCount
                event.followingCount = old.followingCount
                event.organizerID = old.organizerID
                if old == event && (oldPerformers[id] ?? []) == performers {
                    // The same values without a fingerprint yet: only the fingerprint is written.
                    summary.count("events") { $0.unchanged += 1 }
                    reprinted.append((id, print))
                    rebytes.append((id, parsed[id]?.event.sourceHash))
                    continue
                }
                summary.count("events") { $0.updated += 1 }
                updating = ImportedEventMapping.changedColumns(old, content[id]!)
                let found = EventChanges.between(old, event, origin: "import", now: now)
                if !found.isEmpty { summary.changes += 1 }
                changes += found
                if rebilled {
                    replaced.append(id)
                    touchedArtists.formUnion(oldPerformers[id] ?? [])
                }
            } else {
                summary.count("events") { $0.inserted += 1 }
                event.createdAt = now
            }
            event.updatedAt = now
            rows[updating, default: []].append(
                content[id]! + [
                    .init(SearchText.fold(event.name)), .init(event.createdAt), .init(event.updatedAt), .init(print),
                    .init(parsed[id]?.event.sourceHash),
                ])
            guard rebilled else { continue }
            touchedArtists.formUnion(performers)
            for (position, artist) in performers.enumerated() {
                performerRows.append([.init(event.id), .init(artist), .init(position)])
            }
        }
        guard !dryRun else { return }
        try await timed("write events") {
            try await BulkWrite.setFingerprints(of: "events", reprinted, on: db)
            try await BulkWrite.setByteHashes(of: "events", rebytes, on: db)
            try await writeEventRows(rows, performerRows, replaced, changes, on: db)
        }
    }

    private func writeEventRows(
        _ rows: [[String]?: [[SQLValue]]], _ performerRows: [[SQLValue]], _ replaced: [String],
        _ changes: [EventChangeRecord], on db: any SQLDatabase
    ) async throws {
        // In a steady order: each set of columns is a statement of its own.
        for (updating, rows) in rows.sorted(by: { ($0.key ?? []).lexicographicallyPrecedes($1.key ?? []) }) {
            try await BulkWrite.upsert(
                "events", columns: ImportedEventMapping.columns, rows: rows, key: ["id"], updating: updating, on: db)
        }
        try await BulkWrite.delete(from: "event_performers", where: "event_id", in: replaced, on: db)
        try await BulkWrite.upsert(
            "event_performers", columns: ["event_id", "artist_id", "position"], rows: performerRows,
            key: ["event_id", "artist_id"], on: db)
        try await EventRepository.insert(changes, on: db)
    }
}
