import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// Runs the server until SIGTERM or SIGINT, then stops it within `config.shutdownTimeoutSeconds`
/// whatever it is waiting on (`tonight serve`). Graceful shutdown — no new connections, requests
/// in flight finish, the database pool closes — has all but the last two seconds; then every
/// task is cancelled; and if the process is still there at the limit (a call that ignores
/// cancellation), ``ShutdownDeadline`` logs it and exits with status 1. A rolling restart thus
/// never needs `kill -9`.
public func runUntilStopped(_ app: some ApplicationProtocol, config: AppConfig, logger: Logger) async throws {
    let limit = max(1, config.shutdownTimeoutSeconds)
    var configuration = ServiceGroupConfiguration(
        services: [
            .init(service: app),
            .init(
                service: ShutdownDeadline(seconds: limit, logger: logger), successTerminationBehavior: .ignore,
                failureTerminationBehavior: .ignore),
        ],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger)
    configuration.maximumGracefulShutdownDuration = .seconds(max(1, limit - 2))
    try await ServiceGroup(configuration: configuration).run()
}

/// Once graceful shutdown begins, a thread outside the task system waits `seconds` and then ends
/// the process (nothing a stuck task does can hold it up).
struct ShutdownDeadline: Service {
    let seconds: Int
    let logger: Logger

    func run() async throws {
        do { try await gracefulShutdown() } catch { return }
        logger.info("shutting down (at most \(seconds) s)")
        let seconds = seconds
        let logger = logger
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: TimeInterval(seconds))
            logger.error("still running \(seconds) s after the stop signal: exiting now")
            exit(1)
        }
    }
}
