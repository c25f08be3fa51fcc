import SQLKit
import TonightCore

/// A claimed job, as its handler sees it.
public struct ClaimedJob: Codable, Sendable, Equatable {
    public var id: String
    public var kind: String
    public var payload: String
    /// Attempts including this one.
    public var attempts: Int
    public var maxAttempts: Int
}

/// A job's stored state (for tests and administration).
public struct JobRecord: Codable, Sendable, Equatable {
    public var id: String
    public var kind: String
    public var state: JobState
    public var attempts: Int
    public var maxAttempts: Int
    public var runAt: Int64
    public var lastError: String?
}

/// Where a job stands: waiting for its `run_at`, claimed by a worker, or given up.
public enum JobState: String, Codable, Sendable {
    case queued, running, dead
}

/// A job about to be written: its handler's kind, a JSON payload, when it is due (ms) and how many
/// attempts it gets.
struct NewJob: Sendable {
    var id = Identifier.make()
    var kind: String
    var payload: String
    var runAt: Int64
    var maxAttempts: Int
}

/// Storage of the durable job queue.
///
/// States: `queued` (waiting for `run_at`), `running` (claimed until `locked_until`; a crashed
/// worker's jobs become claimable again after that), `dead` (gave up). Finished jobs are deleted.
///
/// Over SQLKit; the claim is the one statement that differs by dialect.
struct JobRepository: Sendable {
    let db: any SQLDatabase
    let kind: DatabaseKind

    func enqueue(_ job: NewJob, now: Int64) async throws {
        try await Self.enqueue([job], now: now, on: db)
    }

    /// Writes `jobs` on `db` (inside the caller's transaction, as an outbox) in one statement.
    static func enqueue(_ jobs: [NewJob], now: Int64, on db: any SQLDatabase) async throws {
        try await BulkWrite.upsert(
            "jobs",
            columns: [
                "id", "kind", "payload", "state", "run_at", "attempts", "max_attempts", "created_at", "updated_at",
            ],
            rows: jobs.map {
                [$0.id, $0.kind, $0.payload, JobState.queued.rawValue, $0.runAt, 0, $0.maxAttempts, now, now]
            }, key: ["id"], on: db)
    }

    /// Claims up to `limit` due jobs for `worker` until `lockedUntil`. Safe with several claimers:
    /// `FOR UPDATE SKIP LOCKED` on PostgreSQL, a single atomic statement on SQLite.
    func claim(worker: String, limit: Int, now: Int64, lockedUntil: Int64, kinds: JobKinds) async throws -> [ClaimedJob]
    {
        let lock = kind == .postgres ? "FOR UPDATE SKIP LOCKED" : ""
        let only: SQLQueryString
        switch kinds {
        case .all, .except([]): only = ""
        case .only([]): return []
        case .only(let set): only = " AND kind IN (\(binds: set.sorted()))"
        case .except(let set): only = " AND kind NOT IN (\(binds: set.sorted()))"
        }
        return try await db.raw(
            """
            UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = \(bind: worker),
                locked_until = \(bind: lockedUntil), updated_at = \(bind: now)
            WHERE id IN (
                SELECT id FROM jobs
                WHERE ((state = 'queued' AND run_at <= \(bind: now)) OR (state = 'running' AND locked_until < \(bind: now)))\(only)
                ORDER BY run_at LIMIT \(bind: limit) \(unsafeRaw: lock)
            )
            RETURNING id, kind, payload, attempts, max_attempts
            """
        ).all().map { try $0.decode(model: ClaimedJob.self, keyDecodingStrategy: .convertFromSnakeCase) }
    }

    func complete(id: String, worker: String) async throws {
        try await db.raw("DELETE FROM jobs WHERE id = \(bind: id) AND locked_by = \(bind: worker)").run()
    }

    func retry(id: String, worker: String, runAt: Int64, error: String, now: Int64) async throws {
        try await db.raw(
            """
            UPDATE jobs SET state = 'queued', run_at = \(bind: runAt), last_error = \(bind: error), locked_by = NULL,
                locked_until = NULL, updated_at = \(bind: now)
            WHERE id = \(bind: id) AND locked_by = \(bind: worker)
            """
        ).run()
    }

    func bury(id: String, worker: String, error: String, now: Int64) async throws {
        try await db.raw(
            """
            UPDATE jobs SET state = 'dead', last_error = \(bind: error), locked_by = NULL, locked_until = NULL,
                updated_at = \(bind: now)
            WHERE id = \(bind: id) AND locked_by = \(bind: worker)
            """
        ).run()
    }

    func find(id: String) async throws -> JobRecord? {
        try await db.raw(
            "SELECT id, kind, state, attempts, max_attempts, run_at, last_error FROM jobs WHERE id = \(bind: id)"
        ).first()?.decode(model: JobRecord.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}

/// Which kinds of jobs a worker takes.
public enum JobKinds: Sendable {
    case all
    case only(Set<String>)
    case except(Set<String>)
}
