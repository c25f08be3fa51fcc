import Foundation
import TonightCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a finished child process left behind.
struct ProcessOutput: Sendable {
    /// The exit code, or the signal number when ``terminatedBySignal`` is true.
    var status: Int32
    /// Whether the child died from a signal rather than exiting.
    var terminatedBySignal: Bool
    /// Everything the child wrote to standard output (at most the runner's `maxOutputBytes`).
    var stdout: Data
    /// The beginning of what the child wrote to standard error (at most the runner's `maxErrorBytes`).
    var stderr: Data

    /// Whether the child exited normally with status 0.
    var succeeded: Bool { !terminatedBySignal && status == 0 }

    /// The first non-empty line of standard error, trimmed; nil when it is empty.
    var firstErrorLine: String? {
        String(decoding: stderr, as: UTF8.self)
            .split(whereSeparator: \.isNewline)
            .lazy
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty }
    }
}

/// Why ``ProcessRunner`` gave up on a child. These are infrastructure failures, not verdicts
/// on the data the child was working on.
enum ProcessRunnerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The executable could not be started (missing, not executable, out of resources).
    case launchFailed(executable: String, reason: String)
    /// The child ran past the timeout and was killed (its process group got SIGTERM, then SIGKILL).
    case timedOut(executable: String, pid: Int32, after: Duration)
    /// The child wrote more than `limit` bytes to standard output and was killed.
    case outputTooLarge(executable: String, limit: Int)

    /// A one-line explanation.
    var description: String {
        switch self {
        case .launchFailed(let exe, let reason): "could not launch \(exe): \(reason)"
        case .timedOut(let exe, let pid, let after): "\(exe) (pid \(pid)) killed after timeout of \(after)"
        case .outputTooLarge(let exe, let limit): "\(exe) wrote more than \(limit) bytes to stdout"
        }
    }
}

/// Runs a command with Foundation's `Process`, capturing its output safely.
///
/// * Standard output and standard error are drained concurrently on dedicated threads, so a
///   child that fills one pipe while the caller waits on the other cannot deadlock.
/// * Standard input is `/dev/null`.
/// * A wall-clock timeout sends SIGTERM to the child's process group (Foundation starts every
///   child in its own group), then SIGKILL after ``terminationGrace``, waits for the exit and
///   throws ``ProcessRunnerError/timedOut(executable:pid:after:)``. SIGKILL matters: a child
///   started from a Swift concurrency (libdispatch) thread inherits that thread's *blocked*
///   signal mask — usually SIGTERM/SIGINT included — and Foundation's `Process` offers no way
///   to reset it. Emptying the spawning thread's own mask around `run()` is not safe either:
///   process-directed signals (SIGCHLD, SIGTERM) that libdispatch consumes through a signalfd
///   could land on that thread meanwhile and be lost. So the child keeps the inherited mask,
///   and SIGKILL, which cannot be blocked, guarantees termination.
/// * Standard output beyond ``maxOutputBytes`` kills the child and throws
///   ``ProcessRunnerError/outputTooLarge(executable:limit:)``; standard error is truncated to
///   ``maxErrorBytes`` silently (the rest is still drained).
/// * Cancelling the calling task kills the child and throws `CancellationError`.
struct ProcessRunner: Sendable {
    /// Wall-clock limit for one run.
    var timeout: Duration
    /// Maximum captured standard output, in bytes.
    var maxOutputBytes: Int
    /// Maximum captured standard error, in bytes.
    var maxErrorBytes: Int
    /// Time between SIGTERM and SIGKILL when the timeout fires.
    var terminationGrace: Duration

    /// A runner with the given limits.
    init(
        timeout: Duration = .seconds(120), maxOutputBytes: Int = 16 << 20, maxErrorBytes: Int = 64 << 10,
        terminationGrace: Duration = .seconds(1)
    ) {
        self.timeout = timeout
        self.maxOutputBytes = maxOutputBytes
        self.maxErrorBytes = maxErrorBytes
        self.terminationGrace = terminationGrace
    }

    /// Runs `executable` (an absolute path) with `arguments` and returns once it has exited and
    /// both output pipes are closed. A non-zero exit is *not* an error: inspect the result.
    func run(_ executable: String, arguments: [String]) async throws -> ProcessOutput {
        let child = ChildHandle()
        let job = Job(executable: executable, arguments: arguments, runner: self, child: child)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread { continuation.resume(with: job.execute()) }
            }
        } onCancel: {
            child.cancel()
        }
    }
}

// MARK: - Implementation

/// The running child's pid and lifecycle flags, shared between the waiting thread, the readers
/// and the cancellation handler.
private final class ChildHandle: @unchecked Sendable {
    private let lock = NSLock()
    private var pid: pid_t = 0
    private var exited = false
    private(set) var cancelled = false

