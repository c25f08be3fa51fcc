import Foundation
import Synchronization
import TonightCore

/// Places kept in memory for nearby searches: the positions of every place in a grid cell once
/// one search has needed that cell, and the rows of the places pages have shown. A nearby page
/// then reads nothing from the database but the version: over a million places its two statements
/// (positions from the index, then the page's rows) and the thread hops they take were most of a
/// page's cost.
///
/// Everything is kept under the places version read before it was loaded (migration 0037: every
/// place added, changed or removed moves it; on SQLite the counter row, on PostgreSQL this
/// instance's ``ClusterFeedVersion`` for `places` notifications and its own writes), and dropped
/// the moment a search reads another version: a search never answers from data older than the
/// version it read. Each row is kept with its JSON (``PlaceJSON``), so a page is written from bytes.
///
/// The positions are filtered exactly as ``PlaceRepository/nearbySQL(_:)`` filters them (the cell
/// ranges, the latitude band and longitude spans, category, group, city), so a page is the one the
/// database would give. Searches with text or a bounding box, those that want session spots, and
/// circles wider than ``maxCells`` cells read the database. Session spots are not kept at all, so
/// the spots members add to their sessions all evening do not move the version (migration 0037).
///
/// Memory is bounded: at ``capacity`` positions the cells used least recently go (a position is
/// about 150 bytes); rows, about 1.3 kB each with their JSON, are dropped all at once at a tenth
/// of that. Measured over a million places, 690,000 positions and the rows of 2,000 pages took
/// 130 MB.
final class NearbyIndex: Sendable {
    /// What a nearby search filters on, for one place.
    struct Spot: Sendable {
        var hit: PlaceHit
        var category: String
        var cityKey: String?
    }

    private struct Cell {
        /// By latitude.
        var spots: [Spot]
        var usedAt: UInt64
    }

    /// A row, and its JSON as a page writes it (``PlaceJSON``).
    private struct Row {
        var record: PlaceRecord
        var fragment: [UInt8]?
    }

    private struct State {
        var version: Int64 = .min
        var cells: [Int64: Cell] = [:]
        var positions = 0
        var rows: [String: Row] = [:]
        var tick: UInt64 = 0

        mutating func reset(to version: Int64) {
            self = State()
            self.version = version
        }
    }

    /// The most positions kept.
    let capacity: Int
    /// The most cells one search may cover from memory.
    static let maxCells = 256
    /// PostgreSQL: the version the `places` notifications and this instance's writes move.
    let cluster: ClusterFeedVersion?
    private let stored: @Sendable () async -> Int64?
    private let state = Mutex(State())

    /// An index over `cluster`'s version when given, else over `stored` (the database's counter;
    /// `nil`: keep nothing now).
    init(capacity: Int, cluster: ClusterFeedVersion?, stored: @escaping @Sendable () async -> Int64? = { nil }) {
        self.capacity = capacity
        self.cluster = cluster
        self.stored = stored
    }

    /// The version now, or `nil` when the search must read the database.
    func version() async -> Int64? {
        if let cluster { return cluster.current }
        return await stored()
    }

    /// Whether `query` can be answered from memory.
    static func covers(_ query: PlaceQuery) -> Bool {
        guard !query.includeSpots, query.text == nil, query.bbox == nil, let center = query.near,
            let ranges = PlaceGrid.cellRanges(around: center, radius: query.radius)
        else { return false }
        return ranges.reduce(0) { $0 + Int($1.upperBound - $1.lowerBound + 1) } <= maxCells
    }

