import Foundation
import NIOConcurrencyHelpers
import VaporCSQLite

/// A connection of its own that copies committed pages from the WAL into the database file (a
/// passive checkpoint) on a thread of its own, once ``SQLiteBulkConnection/checkpointApart(path:)`` turned it on.
final class SQLiteCheckpointer: @unchecked Sendable {
    private let queue = DispatchQueue(label: "tonight.sqlite-checkpoint")
    /// Used on `queue` only.
    private var handle: OpaquePointer?
    /// A checkpoint is queued and has not started: a request now is served by that one.
    private let queued = NIOLockedValueBox(false)

    init(path: String) throws {
        var opened: OpaquePointer?
        let status = sqlite_nio_sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nil)
        // A connection that has read nothing does not know the WAL: it would checkpoint nothing.
        guard status == SQLITE_OK,
            sqlite_nio_sqlite3_exec(opened, "PRAGMA journal_mode = WAL", nil, nil, nil) == SQLITE_OK
        else {
            let message =
                opened.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "cannot open"
            sqlite_nio_sqlite3_close(opened)
            throw SQLiteBulkError(code: status, message: message)
        }
        handle = opened
    }

    /// Copies what is committed, soon, without waiting. It takes no lock a writer needs: the
    /// import's next batch is written meanwhile (to the end of the WAL, which it cannot rewind
    /// while a checkpoint runs). A page a reader still needs is copied by a later checkpoint.
    func request() {
        let first = queued.withLockedValue { queued in
            defer { queued = true }
            return !queued
        }
        guard first else { return }
        queue.async { [self] in
            queued.withLockedValue { $0 = false }
            sqlite_nio_sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
    }

    /// Copies the rest and empties the WAL file (as far as readers allow: this waits for none
    /// of them), then closes.
    func close() {
        queue.sync {
            guard let handle else { return }
            sqlite_nio_sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
            sqlite_nio_sqlite3_close_v2(handle)
            self.handle = nil
        }
    }
}
