import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import TonightCore

@testable import TonightServer

/// Counts how often each job ran, from many tasks at once.
final class RunLog: Sendable {
    private let runs = Mutex<[String: Int]>([:])

    func record(_ id: String) { runs.withLock { $0[id, default: 0] += 1 } }
    var counts: [String: Int] { runs.withLock { $0 } }
}

struct Boom: Error {}

@Suite("Durable job queue", .dropsTestDatabases)
struct JobQueueTests {
    func open(_ config: AppConfig) async throws -> AppServices {
        try await AppServices.make(config: config, logger: Logger(label: "jobs-test"))
    }

    @Test("the background services stop cleanly on graceful shutdown (a SIGTERM is not an error)")
    func cleanShutdown() async throws {
        let services = try await open(try await testConfig(.sqlite))
        let worker = JobWorker(
            queue: services.jobs, handlers: [:], pollInterval: .milliseconds(10), logger: services.logger)
        let housekeeping = Housekeeping(idempotency: services.idempotency, ttl: 60, logger: services.logger)
        let group = ServiceGroup(
            configuration: .init(services: [worker, housekeeping, services.presence], logger: services.logger))
        var failure: (any Error)?
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                try await Task.sleep(for: .milliseconds(100))
                await group.triggerGracefulShutdown()
                // Throws if any service ended its run with an error.
                try await tasks.waitForAll()
            }
        } catch {
            failure = error
        }
        try await services.database.shutdown()
        #expect(failure == nil, "a service failed at shutdown: \(String(describing: failure))")
    }

    @Test("a concurrent worker runs a claimed batch at once; a JobGivenUp is dead after one attempt")
    func concurrentBatchAndGivenUp() async throws {
        let services = try await open(try await testConfig(.sqlite))
        // Each job waits until all four have started: one after another, the first would never see them.
        let started = Mutex(0)
        let worker = JobWorker(
            queue: services.jobs,
            handlers: [
                "wait": { _ in
                    started.withLock { $0 += 1 }
                    for _ in 0..<1000 where started.withLock({ $0 }) < 4 {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    guard started.withLock({ $0 }) == 4 else { throw Boom() }
                },
                "refused": { _ in throw JobGivenUp(reason: "550 no such mailbox") },
            ], batchSize: 10, concurrent: true, logger: services.logger)
        var ids: [String] = []
        for _ in 0..<4 { ids.append(try await services.jobs.enqueue("wait", payload: ["x": 1])) }
        let refused = try await services.jobs.enqueue("refused", payload: ["x": 1], maxAttempts: 5)
        #expect(try await worker.runOnce() == 5)
        for id in ids { #expect(try await services.jobs.job(id: id) == nil) }
        let dead = try #require(try await services.jobs.job(id: refused))
        #expect(dead.state == .dead)
        #expect(dead.attempts == 1)
        #expect(dead.lastError == "given up: 550 no such mailbox")
        try await services.database.shutdown()
    }

    @Test("a failing job is retried with backoff, then dead after N failures", arguments: Backend.available)
    func retryAndDeadLetter(backend: Backend) async throws {
        let services = try await open(try await testConfig(backend))
        let log = RunLog()
        let worker = JobWorker(
            queue: services.jobs,
            handlers: [
                "fail": { job in
                    log.record(job.id); throw Boom()
                }
            ],
            policy: RetryPolicy(baseDelay: 10, maxDelay: 60), logger: services.logger)
        let id = try await services.jobs.enqueue("fail", payload: ["n": 1], maxAttempts: 3)
        let start = Date()

        #expect(try await worker.runOnce(now: start) == 1)
        var job = try #require(try await services.jobs.job(id: id))
        #expect(job.state == .queued)
        #expect(job.attempts == 1)
        #expect(job.lastError?.contains("Boom") == true)
        // Not due again before the backoff passes (10 s), due after.
        #expect(try await worker.runOnce(now: start.addingTimeInterval(5)) == 0)
        #expect(try await worker.runOnce(now: start.addingTimeInterval(11)) == 1)
        job = try #require(try await services.jobs.job(id: id))
        // Second failure doubles the delay: 20 s after the second attempt.
        #expect(job.runAt >= Clock.millis(start.addingTimeInterval(11 + 19)))
        #expect(try await worker.runOnce(now: start.addingTimeInterval(40)) == 1)
        job = try #require(try await services.jobs.job(id: id))
        #expect(job.state == .dead)
        #expect(job.attempts == 3)
        #expect(try await worker.runOnce(now: start.addingTimeInterval(10_000)) == 0)
        #expect(log.counts[id] == 3)
        try await services.database.shutdown()
    }

    @Test("a successful job runs once and leaves the queue", arguments: Backend.available)
    func success(backend: Backend) async throws {
        let services = try await open(try await testConfig(backend))
        let log = RunLog()
        let worker = JobWorker(
            queue: services.jobs, handlers: ["ok": { job in log.record(job.payload) }], logger: services.logger)
        let id = try await services.jobs.enqueue("ok", payload: ["hello": "world"])
        let later = try await services.jobs.enqueue(
            "ok", payload: ["later": true], runAt: Date().addingTimeInterval(3600))
        #expect(try await worker.runOnce() == 1)
        #expect(try await services.jobs.job(id: id) == nil)
        #expect(try await services.jobs.job(id: later)?.state == .queued)
        #expect(log.counts == [#"{"hello":"world"}"#: 1])
        try await services.database.shutdown()
    }

    @Test("a worker takes only the kinds it is for", arguments: Backend.available)
    func kinds(backend: Backend) async throws {
        let services = try await open(try await testConfig(backend))
        let log = RunLog()
        let handlers: [String: JobHandler] = [
            "slow": { job in log.record(job.kind) }, "push": { job in log.record(job.kind) },
        ]
        let slow = JobWorker(queue: services.jobs, handlers: handlers, kinds: .only(["slow"]), logger: services.logger)
        let rest = JobWorker(
            queue: services.jobs, handlers: handlers, kinds: .except(["slow"]), logger: services.logger)
        try await services.jobs.enqueue("slow", payload: ["n": 1])
        try await services.jobs.enqueue("push", payload: ["n": 2])
        try await services.jobs.enqueue("slow", payload: ["n": 3])
        #expect(try await rest.runOnce() == 1)
        #expect(log.counts == ["push": 1])
        #expect(try await rest.runOnce() == 0)
        #expect(try await slow.runOnce() == 2)
        #expect(log.counts == ["push": 1, "slow": 2])
        try await services.database.shutdown()
    }

    @Test(
        "a queued job survives a restart, and a crashed worker's job is picked up again", arguments: Backend.available)
    func survivesRestart(backend: Backend) async throws {
        let config = try await testConfig(backend)
        var services = try await open(config)
        let queued = try await services.jobs.enqueue("ok", payload: ["a": 1])
        let crashed = try await services.jobs.enqueue("ok", payload: ["b": 2])
        // A worker claims `crashed` and dies without finishing (its lock lasts 60 s).
        let claimed = try await JobRepository(db: services.database.sql, kind: services.database.kind).claim(
            worker: "dead-worker", limit: 1, now: Clock.millis(), lockedUntil: Clock.millis() + 60_000, kinds: .all)
        #expect(claimed.count == 1)
        try await services.database.shutdown()

        services = try await open(config)
        let log = RunLog()
        let worker = JobWorker(
            queue: services.jobs, handlers: ["ok": { job in log.record(job.id) }], logger: services.logger)
        #expect(try await worker.runOnce() == 1)
        #expect(try await worker.runOnce(now: Date().addingTimeInterval(61)) == 1)
        #expect(log.counts == [queued: 1, crashed: 1])
        try await services.database.shutdown()
    }

    @Test("two claimers racing on separate connections never run a job twice", arguments: Backend.available)
    func claimersRace(backend: Backend) async throws {
        let config = try await testConfig(backend)
        let first = try await open(config)
        let second = try await open(config)
        var ids: [String] = []
        for index in 0..<300 { ids.append(try await first.jobs.enqueue("ok", payload: ["i": index])) }
        let log = RunLog()
        let handlers: [String: JobHandler] = ["ok": { job in log.record(job.id) }]
        let workers = [
            JobWorker(queue: first.jobs, handlers: handlers, workerID: "w1", batchSize: 7, logger: first.logger),
            JobWorker(queue: first.jobs, handlers: handlers, workerID: "w2", batchSize: 5, logger: first.logger),
            JobWorker(queue: second.jobs, handlers: handlers, workerID: "w3", batchSize: 7, logger: second.logger),
            JobWorker(queue: second.jobs, handlers: handlers, workerID: "w4", batchSize: 3, logger: second.logger),
        ]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in workers {
                group.addTask { while try await worker.runOnce() > 0 {} }
            }
            try await group.waitForAll()
        }
        #expect(log.counts.count == 300)
        #expect(log.counts.values.allSatisfy { $0 == 1 })
        #expect(Set(log.counts.keys) == Set(ids))
        try await first.database.shutdown()
        try await second.database.shutdown()
    }
}
