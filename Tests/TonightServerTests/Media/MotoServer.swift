import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
import Testing

@testable import TonightServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A throw-away moto S3 server (what `moto_server -H 127.0.0.1 -p <port>` runs), one per test,
/// on a free loopback port; see ``locateOrInstall()`` for how moto is found or installed.
///
/// Setup, while moto still runs without authentication (its default): an IAM user with an
/// `s3:*` policy and an access key (IAM query API, signed by our own SigV4), then
/// `POST /moto-api/reset-auth 0`, which turns moto's signature and IAM checks on for every
/// later request; then the bucket is created with a signed `PUT /bucket`.
final class MotoServer: @unchecked Sendable {
    let process: ChildProcess
    let port: Int
    let logPath: String
    let credentials: SigV4.Credentials
    let bucket: String

    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func configuration(secret: String? = nil) -> S3Configuration {
        S3Configuration(
            endpoint: endpoint, bucket: bucket, region: "us-east-1",
            accessKeyID: credentials.accessKeyID, secretAccessKey: secret ?? credentials.secretAccessKey,
            timeout: .seconds(60))
    }

    func store(secret: String? = nil) -> S3BlobStore {
        S3BlobStore(configuration: configuration(secret: secret))
    }

    private init(process: ChildProcess, port: Int, logPath: String, credentials: SigV4.Credentials, bucket: String) {
        self.process = process
        self.port = port
        self.logPath = logPath
        self.credentials = credentials
        self.bucket = bucket
    }

