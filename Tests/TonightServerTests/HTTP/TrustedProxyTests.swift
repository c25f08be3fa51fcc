import Foundation
import HummingbirdTesting
import Testing

@testable import TonightServer

@Suite("Trusted proxies: the client address behind a load balancer")
struct TrustedProxyTests {
    @Test("the right-most X-Forwarded-For entry that is not a trusted proxy is the client")
    func clientAddress() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, 127.0.0.5 ,2001:db8::/32")
        // What the client wrote left of its own address is ignored.
        #expect(proxies.client(peer: "127.0.0.5", forwardedFor: "6.6.6.6, 203.0.113.7") == "203.0.113.7")
        // Through two trusted proxies.
        #expect(proxies.client(peer: "127.0.0.5", forwardedFor: "6.6.6.6, 203.0.113.7, 10.1.2.3") == "203.0.113.7")
        // A peer that is not trusted: the header is ignored.
        #expect(proxies.client(peer: "127.0.0.6", forwardedFor: "203.0.113.7") == "127.0.0.6")
        #expect(proxies.client(peer: "127.0.0.5", forwardedFor: nil) == "127.0.0.5")
        // Every entry trusted: the left-most; an entry that is not an address ends the walk.
        #expect(proxies.client(peer: "127.0.0.5", forwardedFor: "10.0.0.1, 10.0.0.2") == "10.0.0.1")
        #expect(proxies.client(peer: "127.0.0.5", forwardedFor: "junk, 203.0.113.9") == "203.0.113.9")
        #expect(proxies.client(peer: "127.0.0.5", forwardedFor: "203.0.113.9, junk") == "127.0.0.5")
        // IPv6, and IPv4 seen as IPv4-mapped IPv6.
        #expect(proxies.client(peer: "::ffff:127.0.0.5", forwardedFor: "2001:db8::1, 2001:db9::1") == "2001:db9::1")
        #expect(proxies.contains("10.255.255.255") && !proxies.contains("11.0.0.0"))
        #expect(proxies.contains("2001:db8:ffff::1") && !proxies.contains("2001:db9::"))
        #expect(!TrustedProxies.none.contains("127.0.0.1"))
        #expect(
            TrustedProxies.privateNetworks.contains("172.31.0.9")
                && !TrustedProxies.privateNetworks.contains("172.32.0.1"))
        #expect(throws: ConfigurationError.self) { try TrustedProxies(parsing: "10.0.0.0/33") }
        #expect(throws: ConfigurationError.self) { try TrustedProxies(parsing: "proxy.lan") }
    }

    /// Failed before: the server took the left-most entry, which the client writes (30 of 30
    /// forged sign-ups passed a limit of 20).
    @Test("behind a trusted proxy forged entries share the client's limit; a direct client cannot pick its address")
    func signUpLimit() async throws {
        try await withLiveApp(
            .sqlite,
            configure: {
                $0.trustedProxies = "127.0.0.5"
                $0.signupsPerHourPerIP = 2
            }
        ) { _, client in
            let port = try #require(client.port)
            func signUp(from source: String, forwardedFor: String) async throws -> String {
                let name = "p" + String(UUID().uuidString.prefix(8)).lowercased()
                let body =
                    #"{"username":"\#(name)","email":"\#(name)@example.com","password":"a long enough passphrase"}"#
                let connection = try await RawConnection(port: port, from: source)
                try await connection.send(
                    "POST /v1/auth/signup HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\nX-Forwarded-For: \(forwardedFor)\r\n\r\n\(body)")
                // Within a minute: with the whole suite on two cores a sign-up took more than 5 s.
                let answer = try await connection.receive(within: .seconds(60)) { $0.contains("\r\n\r\n") }
                await connection.close()
                return String(answer.prefix(12))
            }
            // 203.0.113.7 behind the proxy forges another left-most entry each time.
            #expect(try await signUp(from: "127.0.0.5", forwardedFor: "1.1.1.1, 203.0.113.7") == "HTTP/1.1 201")
            #expect(try await signUp(from: "127.0.0.5", forwardedFor: "2.2.2.2, 203.0.113.7") == "HTTP/1.1 201")
            #expect(try await signUp(from: "127.0.0.5", forwardedFor: "3.3.3.3, 203.0.113.7") == "HTTP/1.1 429")
            // Another client behind the same proxy has its own limit.
            #expect(try await signUp(from: "127.0.0.5", forwardedFor: "203.0.113.8") == "HTTP/1.1 201")
            // Straight to the server the header is ignored: the peer is the client.
            #expect(try await signUp(from: "127.0.0.6", forwardedFor: "9.9.9.1") == "HTTP/1.1 201")
            #expect(try await signUp(from: "127.0.0.6", forwardedFor: "9.9.9.2") == "HTTP/1.1 201")
            #expect(try await signUp(from: "127.0.0.6", forwardedFor: "9.9.9.3") == "HTTP/1.1 429")
        }
    }
}
