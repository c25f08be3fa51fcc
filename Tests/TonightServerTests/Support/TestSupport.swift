import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import Testing

@testable import TonightServer

/// The storage engines a test runs against: SQLite always, PostgreSQL when
/// `TONIGHT_TEST_POSTGRES_URL` points at a server (scripts/test starts one).
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    static let postgresURL = ProcessInfo.processInfo.environment["TONIGHT_TEST_POSTGRES_URL"] ?? ""

    /// The engines available in this run.
    static var available: [Backend] { postgresURL.isEmpty ? [.sqlite] : [.sqlite, .postgres] }

    var testDescription: String { rawValue }
}

/// Settings for a test: a fresh data directory, a fresh database, cheap bcrypt, generous limits,
/// and no background job worker (tests drive jobs themselves).
func testConfig(_ backend: Backend) async throws -> AppConfig {
    var config = AppConfig()
    config.dataDirectory =
        FileManager.default.temporaryDirectory
        .appendingPathComponent("tonight-test-\(UUID().uuidString)").path
    config.port = 0
    config.bcryptCost = 4
    config.signupsPerHourPerIP = 100_000
    config.loginsPerMinutePerIP = 100_000
    config.loginsPerMinutePerAccount = 100_000
    config.uploadsPerHour = 100_000
    // Every test client connects from loopback; the connection-limit tests set their own cap.
    config.connectionsPerAddress = 0
    config.jobsEnabled = false
    config.logLevel = .warning
    // Long enough that a pooled client connection is never closed under a request that a busy
    // machine (the whole suite at once) holds up; the idle-timeout tests set their own.
    config.idleTimeout = 60
    // The race tests queue hundreds of transactions on one row lock, which with the whole suite
    // on two cores can take longer than the production default of 30 s; the deadline tests set
    // their own.
    config.databaseQueryTimeoutMilliseconds = 300_000
    if backend == .postgres { config.databaseURL = try await freshPostgresDatabase() }
    return config
}

/// Creates an empty PostgreSQL database for one test and returns its URL.
func freshPostgresDatabase() async throws -> String {
    let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    let admin = try Database.open(
        url: Backend.postgresURL, sqlitePath: "", poolSize: 1, logger: Logger(label: "test-admin"))
    try await admin.sql.raw("CREATE DATABASE \(ident: name)").run()
    try await admin.shutdown()
    guard var components = URLComponents(string: Backend.postgresURL) else { throw ConfigurationError("bad URL") }
    components.path = "/" + name
    TestDatabases.made?.withLockedValue { $0.append(components.string!) }
    return components.string!
}

/// The test databases made in the running test, where its suite has ``DropsTestDatabases``.
enum TestDatabases {
    @TaskLocal static var made: NIOLockedValueBox<[String]>?
}

/// Drops the PostgreSQL databases each test of a suite made, when the test ends: for suites whose
/// tests make their services themselves rather than through ``withApp(_:framework:configure:logger:_:)``
/// (which drops its own).
struct DropsTestDatabases: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        let made = NIOLockedValueBox<[String]>([])
        try await TestDatabases.$made.withValue(made) {
            try await droppingTestDatabase(made) { try await function() }
        }
    }
}

extension Trait where Self == DropsTestDatabases {
    /// ``DropsTestDatabases``.
    static var dropsTestDatabases: Self { Self() }
}

/// Runs `body`, then drops the PostgreSQL databases at `databaseURLs` that a test made (see
/// ``freshPostgresDatabase()``), whether `body` threw or not: a full run makes hundreds, about
/// 12 MB each, and kept they filled the disk a later build needed.
func droppingTestDatabase(_ databaseURLs: String..., body: () async throws -> Void) async throws {
    try await droppingTestDatabase(NIOLockedValueBox(databaseURLs), body: body)
}

/// ``droppingTestDatabase(_:body:)`` with the URLs as they are once `body` has ended.
func droppingTestDatabase(_ databaseURLs: NIOLockedValueBox<[String]>, body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        for url in Set(databaseURLs.withLockedValue { $0 }) { await dropTestDatabase(url) }
        throw error
    }
    for url in Set(databaseURLs.withLockedValue { $0 }) { await dropTestDatabase(url) }
}

/// Drops the test database at `databaseURL` (any host or port: a ``TCPProxy`` may stand in
/// front), closing the connections still open to it; nothing for any other URL.
func dropTestDatabase(_ databaseURL: String) async {
    guard let name = URLComponents(string: databaseURL)?.path.dropFirst(), name.hasPrefix("t_"),
        let admin = try? Database.open(
            url: Backend.postgresURL, sqlitePath: "", poolSize: 1, logger: Logger(label: "test-admin"))
    else { return }
    try? await admin.sql.raw("DROP DATABASE IF EXISTS \(ident: String(name)) WITH (FORCE)").run()
    try? await admin.shutdown()
}

/// Builds the real application for `backend` and runs `body` against it, in process
/// (`.router`) or on a real port (`.live`), logging to `logger` if given.
func withApp(
    _ backend: Backend, framework: TestingSetup = .router, configure: (inout AppConfig) -> Void = { _ in },
    logger: Logger? = nil, _ body: @escaping @Sendable (AppServices, any TestClientProtocol) async throws -> Void
) async throws {
    var config = try await testConfig(backend)
    let made = config.databaseURL
    configure(&config)
    // The data directory goes with the test (a full run would leave hundreds in /tmp).
    defer { try? FileManager.default.removeItem(atPath: config.dataDirectory) }
    try await droppingTestDatabase(made, config.databaseURL) {
        let services = try await AppServices.make(config: config, logger: logger)
        let app = try await buildApplication(config, services: services)
        try await explained { try await app.test(framework) { client in try await body(services, client) } }
    }
}

