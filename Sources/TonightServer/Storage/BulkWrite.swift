import SQLKit

/// Multi-row `INSERT … ON CONFLICT DO UPDATE`, chunked under both databases' bind limits.
enum BulkWrite {
    /// Typed rows: on an import's ``SQLiteBulkConnection`` each row is bound into one prepared
    /// statement; elsewhere they go through SQLKit like any other rows. A row that exists has
    /// `updating` set (nil: every column but the key): an index over none of them is not written.
    static func upsert(
        _ table: String, columns: [String], rows: [[SQLValue]], key: [String], updating: [String]? = nil,
        on db: any SQLDatabase
    ) async throws {
        if let bulk = db as? SQLiteBulkConnection {
            await bulk.upsert(table, columns: columns, rows: rows, key: key, updating: updating)
        } else {
            try await upsert(
                table, columns: columns, rows: rows.map { $0 as [any Encodable & Sendable] }, key: key,
                updating: updating, on: db)
        }
    }

    static func upsert(
        _ table: String, columns: [String], rows: [[any Encodable & Sendable]], key: [String],
        updating: [String]? = nil, on db: any SQLDatabase
    ) async throws {
        guard !rows.isEmpty else { return }
        let perStatement = max(1, 30_000 / columns.count)
        var start = 0
        while start < rows.count {
            let end = min(rows.count, start + perStatement)
            let builder = db.insert(into: table).columns(columns)
            for row in rows[start..<end] { builder.values(row) }
            let updated = updating ?? columns.filter { !key.contains($0) }
            if updated.isEmpty {
                builder.ignoringConflicts(with: key)
            } else {
                builder.onConflict(with: key) { conflict in
                    var conflict = conflict
                    for column in updated { conflict = conflict.set(excludedValueOf: column) }
                    return conflict
                }
            }
            try await builder.run()
            start = end
        }
    }

    /// Sets the `import_hash` (or another `column`) of rows by `id` (rows whose values an import found unchanged: no
    /// other column, and so no index, is written). One statement a thousand rows, on both
    /// databases (`UPDATE … FROM (VALUES …)`; the values' columns are `column1`, `column2`).
    static func setFingerprints(
        of table: String, _ prints: [(String, Int64)], column: String = "import_hash", on db: any SQLDatabase
    ) async throws {
        for start in stride(from: 0, to: prints.count, by: 1000) {
            let chunk = prints[start..<min(start + 1000, prints.count)]
            var values: [SQLQueryString] = []
            for (id, print) in chunk { values.append("(\(bind: id), \(bind: print))") }
            try await db.raw(
                """
                UPDATE \(ident: table) AS t SET \(ident: column) = v.column2
                FROM (VALUES \(values.joined(separator: ", "))) AS v WHERE t.id = v.column1
                """
            ).run()
        }
    }

    /// Sets the `import_raw_hash` of rows by `id`, or clears it where the hash is nil (a record
    /// whose bytes were not in the parser's buffer whole: its row must not keep the hash of other bytes).
    static func setByteHashes(of table: String, _ hashes: [(String, Int64?)], on db: any SQLDatabase) async throws {
        try await setFingerprints(
            of: table, hashes.compactMap { id, hash in hash.map { (id, $0) } }, column: "import_raw_hash", on: db)
        let cleared = hashes.compactMap { $0.1 == nil ? $0.0 : nil }
        for start in stride(from: 0, to: cleared.count, by: 1000) {
            let chunk = Array(cleared[start..<min(start + 1000, cleared.count)])
            try await db.raw("UPDATE \(ident: table) SET import_raw_hash = NULL WHERE id IN (\(binds: chunk))").run()
        }
    }

    /// A statement that binds nothing and returns nothing: on an import's
    /// ``SQLiteBulkConnection`` queued with the rows before it instead of waiting for them.
    static func run(_ sql: String, on db: any SQLDatabase) async throws {
        if let bulk = db as? SQLiteBulkConnection { return await bulk.enqueue(sql) }
        try await db.raw(SQLQueryString(sql)).run()
    }

    /// `DELETE FROM table WHERE column IN (…)`, chunked.
    static func delete(from table: String, where column: String, in values: [String], on db: any SQLDatabase)
        async throws
    {
        var start = 0
        while start < values.count {
            let end = min(values.count, start + 10_000)
            try await db.raw(
                "DELETE FROM \(ident: table) WHERE \(ident: column) IN (\(binds: Array(values[start..<end])))"
            ).run()
            start = end
        }
    }
}
