import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import NIOPosix
import TonightServer

/// `tonight serve --demo` and `tonight demo`: the server with the demo city in it.
public enum DemoRun {
    /// Runs the server and, once it listens, fills the database with the demo city unless it is there.
    /// A failed seeding is reported and the server keeps running.
    public static func serve(_ config: AppConfig) async throws {
        let services = try await AppServices.make(config: config)
        let app = try await buildApplication(config, services: services)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await runUntilStopped(app, config: config, logger: app.logger) }
            group.addTask {
                do {
                    _ = try await seed(services, url: clientURL(config))
                } catch {
                    DemoSeeder.printLine("demo: could not fill the demo city: \(error)")
                }
            }
            try await group.waitForAll()
        }
    }

    /// Fills an existing database: runs the server on a free local port just long enough to seed.
    /// Clips uploaded but not yet processed are processed when the server next runs.
    public static func seedOnce(_ config: AppConfig) async throws -> DemoSeeder.Summary {
        var local = config
        local.host = "127.0.0.1"
        local.port = try await freePort()
        let config = local
        let services = try await AppServices.make(config: config)
        let app = try await buildApplication(config, services: services)
        return try await withThrowingTaskGroup(of: DemoSeeder.Summary?.self) { group in
            group.addTask {
                try await app.runService()
                return nil
            }
            group.addTask { try await seed(services, url: clientURL(config)) }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw DemoError("the server stopped before the demo was seeded")
        }
    }

    private static func seed(_ services: AppServices, url: URL) async throws -> DemoSeeder.Summary {
        try await waitUntilListening(url)
        return try await DemoSeeder(services: services, serverURL: url).run()
    }

    private static func clientURL(_ config: AppConfig) -> URL {
        let host = ["0.0.0.0", "::", ""].contains(config.host) ? "127.0.0.1" : config.host
        return URL(string: "http://\(host.contains(":") ? "[\(host)]" : host):\(config.port)")!
    }

    private static func waitUntilListening(_ url: URL) async throws {
        for _ in 0..<300 {
            let request = HTTPClientRequest(url: url.absoluteString + "/health")
            if let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(2)),
                response.status == .ok
            {
                return
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw DemoError("the server did not answer /health within a minute")
    }

    private static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }
}