    /// Records the pid; kills the child at once when cancellation came first.
    func started(_ pid: pid_t) {
        lock.withLock {
            self.pid = pid
            if cancelled { Self.signalGroup(pid, SIGKILL) }
        }
    }

    func markExited() { lock.withLock { exited = true } }

    func cancel() {
        lock.withLock {
            cancelled = true
            if pid > 0, !exited { Self.signalGroup(pid, SIGKILL) }
        }
    }

    /// Sends `signal` to the child's process group while the child has not been reaped.
    func send(_ signal: Int32) {
        lock.withLock { if pid > 0, !exited { Self.signalGroup(pid, signal) } }
    }

    /// After the child exited: kills what is left of its process group (grandchildren still
    /// holding the pipes). The group id cannot be reused while any member is alive.
    func killLeftovers() {
        lock.withLock { if pid > 0 { _ = kill(-pid, SIGKILL) } }
    }

    private static func signalGroup(_ pid: pid_t, _ signal: Int32) {
        if kill(-pid, signal) != 0 { _ = kill(pid, signal) }
    }
}

/// Bytes read from one pipe, up to a limit.
private final class Capture: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private let limit: Int
    private(set) var overflowed = false

    init(limit: Int) { self.limit = max(0, limit) }

    /// Appends what fits; returns true the first time something did not fit.
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        lock.withLock {
            let room = limit - data.count
            if bytes.count <= room {
                data.append(contentsOf: bytes)
                return false
            }
            if room > 0 { data.append(contentsOf: bytes.prefix(room)) }
            defer { overflowed = true }
            return !overflowed
        }
    }

    var bytes: Data { lock.withLock { data } }
}

/// One run of one command: launch, drain, wait, enforce limits. Runs on its own thread
/// because every step blocks.
private struct Job: Sendable {
    let executable: String
    let arguments: [String]
    let runner: ProcessRunner
    let child: ChildHandle

    func execute() -> Result<ProcessOutput, any Error> {
        if child.cancelled { return .failure(CancellationError()) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        let exited = DispatchSemaphore(value: 0)
        let child = self.child
        process.terminationHandler = { _ in
            child.markExited()
            exited.signal()
        }
        do {
            try process.run()
        } catch {
            return .failure(ProcessRunnerError.launchFailed(executable: executable, reason: "\(error)"))
        }
        child.started(process.processIdentifier)
        // The readers only see end-of-file once no write end is open here. Foundation closes them
        // in run() already; closing again is a no-op (the handles know they are closed).
        try? outPipe.fileHandleForWriting.close()
        try? errPipe.fileHandleForWriting.close()

        let out = Capture(limit: runner.maxOutputBytes)
        let err = Capture(limit: runner.maxErrorBytes)
        let readers = DispatchGroup()
        Self.drain(outPipe.fileHandleForReading, into: out, group: readers) { child.send(SIGKILL) }
        Self.drain(errPipe.fileHandleForReading, into: err, group: readers) {}

        var timedOut = false
        if exited.wait(timeout: .now() + runner.timeout.timeInterval) == .timedOut {
            timedOut = true
            child.send(SIGTERM)
            if exited.wait(timeout: .now() + runner.terminationGrace.timeInterval) == .timedOut {
                child.send(SIGKILL)
                exited.wait()
            }
        }
        if readers.wait(timeout: .now() + 2) == .timedOut {
            child.killLeftovers()
            readers.wait()
        }

        if child.cancelled { return .failure(CancellationError()) }
        if timedOut {
            return .failure(
                ProcessRunnerError.timedOut(
                    executable: executable, pid: process.processIdentifier, after: runner.timeout))
        }
        if out.overflowed {
            return .failure(ProcessRunnerError.outputTooLarge(executable: executable, limit: runner.maxOutputBytes))
        }
        return .success(
            ProcessOutput(
                status: process.terminationStatus,
                terminatedBySignal: process.terminationReason == .uncaughtSignal,
                stdout: out.bytes, stderr: err.bytes))
    }

    /// Reads `handle` to end-of-file on a new thread; calls `onOverflow` once if `capture` fills up.
    private static func drain(
        _ handle: FileHandle, into capture: Capture, group: DispatchGroup,
        onOverflow: @escaping @Sendable () -> Void
    ) {
        group.enter()
        Thread.detachNewThread {
            defer {
                try? handle.close()
                group.leave()
            }
            let fd = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    let overflowed = buffer.withUnsafeBytes {
                        capture.append(UnsafeRawBufferPointer(rebasing: $0[..<n]))
                    }
                    if overflowed { onOverflow() }
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

extension Duration {
    /// The duration in seconds, as Foundation's `TimeInterval`.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
