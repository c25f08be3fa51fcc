import Foundation

/// Runs a synchronous, streaming parser on its own thread and hands its output to async code in
/// batches, holding at most `depth` batches: the parser waits while the database catches up, so a
/// file of any size is imported in bounded memory. A consumer that gives up calls ``cancel()``:
/// the parser's next emit throws and its thread ends instead of waiting for room forever.
final class ParserPipe<Item: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var batches: [[Item]] = []
    private var finished = false
    private var cancelled = false
    private var failure: (any Error)?
    private var waiting: CheckedContinuation<Void, Never>?
    private var depth: Int
    private let batchSize: Int

    init(depth: Int = 4, batchSize: Int = 2000) {
        self.depth = depth
        self.batchSize = batchSize
    }

    /// Starts `parse` on a new thread; it calls the emitter for each item (which throws once the
    /// pipe is cancelled).
    func start(_ parse: @escaping @Sendable (_ emit: (Item) throws -> Void) throws -> Void) {
        let thread = Thread { [self] in
            var batch: [Item] = []
            batch.reserveCapacity(batchSize)
            do {
                try parse { item in
                    batch.append(item)
                    if batch.count >= self.batchSize {
                        try self.put(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                if !batch.isEmpty { try put(batch) }
                close(nil)
            } catch {
                close(error)
            }
        }
        thread.stackSize = 4 << 20
        thread.start()
    }

    private func put(_ batch: [Item]) throws {
        condition.lock()
        while batches.count >= depth && !cancelled { condition.wait() }
        if cancelled {
            condition.unlock()
            throw CancellationError()
        }
        batches.append(batch)
        let resume = waiting
        waiting = nil
        condition.unlock()
        resume?.resume()
    }

    private func close(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        let resume = waiting
        waiting = nil
        condition.unlock()
        resume?.resume()
    }

    /// Holds at most `depth` batches from now on (the parser waits until fewer are queued).
    func limit(to depth: Int) {
        condition.lock()
        self.depth = depth
        condition.unlock()
    }

    /// Drops what is queued and makes the parser's next emit throw, so its thread ends.
    func cancel() {
        condition.lock()
        cancelled = true
        batches.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    private enum Take {
        case batch([Item])
        case done((any Error)?)
        case empty
    }

    private func take() -> Take {
        condition.lock()
        defer { condition.unlock() }
        if !batches.isEmpty {
            condition.signal()
            return .batch(batches.removeFirst())
        }
        return finished ? .done(failure) : .empty
    }

    private func park(_ continuation: CheckedContinuation<Void, Never>) {
        condition.lock()
        if !batches.isEmpty || finished {
            condition.unlock()
            continuation.resume()
        } else {
            waiting = continuation
            condition.unlock()
        }
    }

    /// Hands every batch to `body` in order; if `body` throws, cancels the parser and rethrows.
    func forEachBatch(_ body: ([Item]) async throws -> Void) async throws {
        do {
            while let batch = try await next() { try await body(batch) }
        } catch {
            cancel()
            throw error
        }
    }

    /// The next batch, or nil when the parser is done; rethrows the parser's error at the end.
    func next() async throws -> [Item]? {
        while true {
            switch take() {
            case .batch(let batch): return batch
            case .done(let error):
                if let error { throw error }
                return nil
            case .empty:
                await withCheckedContinuation { park($0) }
            }
        }
    }
}