    /// SIGTERM, then SIGKILL if moto is still there after 5 s.
    func stop() {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { process.signal(SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// moto's server is started as `<python> -c <launcher> -H 127.0.0.1 -p <port>`, which is what the
    /// `moto_server` console script does (`moto.server.main(argv)`) plus a prologue, because
    /// (1) moto must answer SIGTERM whatever signal mask it inherits (``ChildProcess`` empties it;
    /// other launchers pass on the starting thread's), and (2) if the test process dies (crash, kill -9), nothing
    /// else would stop moto: a watchdog thread exits when the parent process is gone.
    static let launcher = """
        import os, signal, sys, threading, time
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        parent = os.getppid()
        def watchdog():
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(0)
        threading.Thread(target=watchdog, daemon=True).start()
        from moto.server import main
        sys.exit(main(sys.argv[1:]))
        """

    /// Runs a Python snippet with moto's interpreter (botocore is installed with moto); returns stdout.
    static func runPython(_ code: String, arguments: [String]) async throws -> String {
        guard let python = await python() else { throw StartError(description: "no Python with moto") }
        let (status, output) = await run(python + ["-c", code] + arguments)
        guard status == 0 else { throw StartError(description: "python failed (\(status)): \(output)") }
        return output
    }

    // MARK: Finding (or installing) moto

    /// Oldest moto these tests accept: 5.2.1 wrongly refuses correctly signed ListObjectsV2
    /// requests whose prefix contains "/" (boto3's own too); 5.2.5 is the version tested.
    static let minimumVersion = [5, 2, 5]

    static let packageRoot: String = {
        // Tests/TonightServerTests/Media/MotoServer.swift → the package root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }()

    enum Availability: Sendable {
        case found([String])
        case missing(String)
    }

    static let availability: Task<Availability, Never> = Task {
        let result = await locateOrInstall()
        if case .missing(let why) = result { print("⚠️ Skipping moto tests: \(why)") }  // once per run
        return result
    }

    /// The Python command (interpreter and its arguments) that has moto[server] ≥ ``minimumVersion``.
    static func python() async -> [String]? {
        switch await availability.value {
        case .found(let python): return python
        case .missing: return nil
        }
    }

    /// Candidates, first usable wins: the interpreter of `$MOTO_SERVER` (a moto_server script),
    /// `<package>/.venv/bin/python3`, the interpreter of `moto_server` on PATH, `python3` on PATH.
    /// If none has moto[server] ≥ ``minimumVersion``: `python3 -m venv <package>/.venv` and
    /// `pip install 'moto[server]>=5.2.5'` into it, once per test run.
    private static func locateOrInstall() async -> Availability {
        let environment = ProcessInfo.processInfo.environment
        let venvPython = packageRoot + "/.venv/bin/python3"
        var candidates: [[String]] = []
        if let explicit = environment["MOTO_SERVER"], let python = python(of: explicit) { candidates.append(python) }
        candidates.append([venvPython])
        for dir in (environment["PATH"] ?? "").split(separator: ":") {
            if let python = python(of: "\(dir)/moto_server") {
                candidates.append(python)
                break
            }
        }
        candidates.append(["/usr/bin/env", "python3"])

        var notes: [String] = []
        for candidate in candidates {
            switch await check(candidate) {
            case .found: return .found(candidate)
            case .missing(let why): notes.append("\(candidate.joined(separator: " ")): \(why)")
            }
        }
        // Install into the package's .venv.
        let steps: [[String]] = [
            ["/usr/bin/env", "python3", "-m", "venv", packageRoot + "/.venv"],
            [venvPython, "-m", "pip", "install", "--quiet", "moto[server]>=5.2.5"],
        ]
        for step in steps {
            let (status, output) = await run(step)
            if status != 0 {
                notes.append("`\(step.joined(separator: " "))` failed (\(status)): \(output.suffix(1500))")
                return .missing(
                    "moto[server] ≥ 5.2.5 not found and could not be installed. " + notes.joined(separator: "; "))
            }
        }
        switch await check([venvPython]) {
        case .found: return .found([venvPython])
        case .missing(let why): return .missing("moto installed but unusable: \(why)")
        }
    }

    /// Whether `python` imports moto.server and botocore, at ``minimumVersion`` or newer.
    private static func check(_ python: [String]) async -> Availability {
        if python.count == 1 && !FileManager.default.isExecutableFile(atPath: python[0]) {
            return .missing("not there")
        }
        let (status, output) = await run(
            python + ["-c", "import moto, moto.server, botocore; print(moto.__version__)"])
        guard status == 0 else { return .missing("cannot import moto.server (\(output.suffix(300)))") }
        let version = output.trimmingCharacters(in: .whitespacesAndNewlines)
        let numbers = version.split(separator: ".").map { Int($0.prefix { $0.isNumber }) ?? 0 }
        guard numbers.lexicographicallyPrecedes(minimumVersion) == false else {
            return .missing("moto \(version) is older than \(minimumVersion.map(String.init).joined(separator: "."))")
        }
        return .found(python)
    }

    /// The interpreter (plus shebang arguments) of a Python console script, if `script` is one.
    static func python(of script: String) -> [String]? {
        guard let handle = FileHandle(forReadingAtPath: script) else { return nil }
        defer { try? handle.close() }
        let head = String(decoding: handle.readData(ofLength: 512), as: UTF8.self)
        guard head.hasPrefix("#!"), let line = head.split(separator: "\n").first, line.contains("python") else {
            return nil
        }
        let parts = line.dropFirst(2).split(separator: " ").map(String.init)
        guard let interpreter = parts.first, FileManager.default.isExecutableFile(atPath: interpreter) else {
            return nil
        }
        return parts
    }

    /// Runs `arguments` to its end without blocking a thread; its exit status and output.
    private static func run(_ arguments: [String]) async -> (Int32, String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("moto-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        do {
            let exit = try await ChildProcess.start(
                arguments[0], arguments: Array(arguments.dropFirst()), outputTo: log
            ).exited()
            return (exit.status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        } catch {
            return (-1, "\(error)")
        }
    }

    // MARK: Starting

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts moto on a free loopback port and sets it up. Tries a few ports in case one is taken
    /// between choosing it and moto binding it.
    static func start(python: [String]) async throws -> MotoServer {
        var lastError: any Error = StartError(description: "not started")
        for _ in 0..<3 {
            let port = try freePort()
            let logPath = FileManager.default.temporaryDirectory.appendingPathComponent(
                "moto-\(port)-\(UUID().uuidString).log"
            ).path
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            let process = try ChildProcess.start(
                python[0], arguments: python.dropFirst() + ["-c", launcher, "-H", "127.0.0.1", "-p", String(port)],
                outputTo: logPath)
            do {
                try await waitUntilAnswering(port: port, process: process, logPath: logPath)
                let credentials = try await setUpAuth(port: port)
                let server = MotoServer(
                    process: process, port: port, logPath: logPath, credentials: credentials, bucket: "blobs-test")
                do {
                    try await server.store().createBucket()
                } catch {
                    server.stop()
                    throw error
                }
                return server
            } catch {
                lastError = error
                MotoServer(
                    process: process, port: port, logPath: logPath,
                    credentials: SigV4.Credentials(accessKeyID: "", secretAccessKey: ""), bucket: ""
                ).stop()
            }
        }
        throw lastError
    }

    /// Ports already handed to a moto of this test run (tests run in parallel).
    static let portsHandedOut = Mutex<Set<Int>>([])

    /// Binds 127.0.0.1:0, reads the port the kernel chose, closes the socket; never returns a port
    /// it returned before in this run, so parallel tests can't pick the same one.
    static func freePort() throws -> Int {
        for _ in 0..<20 {
            let port = try kernelChosenPort()
            let fresh = portsHandedOut.withLock { $0.insert(port).inserted }
            if fresh { return port }
        }
        throw StartError(description: "no fresh free port")
    }

    static func kernelChosenPort() throws -> Int {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw StartError(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw StartError(description: "bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw StartError(description: "getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Polls `GET /moto-api/` (which needs no auth and does not count as an S3 action) every
    /// 100 ms until moto answers with any HTTP status; gives up after 30 s or if moto exits.
    static func waitUntilAnswering(port: Int, process: ChildProcess, logPath: String) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw StartError(
                    description: "moto_server exited (\(process.waitUntilExit().status)): \(log.suffix(2000))")
            }
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/moto-api/")
            request.method = .GET
            if let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(2)) {
                _ = try? await response.body.collect(upTo: 10 << 20)
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw StartError(description: "moto_server did not answer on port \(port) within 30 s")
    }

    /// Creates IAM user "blobs" with an s3:* policy and an access key, then enables moto's auth.
    static func setUpAuth(port: Int) async throws -> SigV4.Credentials {
        let bootstrap = SigV4.Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "bootstrap")
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        _ = try await iam(port: port, credentials: bootstrap, ["Action": "CreateUser", "UserName": "blobs"])
        _ = try await iam(
            port: port, credentials: bootstrap,
            ["Action": "PutUserPolicy", "UserName": "blobs", "PolicyName": "s3-all", "PolicyDocument": policy])
        let keyXML = try await iam(
            port: port, credentials: bootstrap, ["Action": "CreateAccessKey", "UserName": "blobs"])
        guard let id = XMLScan.firstValue(of: "AccessKeyId", in: keyXML),
            let secret = XMLScan.firstValue(of: "SecretAccessKey", in: keyXML)
        else { throw StartError(description: "no access key in CreateAccessKey answer: \(keyXML)") }

        try await resetAuth(port: port, count: "0")
        return SigV4.Credentials(accessKeyID: id, secretAccessKey: secret)
    }

    /// Turns moto's signature/IAM checking on (from the next request) or off.
    func setAuthentication(enabled: Bool) async throws {
        try await Self.resetAuth(port: port, count: enabled ? "0" : "inf")
    }

    static func resetAuth(port: Int, count: String) async throws {
        var reset = HTTPClientRequest(url: "http://127.0.0.1:\(port)/moto-api/reset-auth")
        reset.method = .POST
        reset.body = .bytes(ByteBuffer(string: count))
        let response = try await HTTPClient.shared.execute(reset, timeout: .seconds(10))
        let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard response.status == .ok else { throw StartError(description: "reset-auth: \(response.status) \(body)") }
    }

    /// One IAM query-API call, signed with SigV4 (service "iam"), so moto routes it to IAM.
    static func iam(port: Int, credentials: SigV4.Credentials, _ parameters: [String: String]) async throws -> String {
        var items = parameters
        items["Version"] = "2010-05-08"
        let form = SigV4.canonicalQueryString(items.map { ($0.key, $0.value) })
        let body = Array(form.utf8)
        let host = "127.0.0.1:\(port)"
        let signed = SigV4.sign(
            method: "POST", host: host, path: "/",
            headers: [("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")],
            payloadHash: SigV4.hexSHA256(body), region: "us-east-1", service: "iam",
            credentials: credentials, date: Date())
        var request = HTTPClientRequest(url: "http://\(host)/")
        request.method = .POST
        for header in signed.headers { request.headers.add(name: header.name, value: header.value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard response.status == .ok else {
            throw StartError(description: "IAM \(parameters["Action"] ?? ""): \(response.status) \(text)")
        }
        return text
    }
}

/// Runs `body` against a fresh moto server, stopping it afterwards.
func withMoto(_ body: (MotoServer) async throws -> Void) async throws {
    guard let python = await MotoServer.python() else {
        Issue.record("moto[server] is not available")
        return
    }
    let server = try await MotoServer.start(python: python)
    defer { server.stop() }
    try await body(server)
}

/// Suite trait: enabled only when moto_server can be found or installed (the reason is printed otherwise).
/// With `TONIGHT_TEST_REQUIRE_MOTO=1` (scripts/test sets it) the tests always run, and fail when
/// moto is missing.
let motoAvailable: ConditionTrait = .enabled(
    "needs moto[server] >= 5.2.5 (pip); the reason it is missing is printed above"
) {
    if ProcessInfo.processInfo.environment["TONIGHT_TEST_REQUIRE_MOTO"] == "1" { return true }
    return await MotoServer.python() != nil
}
