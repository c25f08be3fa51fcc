import SQLKit

/// A remembered POST answer.
struct IdempotencyRecord: Codable, Sendable {
    var requestHash: String
    var status: Int?
    var contentType: String?
    var retryAfter: String?
    var body: String?
    var createdAt: Int64
}

/// Storage of idempotency keys: a key is first reserved (no status), then completed with the answer.
///
/// Over SQLKit. Its writes, one short statement each, do not queue at SQLite's write gate.
struct IdempotencyRepository: Sendable {
    let db: any SQLDatabase

    /// Reserves `key` for a request; `false` if the key is already there.
    func reserve(scope: String, key: String, requestHash: String, now: Int64) async throws -> Bool {
        try await db.raw(
            """
            INSERT INTO idempotency_keys (scope, idem_key, request_hash, created_at)
            VALUES (\(bind: scope), \(bind: key), \(bind: requestHash), \(bind: now))
            ON CONFLICT (scope, idem_key) DO NOTHING
            RETURNING idem_key
            """
        ).first() != nil
    }

    func find(scope: String, key: String) async throws -> IdempotencyRecord? {
        try await db.raw(
            """
            SELECT request_hash, status, content_type, retry_after, body, created_at FROM idempotency_keys
            WHERE scope = \(bind: scope) AND idem_key = \(bind: key)
            """
        ).first()?.decode(model: IdempotencyRecord.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// Stores the answer of a reserved key (and the request's hash, when it was only known at
    /// the end: an upload's, taken as it streamed).
    func complete(
        scope: String, key: String, status: Int, contentType: String?, retryAfter: String?, body: String,
        requestHash: String? = nil
    ) async throws {
        try await db.raw(
            """
            UPDATE idempotency_keys SET status = \(bind: status), content_type = \(bind: contentType),
                retry_after = \(bind: retryAfter), body = \(bind: body),
                request_hash = COALESCE(\(bind: requestHash), request_hash)
            WHERE scope = \(bind: scope) AND idem_key = \(bind: key)
            """
        ).run()
    }

    func release(scope: String, key: String) async throws {
        try await db.raw("DELETE FROM idempotency_keys WHERE scope = \(bind: scope) AND idem_key = \(bind: key)").run()
    }

    /// Deletes keys created before `cutoff`.
    func purge(before cutoff: Int64) async throws {
        try await db.raw("DELETE FROM idempotency_keys WHERE created_at < \(bind: cutoff)").run()
    }
}
