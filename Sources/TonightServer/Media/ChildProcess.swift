import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a ``ChildProcess`` could not be started.
public struct ChildProcessError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The program that was to run.
    public var executable: String
    /// The system's reason (`strerror`).
    public var reason: String

    /// A one-line explanation.
    public var description: String { "could not launch \(executable): \(reason)" }
}

/// A child process started with `posix_spawn` and reaped by a thread of its own.
///
/// Tonight starts its children (ffmpeg, ffprobe, libheif's tools; the tests' peers) with this
/// instead of Foundation's `Process`. On Linux, `Process.run()` scans `/proc/self/fd` and copies a
/// whole 256-byte name out of every directory entry, reading past glibc's 32 KiB buffer; once the
/// process holds about 1,365 descriptors that buffer fills, and when the over-read reaches an
/// unmapped page the whole process dies of SIGSEGV (swift-corelibs-foundation issue 5472). A server
/// with that many connections would have crashed while encoding a clip; the test run crashed that
/// way at 1,354 descriptors.
///
/// The child gets:
/// - a process group of its own, so a timeout can signal whatever it started (``signalGroup(_:)``);
/// - an empty signal mask and the default handlers for the signals a server blocks or ignores
///   (a concurrency thread's mask would otherwise keep SIGTERM from the child, and the ignored
///   SIGPIPE from the server would reach it);
/// - only the descriptors it is given as standard input, output and error (`/dev/null` for
///   those not given): every other one is closed in the child (glibc ≥ 2.34's
///   `posix_spawn_file_actions_addclosefrom_np`; on other systems the descriptors Tonight opens
///   for children are close-on-exec).
///
/// Signals are only sent while the child is not yet reaped, so they never reach a process that
/// took over its pid: the reaper waits for the exit without reaping, then records the exit and
/// reaps under the same lock that ``signal(_:)`` takes.
public final class ChildProcess: @unchecked Sendable {
    /// How a child ended.
    public struct Exit: Sendable, Equatable {
        /// The exit code, or the signal number when ``bySignal`` is true.
        public var status: Int32
        /// Whether a signal ended the child.
        public var bySignal: Bool
        /// Whether the child exited normally with status 0.
        public var succeeded: Bool { !bySignal && status == 0 }
    }

    /// The child's process id (and process group id).
    public let pid: pid_t
    private let condition = NSCondition()
    private var exit: Exit?
    private var waiters: [CheckedContinuation<Exit, Never>] = []

    /// Starts `executable` (an absolute path) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's environment; this process's when nil.
    ///   - standardInput: a descriptor the child reads as its standard input; `/dev/null` when nil.
    ///   - standardOutput: a descriptor the child writes its standard output to; `/dev/null` when nil.
    ///   - standardError: a descriptor the child writes its standard error to; `/dev/null` when nil.
    /// - Throws: ``ChildProcessError`` when it cannot start (missing, not executable, out of resources).
    public init(
        _ executable: String, arguments: [String], environment: [String: String]? = nil,
        standardInput: Int32? = nil, standardOutput: Int32? = nil, standardError: Int32? = nil
    ) throws {
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t? = nil
            var attributes: posix_spawnattr_t? = nil
        #else
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        for (target, given, mode) in [
            (Int32(0), standardInput, O_RDONLY), (1, standardOutput, O_WRONLY), (2, standardError, O_WRONLY),
        ] {
            if let given {
                posix_spawn_file_actions_adddup2(&actions, given, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", mode, 0)
            }
        }
        var flags = Int32(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
            flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #else
            if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))
        posix_spawnattr_setpgroup(&attributes, 0)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        var argv = ([executable] + arguments).map { strdup($0) } + [nil]
        var envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var pid = pid_t(0)
        let code = argv.withUnsafeMutableBufferPointer { argv in
            guard envp != nil else {
                return posix_spawn(&pid, executable, &actions, &attributes, argv.baseAddress!, environ)
            }
            return envp!.withUnsafeMutableBufferPointer {
                posix_spawn(&pid, executable, &actions, &attributes, argv.baseAddress!, $0.baseAddress!)
            }
        }
        guard code == 0 else {
            throw ChildProcessError(executable: executable, reason: String(cString: strerror(code)))
        }
        self.pid = pid
        Thread.detachNewThread { [self] in reap() }
    }

    #if !canImport(Darwin)
        /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
        /// module does not declare; nil where the C library lacks it.
        private static let closeFrom:
            (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
                guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
                return unsafeBitCast(
                    symbol,
                    to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
            }()
    #endif

    /// Waits (without reaping) for the exit, then records it and reaps under the lock.
    private func reap() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
        condition.lock()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let exit =
            status & 0x7f == 0
            ? Exit(status: (status >> 8) & 0xff, bySignal: false) : Exit(status: status & 0x7f, bySignal: true)
        self.exit = exit
        let waiting = waiters
        waiters = []
        condition.broadcast()
        condition.unlock()
        for waiter in waiting { waiter.resume(returning: exit) }
    }

    /// How the child ended; nil while it runs.
    public var exitStatus: Exit? { condition.withLock { exit } }

    /// Whether the child has not been reaped yet.
    public var isRunning: Bool { exitStatus == nil }

    /// Blocks the calling thread until the child ends.
    @discardableResult
    public func waitUntilExit() -> Exit {
        condition.withLock {
            while exit == nil { condition.wait() }
            return exit!
        }
    }

    /// Blocks the calling thread until the child ends or `timeout` passes; nil on timeout.
    public func wait(timeout: Duration) -> Exit? {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        return condition.withLock {
            while exit == nil, condition.wait(until: deadline) {}
            return exit
        }
    }

    /// Suspends until the child ends, without blocking a thread.
    public func exited() async -> Exit {
        await withCheckedContinuation { continuation in
            condition.lock()
            if let exit {
                condition.unlock()
                continuation.resume(returning: exit)
            } else {
                waiters.append(continuation)
                condition.unlock()
            }
        }
    }

    /// Sends `signal` to the child while it has not been reaped.
    public func signal(_ signal: Int32) {
        condition.withLock { if exit == nil { _ = kill(pid, signal) } }
    }

    /// Sends `signal` to the child's process group: the child and whatever it started. After the
    /// child is reaped this still reaches what is left of the group (a grandchild holding a pipe);
    /// a group id is not reused while any member lives.
    public func signalGroup(_ signal: Int32) {
        condition.withLock { if kill(-pid, signal) != 0, exit == nil { _ = kill(pid, signal) } }
    }

    /// Sends SIGTERM to the child.
    public func terminate() { signal(SIGTERM) }

    /// Starts `executable` with its standard output and error appended to the file at `path`
    /// (created if needed).
    public static func start(
        _ executable: String, arguments: [String], outputTo path: String, environment: [String: String]? = nil
    ) throws -> ChildProcess {
        let output = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard output >= 0 else {
            throw ChildProcessError(executable: executable, reason: "\(path): \(String(cString: strerror(errno)))")
        }
        defer { _ = close(output) }
        return try ChildProcess(
            executable, arguments: arguments, environment: environment, standardOutput: output, standardError: output)
    }

    /// Runs `executable` to its end, blocking the calling thread, with no input or output (for
    /// one-off tools such as a command-line seeder; a server uses ``ProcessRunner``).
    @discardableResult
    public static func run(_ executable: String, arguments: [String]) throws -> Exit {
        try ChildProcess(executable, arguments: arguments).waitUntilExit()
    }
}
