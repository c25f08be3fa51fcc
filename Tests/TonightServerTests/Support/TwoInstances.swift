import Foundation
import HummingbirdTesting
import Logging
import PostgresKit
import Testing

@testable import TonightServer

/// Two servers on one fresh PostgreSQL database with one token key, on real ports, their live
/// listeners up: what a cluster behind a load balancer is, in one test process. `second` changes
/// the second one's configuration only (say, its database URL through a ``TCPProxy``).
func withTwoInstances(
    configure: (inout AppConfig) -> Void = { _ in },
    second configureSecond: (inout AppConfig) async throws -> Void = { _ in },
    _ body:
        @escaping @Sendable (
            _ a: AppServices, _ clientA: any TestClientProtocol, _ b: AppServices, _ clientB: any TestClientProtocol
        ) async throws -> Void
) async throws {
    var first = try await testConfig(.postgres)
    first.jwtKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    configure(&first)
    var second = first
    second.dataDirectory = first.dataDirectory + "-second"
    defer {
        for directory in [first.dataDirectory, second.dataDirectory] {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
    try await droppingTestDatabase(first.databaseURL) {
        try await twoInstances(first, second, configureSecond: configureSecond, body)
    }
}

/// ``withTwoInstances(configure:second:_:)`` once its configurations are made.
private func twoInstances(
    _ first: AppConfig, _ second: AppConfig, configureSecond: (inout AppConfig) async throws -> Void,
    _ body:
        @escaping @Sendable (
            _ a: AppServices, _ clientA: any TestClientProtocol, _ b: AppServices, _ clientB: any TestClientProtocol
        ) async throws -> Void
) async throws {
    var second = second
    try await configureSecond(&second)
    let a = try await AppServices.make(config: first)
    let b: AppServices
    do {
        b = try await AppServices.make(config: second)
    } catch {
        // The first never runs, so nothing else closes its pool (whose deinit traps if open).
        try? await a.database.shutdown()
        throw error
    }
    let appA = try await buildApplication(first, services: a)
    let appB = try await buildApplication(second, services: b)
    try await explained {
        try await appA.test(.live) { clientA in
            try await appB.test(.live) { clientB in
                for services in [a, b] {
                    if let listener = services.fanout as? PostgresFanout {
                        #expect(
                            await listener.waitUntilListening(timeout: .seconds(60)), "the live listener did not start")
                    }
                }
                try await body(a, clientA, b, clientB)
            }
        }
    }
}

/// Whether `check` holds within `limit` (tried every 50 ms).
func holds(within limit: Duration, _ check: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await check() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await check()
}

/// A connection of its own to the PostgreSQL database `services` use, outside their pool: to
/// listen for notifications or to read a session's own state (its prepared statements).
func ownPostgresConnection(_ services: AppServices, id: Int) async throws -> PostgresConnection {
    try await PostgresConnection.connect(
        configuration: try SQLPostgresConfiguration(url: services.config.databaseURL).coreConfiguration,
        id: id, logger: Logger(label: "test-connection"))
}

/// How many times `connection` ran each of its prepared statements with the generic plan, by
/// name: a statement prepared to be planned once per connection only is if PostgreSQL keeps it.
func genericPlans(on connection: PostgresConnection) async throws -> [String: Int] {
    var plans: [String: Int] = [:]
    for try await (name, generic) in try await connection.query(
        "SELECT name, generic_plans FROM pg_prepared_statements", logger: .init(label: "test-connection")
    ).decode((String, Int).self) {
        plans[name] = generic
    }
    return plans
}