/// Runs `body`; a PostgreSQL error that escapes it is recorded with its details first (its
/// description alone is a generic sentence, which left a failed CI run unexplained).
func explained(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as PSQLError {
        Issue.record("PostgreSQL error: \(String(reflecting: error))")
        throw error
    }
}

/// ``withApp(_:framework:configure:_:)`` on a real port.
func withLiveApp(
    _ backend: Backend, configure: (inout AppConfig) -> Void = { _ in }, logger: Logger? = nil,
    _ body: @escaping @Sendable (AppServices, any TestClientProtocol) async throws -> Void
) async throws {
    try await withApp(backend, framework: .live, configure: configure, logger: logger) { services, client in
        // On PostgreSQL live events travel through LISTEN/NOTIFY: start once the listener is on.
        if let listener = services.fanout as? PostgresFanout {
            #expect(await listener.waitUntilListening(timeout: .seconds(60)), "the live listener did not start")
        }
        try await body(services, client)
    }
}

/// A decoded JSON object from a response.
typealias JSON = [String: Any]

extension TestResponse {
    /// The body as a JSON object (empty if not JSON).
    var json: JSON {
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? JSON else {
            return [:]
        }
        return object
    }

    /// The body as text.
    var text: String { String(buffer: body) }
}

extension TestClientProtocol {
    /// Sends a JSON body (any Encodable-free dictionary) with optional bearer token.
    @discardableResult
    func send(
        _ method: HTTPRequest.Method, _ uri: String, json: JSON? = nil, raw: String? = nil, token: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        if json != nil || raw != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        if let token { headers[.authorization] = "Bearer \(token)" }
        var body: ByteBuffer?
        if let json { body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)) }
        if let raw { body = ByteBuffer(string: raw) }
        return try await execute(uri: uri, method: method, headers: headers, body: body)
    }

    /// Signs in and returns the response.
    func logIn(_ username: String, password: String = "a long enough passphrase", headers: HTTPFields = [:])
        async throws -> TestResponse
    {
        try await send(.post, "/v1/auth/login", json: ["username": username, "password": password], headers: headers)
    }

    /// Sends `count` requests at once and returns their statuses.
    func concurrentStatuses(
        _ count: Int, _ request: @escaping @Sendable (Int) async throws -> TestResponse
    ) async throws -> [HTTPResponse.Status] {
        try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
            for index in 0..<count { group.addTask { try await request(index).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Signs up a user and returns the token response.
    func signUp(_ username: String, password: String = "a long enough passphrase", token: String? = nil)
        async throws -> JSON
    {
        let response = try await send(
            .post, "/v1/auth/signup",
            json: ["username": username, "email": "\(username.lowercased())@example.com", "password": password],
            token: token)
        #expect(response.status == .created, "signup \(username): \(response.text)")
        return response.json
    }
}

extension JSON {
    var accessToken: String { self["accessToken"] as? String ?? "" }
    var refreshToken: String { self["refreshToken"] as? String ?? "" }
    var user: JSON { self["user"] as? JSON ?? [:] }
    var fieldErrors: [String] { (self["errors"] as? [JSON] ?? []).compactMap { $0["field"] as? String } }
}

/// How many rows `table` has.
func rowCount(_ table: String, in services: AppServices) async throws -> Int? {
    try await services.database.sql.raw("SELECT COUNT(*) AS n FROM \(ident: table)").first()?
        .decode(column: "n", as: Int.self)
}

/// One of the connections of ``race(port:_:connections:_:)``.
struct RaceConnection: Sendable {
    let client: TestClient

    /// Sends a request with an optional JSON body and bearer token; returns its status.
    func send(_ method: HTTPRequest.Method, _ uri: String, json: JSON? = nil, token: String? = nil) async throws
        -> HTTPResponse.Status
    {
        var headers: HTTPFields = [.connection: "keep-alive"]
        if json != nil { headers[.contentType] = "application/json" }
        if let token { headers[.authorization] = "Bearer \(token)" }
        let body = try json.map { ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: $0)) }
        return try await client.execute(.init(uri, method: method, headers: headers, body: body)).status
    }
}

/// Runs `count` requests (or short sequences) at once against a live server, spread over
/// `connections` connections of their own: the server answers one connection's requests one
/// after another, so only separate connections make them race inside the server. Each request
/// may wait up to two minutes (on one shared connection the last of a thousand waited for all
/// the others, and a busy machine ran past the test client's 20 s).
func race(
    port: Int, _ count: Int, connections: Int = 16,
    _ body: @escaping @Sendable (Int, RaceConnection) async throws -> HTTPResponse.Status
) async throws -> [HTTPResponse.Status] {
    let clients = (0..<connections).map { _ in
        TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120)))
    }
    for client in clients { client.connect() }
    do {
        let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
            for index in 0..<count {
                let connection = RaceConnection(client: clients[index % connections])
                group.addTask { try await body(index, connection) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for client in clients { try? await client.shutdown() }
        return statuses
    } catch {
        for client in clients { try? await client.shutdown() }
        throw error
    }
}
