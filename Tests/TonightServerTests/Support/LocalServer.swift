import Hummingbird
import Testing

/// Runs `router` as a plain HTTP server on a free port of 127.0.0.1 for the length of `body`, which
/// gets the port: a stand-in for another host the server talks to (a JWKS endpoint, an image host).
func withLocalServer<T: Sendable>(_ router: Router<BasicRequestContext>, _ body: (Int) async throws -> T)
    async throws -> T
{
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    var configured = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        })
    configured.logger.logLevel = .critical  // cancelling the server task logs shutdown noise at error level
    let app = configured
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.runService(gracefulShutdownSignals: []) }
        defer { group.cancelAll() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        try #require(port > 0, "the local server did not start")
        return try await body(port)
    }
}
