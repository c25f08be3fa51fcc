import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TonightServer

@Suite("Database busy: a request that gets no database connection in time")
struct DatabaseBusyTests {
    @Test("every pooled PostgreSQL connection held: 503 database_busy with Retry-After, never 500")
    func postgresPoolExhausted() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withApp(
            .postgres,
            configure: {
                $0.databasePoolSize = 2
                $0.databaseBusyTimeoutMilliseconds = 300
            }
        ) { services, client in
            let token = try await client.signUp("holder").accessToken
            // More sleeping queries than the pool has connections, on every event loop's pool.
            let holders = Task {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 {
                        group.addTask { try? await services.database.sql.raw("SELECT pg_sleep(2)").run() }
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(150))
            let response = try await client.send(.get, "/v1/me", token: token)
            #expect(response.status == .serviceUnavailable)
            #expect(response.json["code"] as? String == "database_busy")
            #expect(response.headers[.retryAfter] != nil)
            await holders.value
            #expect(try await client.send(.get, "/v1/me", token: token).status == .ok)
        }
    }
}
