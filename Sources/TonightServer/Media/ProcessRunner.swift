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

/// Runs a command as a ``ChildProcess``, capturing its output safely.
///
/// * Standard output and standard error are drained concurrently on dedicated threads, so a
///   child that fills one pipe while the caller waits on the other cannot deadlock.
/// * Standard input is `/dev/null`.
/// * A wall-clock timeout sends SIGTERM to the child's process group, then SIGKILL after
///   ``terminationGrace``, waits for the exit and throws
///   ``ProcessRunnerError/timedOut(executable:pid:after:)``.
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

/// The running child and the cancellation flag, shared between the waiting thread and the
/// cancellation handler.
private final class ChildHandle: @unchecked Sendable {
    private let lock = NSLock()
    private var child: ChildProcess?
    private(set) var cancelled = false

    /// Records the child; kills it at once when cancellation came first.
    func started(_ child: ChildProcess) {
        lock.withLock {
            self.child = child
            if cancelled { child.signalGroup(SIGKILL) }
        }
    }

    func cancel() {
        lock.withLock {
            cancelled = true
            child?.signalGroup(SIGKILL)
        }
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
        guard let out = OutputPipe(), let err = OutputPipe() else {
            return .failure(ProcessRunnerError.launchFailed(executable: executable, reason: "no pipe"))
        }
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable, arguments: arguments, standardOutput: out.write, standardError: err.write)
        } catch {
            [out.read, out.write, err.read, err.write].forEach { _ = close($0) }
            return .failure(ProcessRunnerError.launchFailed(executable: executable, reason: "\(error)"))
        }
        // The readers only see end-of-file once no write end is open here.
        _ = close(out.write)
        _ = close(err.write)
        child.started(process)

        let stdout = Capture(limit: runner.maxOutputBytes)
        let stderr = Capture(limit: runner.maxErrorBytes)
        let readers = DispatchGroup()
        Self.drain(out.read, into: stdout, group: readers) { process.signalGroup(SIGKILL) }
        Self.drain(err.read, into: stderr, group: readers) {}

        var exit = process.wait(timeout: runner.timeout)
        let timedOut = exit == nil
        if timedOut {
            process.signalGroup(SIGTERM)
            exit = process.wait(timeout: runner.terminationGrace)
            if exit == nil {
                process.signalGroup(SIGKILL)
                exit = process.waitUntilExit()
            }
        }
        if readers.wait(timeout: .now() + 2) == .timedOut {
            // Grandchildren still hold the pipes.
            process.signalGroup(SIGKILL)
            readers.wait()
        }

        if child.cancelled { return .failure(CancellationError()) }
        if timedOut {
            return .failure(
                ProcessRunnerError.timedOut(executable: executable, pid: process.pid, after: runner.timeout))
        }
        if stdout.overflowed {
            return .failure(ProcessRunnerError.outputTooLarge(executable: executable, limit: runner.maxOutputBytes))
        }
        let ended = exit ?? process.waitUntilExit()
        return .success(
            ProcessOutput(
                status: ended.status, terminatedBySignal: ended.bySignal, stdout: stdout.bytes, stderr: stderr.bytes))
    }

    /// A pipe whose two ends are close-on-exec (the child gets its end through `dup2`).
    private struct OutputPipe {
        let read: Int32
        let write: Int32

        init?() {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { return nil }
            (read, write) = (fds[0], fds[1])
            // Not atomic with pipe(), which a spawn in between does not mind: the child closes
            // every descriptor but its own three (``ChildProcess``).
            _ = fcntl(read, F_SETFD, FD_CLOEXEC)
            _ = fcntl(write, F_SETFD, FD_CLOEXEC)
        }
    }

    /// Reads `fd` to end-of-file on a new thread (and closes it); calls `onOverflow` once if `capture` fills up.
    private static func drain(
        _ fd: Int32, into capture: Capture, group: DispatchGroup,
        onOverflow: @escaping @Sendable () -> Void
    ) {
        group.enter()
        Thread.detachNewThread {
            defer {
                _ = close(fd)
                group.leave()
            }
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