    /// Every place ``PlaceRepository/nearby(_:)`` finds for `query` (which ``covers(_:)``), from
    /// the cells kept at `version`; cells not kept yet are read with `load` (positions of every
    /// place in a cell range) and kept if the version has not moved meanwhile. A search at a
    /// version older than the one kept reads everything itself and keeps nothing. The cells a
    /// search uses are taken from the index once, so a reset or an eviction meanwhile cannot take
    /// them away from it; the scan runs outside the lock.
    func hits(
        _ query: PlaceQuery, at version: Int64, load: (ClosedRange<Int64>) async throws -> [(cell: Int64, spot: Spot)]
    ) async throws -> [PlaceHit] {
        guard let center = query.near, let ranges = PlaceGrid.cellRanges(around: center, radius: query.radius) else {
            return []
        }
        var cells: [Int64: [Spot]] = [:]
        let missing = state.withLock { state in
            if version > state.version { state.reset(to: version) }
            guard state.version == version else { return ranges }
            state.tick += 1
            return ranges.filter { range in
                var whole = true
                for cell in range {
                    if let kept = state.cells[cell] {
                        state.cells[cell]?.usedAt = state.tick
                        cells[cell] = kept.spots
                    } else {
                        whole = false
                    }
                }
                return !whole
            }
        }
        var loaded: [Int64: [Spot]] = [:]
        for range in missing {
            for cell in range where cells[cell] == nil { loaded[cell] = [] }
            for (cell, spot) in try await load(range) where loaded[cell] != nil {
                loaded[cell, default: []].append(spot)
            }
        }
        for (cell, spots) in loaded {
            cells[cell] = spots.sorted { $0.hit.location.latitude < $1.hit.location.latitude }
        }
        if !loaded.isEmpty {
            state.withLock { state in
                guard state.version == version else { return }
                for cell in loaded.keys where state.cells[cell] == nil {
                    let spots = cells[cell] ?? []
                    state.cells[cell] = Cell(spots: spots, usedAt: state.tick)
                    // An empty cell counts as one, so that walking the map cannot grow the index.
                    state.positions += max(1, spots.count)
                }
                if state.positions > capacity { evict(&state) }
            }
        }
        let band = PlaceGrid.latitudeBand(around: center, radius: query.radius)
        let spans = PlaceGrid.longitudeSpans(around: center, radius: query.radius, band: band)
        // As the SQL's conditions, joined with AND.
        var categories: Set<String>? = query.category.map { [$0] }
        if let group = query.group {
            let members = Set(group.categories.map(\.rawValue))
            categories = categories?.intersection(members) ?? members
        }
        var found: [PlaceHit] = []
        for range in ranges {
            for cell in range {
                let spots = cells[cell] ?? []
                var index = Self.firstIndex(in: spots, atLeast: band.lowerBound)
                while index < spots.count, spots[index].hit.location.latitude <= band.upperBound {
                    let spot = spots[index]
                    if spans.contains(where: { $0.contains(spot.hit.location.longitude) }),
                        categories?.contains(spot.category) ?? true,
                        query.cityKey == nil || spot.cityKey == query.cityKey
                    {
                        found.append(spot.hit)
                    }
                    index += 1
                }
            }
        }
        return found
    }

    /// The rows of `ids` kept at `version`; the others are read with `read` and kept.
    func rows(
        _ ids: [String], at version: Int64, read: ([String]) async throws -> [String: PlaceRecord]
    ) async throws -> [String: PlaceRecord] {
        var (found, missing) = state.withLock { state -> ([String: PlaceRecord], [String]) in
            if version > state.version { state.reset(to: version) }
            guard state.version == version else { return ([:], ids) }
            var found: [String: PlaceRecord] = [:]
            var missing: [String] = []
            for id in ids {
                if let row = state.rows[id] { found[id] = row.record } else { missing.append(id) }
            }
            return (found, missing)
        }
        guard !missing.isEmpty else { return found }
        let read = try await read(missing)
        let encoder = EncodedAnswer.encoder()
        let made = read.mapValues { Row(record: $0, fragment: PlaceJSON.fragment($0, encoder: encoder)) }
        state.withLock { state in
            guard state.version == version else { return }
            if state.rows.count + made.count > max(1, capacity / 10) { state.rows.removeAll(keepingCapacity: true) }
            state.rows.merge(made) { $1 }
        }
        found.merge(read) { $1 }
        return found
    }

    /// The JSON of each of `ids` as kept at `version`, in order; `nil` unless every one is kept.
    func fragments(_ ids: [String], at version: Int64) -> [[UInt8]]? {
        state.withLock { state in
            guard state.version == version else { return nil }
            var fragments: [[UInt8]] = []
            fragments.reserveCapacity(ids.count)
            for id in ids {
                guard let fragment = state.rows[id]?.fragment else { return nil }
                fragments.append(fragment)
            }
            return fragments
        }
    }

    /// Positions and rows kept (for tests).
    var counts: (positions: Int, rows: Int) {
        state.withLock { state in (state.cells.values.reduce(0) { $0 + $1.spots.count }, state.rows.count) }
    }

    /// Drops the cells used least recently until a tenth of the capacity is free.
    private func evict(_ state: inout State) {
        let target = capacity - capacity / 10
        for (cell, kept) in state.cells.sorted(by: { $0.value.usedAt < $1.value.usedAt }) {
            guard state.positions > target else { break }
            state.cells[cell] = nil
            state.positions -= max(1, kept.spots.count)
        }
    }

    /// The first spot at or north of `latitude` (spots are sorted by latitude).
    private static func firstIndex(in spots: [Spot], atLeast latitude: Double) -> Int {
        var low = 0
        var high = spots.count
        while low < high {
            let middle = (low + high) / 2
            if spots[middle].hit.location.latitude < latitude { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
