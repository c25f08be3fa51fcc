import Foundation
import Testing

@testable import TonightServer

/// A test peer written in Python (`Tests/Mail/smtp_sink.py`, `Tests/Push/push_service.py`), run
/// with the package's `.venv` interpreter on a free loopback port, which it prints as `PORT <n>`.
///
/// Without its modules the tests that need it skip, unless `requiredBy` is set in the environment
/// (scripts/test sets it after installing them), when they fail.
final class PythonService: @unchecked Sendable {
    static let python = MotoServer.packageRoot + "/.venv/bin/python3"

    let port: Int
    /// A scratch folder that goes with the service.
    let directory: URL
    private let process: ChildProcess

    private init(port: Int, directory: URL, process: ChildProcess) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    /// Whether `.venv`'s Python imports `modules`; records an issue when `requiredBy` is set and it does not.
    static func available(_ modules: [String], requiredBy variable: String) -> Bool {
        let probe = try? ChildProcess.run(python, arguments: ["-c", "import " + modules.joined(separator: ", ")])
        let found = probe?.succeeded == true
        if !found {
            if ProcessInfo.processInfo.environment[variable] != nil {
                Issue.record("\(variable) is set but \(python) cannot import \(modules.joined(separator: ", "))")
            } else {
                print("⚠️ Skipping tests that need \(modules.joined(separator: ", ")) in \(python)")
            }
        }
        return found
    }

    /// Starts `Tests/<script>` with `arguments` (`prepare` may add some, given the scratch folder).
    static func start(
        _ script: String, arguments: [String] = [], prepare: (URL) throws -> [String] = { _ in [] }
    ) async throws -> PythonService {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("py-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let output = directory.appendingPathComponent("stdout")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let stdout = open(output.path, O_WRONLY | O_CLOEXEC)
        defer { _ = close(stdout) }
        let process = try ChildProcess(
            python, arguments: [MotoServer.packageRoot + "/Tests/" + script] + arguments + (try prepare(directory)),
            standardOutput: stdout)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }),
                let port = Int(line.dropFirst(5))
            {
                return PythonService(port: port, directory: directory, process: process)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw ConfigurationError("\(script) did not start")
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `Tests/<script>` with `arguments` to its end without blocking a thread (the server under
    /// test shares the pool); returns its exit status and the last line it printed.
    static func run(_ script: String, arguments: [String]) async throws -> (status: Int32, lastLine: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("py-\(UUID().uuidString).out")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let stdout = open(output.path, O_WRONLY | O_CLOEXEC)
        defer { _ = close(stdout) }
        let status = try await ChildProcess(
            python, arguments: [MotoServer.packageRoot + "/Tests/" + script] + arguments, standardOutput: stdout,
            standardError: 2
        ).exited().status
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return (status, text.split(separator: "\n").last.map(String.init) ?? "")
    }
}
