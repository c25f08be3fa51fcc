import Foundation
import Logging
import NIOCore
import Testing

@testable import TonightServer

@Suite("Connection limits")
struct ConnectionLimitTests {
    /// Sends `head` on a new connection and returns what came back before the server closed it.
    private func answer(to head: String, port: Int) async throws -> String {
        let connection = try await RawConnection(port: port)
        // The server may stop reading a huge head early; the rest of the write can then fail.
        try? await connection.send(head)
        let text = try await connection.receive { $0.contains("\"code\"") && $0.hasSuffix("}") }
        try await connection.closed.get()
        return text
    }

    @Test(
        "oversize and unreadable heads are answered 414, 431 or 400 and closed, never left hanging or logged as errors")
    func oversizeHeads() async throws {
        let log = LogCapture()
        // Ten seconds: short enough to wait for, long enough that a loaded machine answers the
        // pipelined /health below before the first-request deadline.
        try await withLiveApp(.sqlite, configure: { $0.idleTimeout = 10 }, logger: log.logger()) { _, client in
            let port = try #require(client.port)
            // A silent connection, closed by the first-request deadline, is no error either.
            try await RawConnection(port: port).closed.get()
            let cases: [(name: String, head: String, status: String, code: String)] = [
                (
                    "a 10 kB query",
                    "GET /v1/users?q=\(String(repeating: "a", count: 10_000)) HTTP/1.1\r\nHost: t\r\n\r\n",
                    "414", "uri_too_long"
                ),
                (
                    "a 1 MB query",
                    "GET /v1/users?q=\(String(repeating: "a", count: 1_000_000)) HTTP/1.1\r\nHost: t\r\n\r\n",
                    "414", "uri_too_long"
                ),
                (
                    "5,000 header lines",
                    "GET /health HTTP/1.1\r\nHost: t\r\n\(String(repeating: "X-A: 1\r\n", count: 5000))\r\n", "431",
                    "headers_too_large"
                ),
                (
                    "one 80 kB header",
                    "GET /health HTTP/1.1\r\nHost: t\r\nX-A: \(String(repeating: "b", count: 80_000))\r\n\r\n",
                    "431", "headers_too_large"
                ),
                ("not HTTP", "HELLO THERE\r\n\r\n", "400", "bad_request"),
                (
                    "a second request with 80 kB of headers",
                    "GET /health HTTP/1.1\r\nHost: t\r\n\r\nGET /health HTTP/1.1\r\nX-A: \(String(repeating: "b", count: 80_000))\r\n\r\n",
                    "431", "headers_too_large"
                ),
            ]
            for test in cases {
                let text = try await answer(to: test.head, port: port)
                let statuses = text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
                #expect(statuses.last == test.status, "\(test.name): \(statuses)")
                #expect(text.contains("\"code\":\"\(test.code)\""), "\(test.name)")
                #expect(text.lowercased().contains("connection: close"), "\(test.name)")
            }
        }
        let loud = log.text.filter { $0.hasPrefix("error") || $0.hasPrefix("warning") || $0.hasPrefix("critical") }
        #expect(loud.isEmpty, "\(loud)")
    }

    @Test("one address holds at most its cap of connections; another address is still served")
    func perAddressCap() async throws {
        try await withLiveApp(.sqlite, configure: { $0.connectionsPerAddress = 20 }) { _, client in
            let port = try #require(client.port)
            var held: [RawConnection] = []
            for _ in 0..<20 { held.append(try await RawConnection(port: port, from: "127.0.0.3")) }
            // The 21st is refused with a problem and closed.
            let refused = try await RawConnection(port: port, from: "127.0.0.3")
            // Within a minute: with the whole suite on two cores the answer took more than 5 s.
            let text = try await refused.receive(within: .seconds(60)) { $0.hasSuffix("}") }
            #expect(text.hasPrefix("HTTP/1.1 503"), "\(text)")
            #expect(text.contains("\"code\":\"too_many_connections\""))
            #expect(text.contains("Retry-After: 10"))
            try await refused.closed.get()

            // Another address is not affected.
            let other = try await RawConnection(port: port, from: "127.0.0.4")
            try await other.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try await other.receive { $0.contains("\r\n\r\n") }.hasPrefix("HTTP/1.1 200"))
            await other.close()

            // A connection closed frees its place.
            await held.removeLast().close()
            var answered = ""
            for _ in 0..<50 where !answered.hasPrefix("HTTP/1.1 200") {
                let again = try await RawConnection(port: port, from: "127.0.0.3")
                try? await again.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
                answered = try await again.receive { $0.contains("\r\n\r\n") }
                await again.close()
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(answered.hasPrefix("HTTP/1.1 200"), "\(answered)")
            for connection in held { await connection.close() }
        }
    }

    @Test("six hundred idle connections from one address leave the server answering everyone else (default cap)")
    func manyConnections() async throws {
        #expect(AppConfig().connectionsPerAddress == 256)
        try await withLiveApp(.sqlite, configure: { $0.connectionsPerAddress = AppConfig().connectionsPerAddress }) {
            _, client in
            let port = try #require(client.port)
            var held: [RawConnection] = []
            for _ in 0..<600 {
                if let connection = try? await RawConnection(port: port, from: "127.0.0.5") { held.append(connection) }
            }
            // Refused connections close; the rest stay open and idle.
            try await Task.sleep(for: .milliseconds(500))
            #expect(held.count(where: \.isOpen) <= 256)
            let other = try await RawConnection(port: port, from: "127.0.0.6")
            try await other.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try await other.receive { $0.contains("\r\n\r\n") }.hasPrefix("HTTP/1.1 200"))
            await other.close()
            for connection in held { await connection.close() }
        }
    }

    @Test("connection failures are summarised at most once per interval")
    func failureSummary() {
        let log = LogCapture()
        let policy = ConnectionPolicy(
            perAddress: 0, firstRequestTimeout: .seconds(1), summaryInterval: 3600, logger: log.logger())
        for _ in 0..<1000 { policy.count(\.failed) }
        #expect(log.text.isEmpty)
        let now = ConnectionPolicy(
            perAddress: 0, firstRequestTimeout: .seconds(1), summaryInterval: 0, logger: log.logger())
        now.count(\.timedOut)
        #expect(log.text.count == 1)
        #expect(log.text.first?.hasPrefix("notice connections ended badly") == true)
        #expect(log.text.first?.contains("timed_out=1") == true)
    }
}
