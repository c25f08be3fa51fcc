/// A write that found the database busy for longer than the busy timeout (answered 503).
struct DatabaseBusyError: Error, CustomStringConvertible {
    var description: String { "the database stayed busy for longer than the busy timeout" }
}

extension Database {
    /// How long a group of writes (``VoteBatcher``, ``MessageBatcher``) may wait for the database.
    /// On PostgreSQL, the busy timeout (`DATABASE_BUSY_TIMEOUT_MS`). On SQLite, longer than the
    /// write gate's and SQLite's busy handler's waits together (each the busy timeout), so SQLite
    /// answers first: a write refused for a busy file is one SQLite did not store. With the two
    /// equal, a group given up on at the deadline was still waiting for the lock, and was stored
    /// once the lock came free, its callers told 503.
    var groupDeadline: Duration {
        let busy = Duration.milliseconds(max(1, busyTimeoutMilliseconds))
        return kind == .sqlite ? busy * 2 + .seconds(1) : busy
    }
}

/// A first-come, first-served lock for async code.
actor WriteGate {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
        let watch: Task<Void, Never>?
    }

    private var held = false
    private var waiting: [Waiter] = []
    private var nextID: UInt64 = 0
    /// When the gate last changed hands: a queue that moves is not a stuck one.
    private var lastHandoff = ContinuousClock.now

    /// Waits until the gate is free and takes it.
    func enter() async {
        _ = await enter(within: nil)
    }

    /// Waits until the gate is free and takes it (true), or gives up (false) once the gate has not
    /// changed hands for `timeout`: its holder is stuck (on another process's lock, or an import
    /// holding it for a whole load). A long queue that keeps moving never gives up.
    func enter(within timeout: Duration?) async -> Bool {
        guard held else {
            held = true
            lastHandoff = .now
            return true
        }
        let id = nextID
        nextID += 1
        return await withCheckedContinuation { continuation in
            let watch = timeout.map { timeout in
                Task<Void, Never> { [weak self] in await self?.watch(id, timeout: timeout) }
            }
            waiting.append(Waiter(id: id, continuation: continuation, watch: watch))
        }
    }

    /// Hands the gate to the next in line, or frees it.
    func leave() {
        lastHandoff = .now
        if waiting.isEmpty {
            held = false
        } else {
            let next = waiting.removeFirst()
            next.watch?.cancel()
            next.continuation.resume(returning: true)
        }
    }

    /// Sleeps until the gate has not changed hands for `timeout`, then lets waiter `id` go unserved.
    private func watch(_ id: UInt64, timeout: Duration) async {
        while true {
            let deadline = lastHandoff + timeout
            if deadline <= .now {
                guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }
                waiting.remove(at: index).continuation.resume(returning: false)
                return
            }
            guard (try? await Task.sleep(until: deadline)) != nil else { return }
        }
    }
}
