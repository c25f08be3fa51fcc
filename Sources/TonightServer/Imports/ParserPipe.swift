import Foundation

/// Runs a synchronous, streaming parser on its own thread and hands its output to async code in
/// batches, holding at most `depth` batches: the parser waits while the database catches up, so a
/// file of any size is imported in bounded memory.
final class ParserPipe<Item: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var batches: [[Item]] = []
    private var finished = false
    private var failure: (any Error)?
    private var waiting: CheckedContinuation<Void, Never>?
    private let depth: Int
    private let batchSize: Int

    init(depth: Int = 4, batchSize: Int = 2000) {
        self.depth = depth
        self.batchSize = batchSize
    }

    /// Starts `parse` on a new thread; it calls the emitter for each item.
    func start(_ parse: @escaping @Sendable (_ emit: (Item) -> Void) throws -> Void) {
        let thread = Thread { [self] in
            var batch: [Item] = []
            batch.reserveCapacity(batchSize)
            do {
                try parse { item in
                    batch.append(item)
                    if batch.count >= self.batchSize {
                        self.put(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                if !batch.isEmpty { put(batch) }
                close(nil)
            } catch {
                close(error)
            }
        }
        thread.stackSize = 4 << 20
        thread.start()
    }

    private func put(_ batch: [Item]) {
        condition.lock()
        while batches.count >= depth { condition.wait() }
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
