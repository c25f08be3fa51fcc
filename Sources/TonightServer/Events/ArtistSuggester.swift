import Foundation
import SQLKit
import TonightCore

/// Search as you type over every artist, answered from memory (``PrefixIndex``), most popular
/// first. The index is rebuilt when the artists table changes (an import, in this process or
/// another one): at most every `checkInterval` a request asks the database for a cheap fingerprint
/// (count, last update, total popularity) and rebuilds on a difference; that request waits for
/// it, the others keep using the previous index meanwhile.
actor ArtistSuggester {
    private let db: any SQLDatabase
    private let checkInterval: TimeInterval
    private var index: PrefixIndex?
    private var ids: [String] = []
    private var fingerprint: String?
    private var lastCheck = Date.distantPast
    private var refresh: Task<Void, any Error>?

    init(db: any SQLDatabase, checkInterval: TimeInterval = 5) {
        self.db = db
        self.checkInterval = checkInterval
    }

    /// Artist ids for `query`, best first.
    func search(_ query: String, limit: Int) async throws -> [String] {
        if let running = refresh {
            // Someone else is checking: use the current index, or wait for the first one.
            if index == nil { try await running.value }
        } else if index == nil || Date().timeIntervalSince(lastCheck) >= checkInterval {
            let task = Task { try await self.rebuildIfChanged() }
            refresh = task
            try await task.value
        }
        guard let index else { return [] }
        return index.search(query, limit: limit).map { ids[$0] }
    }

    private func rebuildIfChanged() async throws {
        defer { refresh = nil }
        lastCheck = Date()
        let row = try await db.raw(
            """
            SELECT COUNT(*) AS n, COALESCE(MAX(updated_at), 0) AS u,
                CAST(COALESCE(SUM(popularity), 0) AS BIGINT) AS p FROM artists
            """
        ).first()
        let current = try row.map {
            "\(try $0.decode(column: "n", as: Int64.self)):\(try $0.decode(column: "u", as: Int64.self)):"
                + "\(try $0.decode(column: "p", as: Int64.self))"
        }
        guard current != fingerprint || index == nil else { return }
        let rows = try await db.raw(
            "SELECT id, name FROM artists ORDER BY popularity DESC, favorites_count DESC, name_folded, id"
        ).all()
        var ids: [String] = []
        var names: [String] = []
        ids.reserveCapacity(rows.count)
        names.reserveCapacity(rows.count)
        for row in rows {
            ids.append(try row.decode(column: "id", as: String.self))
            names.append(try row.decode(column: "name", as: String.self))
        }
        let built = PrefixIndex(names: names)
        self.ids = ids
        self.index = built
        self.fingerprint = current
    }
}
