import Logging
import NIOConcurrencyHelpers

/// A logger whose lines (message, metadata and the logger's own metadata) are kept in memory, for
/// tests that read what the server logged.
final class LogCapture: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])

    /// Everything logged so far, one line per entry.
    var text: [String] { lines.withLockedValue { $0 } }

    /// A logger writing here.
    func logger(label: String = "capture") -> Logger {
        Logger(label: label) { _ in Handler(lines: self.lines) }
    }

    private struct Handler: LogHandler {
        let lines: NIOLockedValueBox<[String]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let line = "\(event.level) \(event.message) \(all.map { "\($0)=\($1)" }.sorted().joined(separator: " "))"
            lines.withLockedValue { $0.append(line) }
        }
    }
}
