import Foundation
import Logging
import ServiceLifecycle
import TonightCore

/// Puts work on the durable queue. Later features (media, push, reminders) enqueue through it.
public struct JobQueue: Sendable {
    let repository: JobRepository

    /// Enqueues a job of `kind` with a JSON payload to run at `runAt`; returns its id.
    @discardableResult
    public func enqueue(
        _ kind: String, payload: some Encodable, runAt: Date = Date(), maxAttempts: Int = 5
    ) async throws -> String {
        let job = NewJob(
            kind: kind, payload: String(decoding: try JSONEncoder().encode(payload), as: UTF8.self),
            runAt: Clock.millis(runAt), maxAttempts: max(1, maxAttempts))
        try await repository.enqueue(job, now: Clock.millis())
        return job.id
    }

    /// A job's stored state, or `nil` once it finished.
    public func job(id: String) async throws -> JobRecord? {
        try await repository.find(id: id)
    }
}

/// What runs a job of one kind. Throwing means the attempt failed and the job is retried later,
/// unless the error is ``JobGivenUp``.
public typealias JobHandler = @Sendable (ClaimedJob) async throws -> Void

/// Thrown by a job handler when trying again cannot help (a mail server's 5xx): the job is given
/// up at once, `reason` kept with it for operators.
public struct JobGivenUp: Error, CustomStringConvertible {
    /// Why, in words (no secrets: it is stored with the job).
    public var reason: String

    /// Creates the error.
    public init(reason: String) { self.reason = reason }

    public var description: String { "given up: \(reason)" }
}

/// Claims due jobs and runs them, retrying failures with exponential backoff until a job is dead.
/// Several workers (in one or several processes) can run against the same database.
public struct JobWorker: Service {
    let repository: JobRepository
    let handlers: [String: JobHandler]
    let policy: RetryPolicy
    let pollInterval: Duration
    let workerID: String
    let batchSize: Int
    let lockDuration: TimeInterval
    let kinds: JobKinds
    /// Whether a claimed batch runs at once rather than one job after another: for jobs that
    /// wait on a peer (mail, push), not for jobs that take a core each (media).
    let concurrent: Bool
    let logger: Logger

    /// Creates a worker.
    public init(
        queue: JobQueue, handlers: [String: JobHandler], policy: RetryPolicy = .init(),
        pollInterval: Duration = .seconds(1), workerID: String = Identifier.make(), batchSize: Int = 10,
        lockDuration: TimeInterval = 300, kinds: JobKinds = .all, concurrent: Bool = false, logger: Logger
    ) {
        self.kinds = kinds
        self.concurrent = concurrent
        self.repository = queue.repository
        self.handlers = handlers
        self.policy = policy
        self.pollInterval = pollInterval
        self.workerID = workerID
        self.batchSize = batchSize
        self.lockDuration = lockDuration
        self.logger = logger
    }

    /// Polls until graceful shutdown.
    public func run() async throws {
        try await runUntilShutdown {
            while !Task.isCancelled {
                let ran: Int
                do {
                    ran = try await runOnce()
                } catch {
                    logger.error("job claim failed", metadata: LoggedError.metadata(error))
                    ran = 0
                }
                if ran == 0 { try await Task.sleep(for: pollInterval) }
            }
        }
    }

    /// Claims one batch of due jobs and runs them; returns how many ran.
    @discardableResult
    public func runOnce(now: Date = Date()) async throws -> Int {
        let jobs = try await repository.claim(
            worker: workerID, limit: batchSize, now: Clock.millis(now),
            lockedUntil: Clock.millis(now.addingTimeInterval(lockDuration)), kinds: kinds)
        if concurrent {
            await withTaskGroup(of: Void.self) { group in
                for job in jobs { group.addTask { await execute(job, now: now) } }
            }
        } else {
            for job in jobs { await execute(job, now: now) }
        }
        return jobs.count
    }

    private func execute(_ job: ClaimedJob, now: Date) async {
        do {
            guard let handler = handlers[job.kind] else {
                throw ConfigurationError("no handler for job kind \(job.kind)")
            }
            try await handler(job)
            try await repository.complete(id: job.id, worker: workerID)
        } catch {
            // The reason is kept with the job for operators; the log says only what kind of error.
            let message = String(describing: error).prefix(1000).description
            var metadata = LoggedError.metadata(error)
            metadata["job"] = .string(job.id)
            metadata["kind"] = .string(job.kind)
            do {
                let next: RetryPolicy.Decision =
                    error is JobGivenUp
                    ? .dead : policy.next(afterAttempts: job.attempts, maxAttempts: job.maxAttempts, now: now)
                switch next {
                case .retry(let at):
                    logger.warning("job failed, will retry", metadata: metadata)
                    try await repository.retry(
                        id: job.id, worker: workerID, runAt: Clock.millis(at), error: message, now: Clock.millis(now))
                case .dead:
                    logger.error("job is dead", metadata: metadata)
                    try await repository.bury(id: job.id, worker: workerID, error: message, now: Clock.millis(now))
                }
            } catch {
                logger.error(
                    "recording job failure failed",
                    metadata: LoggedError.metadata(error).merging(["job": "\(job.id)"]) { $1 })
            }
        }
    }
}
