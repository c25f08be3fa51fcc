import PostgresNIO
import SQLKit
import TonightCore

/// The PostgreSQL side of ``PostgresFanout``: `pg_notify`, and `live_outbox` for messages too large
/// for a notification (8000 bytes), kept a minute for every instance to read.
struct LiveOutbox: Sendable {
    let database: Database

    /// Stores a large payload; returns the id a notification carries instead. Rows older than a
    /// minute go at the same time.
    func store(_ payload: String, now: Int64) async throws -> String {
        let id = Identifier.make()
        try await database.sql.raw(
            "INSERT INTO live_outbox (id, payload, created_at) VALUES (\(bind: id), \(bind: payload), \(bind: now))"
        ).run()
        try await database.sql.raw("DELETE FROM live_outbox WHERE created_at < \(bind: now - 60_000)").run()
        return id
    }

    /// A stored payload, if it is still there.
    func payload(id: String) async throws -> String? {
        try await database.sql.raw("SELECT payload FROM live_outbox WHERE id = \(bind: id)").first()?
            .decode(column: "payload", as: String.self)
    }

    /// Sends each of `payloads` on `channel` to every listening instance, in order, in one
    /// prepared statement.
    func notify(_ channel: String, _ payloads: [String]) async throws {
        guard !payloads.isEmpty else { return }
        _ = try await database.execute(prepared: Notify(channel: channel, payloads: payloads))
    }

    /// `pg_notify` for each payload, in the array's order (a function scan reads it in order).
    struct Notify: PostgresPreparedStatement {
        typealias Row = ()
        static let sql = "SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS t(payload)"
        let channel: String
        let payloads: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(channel)
            bindings.append(payloads)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }
}
