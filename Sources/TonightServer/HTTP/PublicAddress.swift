import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// The guard for requests the server makes to addresses its clients or imports chose (feed image
/// links today): only hosts whose every DNS address is public — no loopback, private, shared,
/// link-local, multicast or reserved range, IPv4 or IPv6 (mapped and NAT64 forms included) — so a
/// link cannot make the server reach its own network. The caller connects to the address checked
/// here (``resolve(_:port:allowing:)``), not to a second lookup, so DNS rebinding between the check
/// and the connection cannot move it. Hosts in `allowing` (configuration, for tests or a LAN
/// server) skip the check.
enum PublicAddress {
    /// Why a host was refused.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
        /// Whether the name did not resolve (perhaps for now), rather than to a refused address.
        var unresolved = false
    }

    /// How long a caller waits for DNS. `getaddrinfo` itself cannot be stopped: past this the
    /// caller gets an unresolved refusal (retried later) while the lookup ends on its thread.
    static let lookupDeadline: Duration = .seconds(5)
    /// How many lookups may be running or waiting for a thread; more are refused at once, so a DNS
    /// server that stopped answering cannot gather an unbounded queue of callers.
    static let maxPendingLookups = 32
    private static let pending = Mutex(0)

    /// The first address of `host`, when every address it resolves to is public (or `host` is in
    /// `allowing`). Resolution runs on threads of its own, within ``lookupDeadline``; it throws
    /// ``Refusal`` otherwise.
    static func resolve(
        _ host: String, port: Int, allowing: Set<String>,
        deadline: Duration = lookupDeadline,
        lookup: @escaping @Sendable (String, Int) throws -> [SocketAddress] = lookup
    ) async throws -> SocketAddress {
        let admitted = pending.withLock { count in
            guard count < maxPendingLookups else { return false }
            count += 1
            return true
        }
        guard admitted else { throw Refusal(description: "too many DNS lookups waiting", unresolved: true) }
        let addresses: [SocketAddress]
        do {
            addresses = try await withDeadline(deadline) {
                defer { pending.withLock { $0 -= 1 } }
                return try await resolver.runIfActive { try lookup(host, port) }
            }
        } catch is DeadlineExceeded {
            throw Refusal(description: "no DNS answer within \(deadline)", unresolved: true)
        }
        guard let first = addresses.first else { throw Refusal(description: "no address", unresolved: true) }
        if allowing.contains(host.lowercased()) { return first }
        guard addresses.allSatisfy(isPublic) else { throw Refusal(description: "not a public address") }
        return first
    }

    /// Threads of their own for `getaddrinfo`, which cannot be cancelled: a host whose DNS never
    /// answers holds one of these until the resolver gives up, never the pool that serves files.
    private static let resolver: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return pool
    }()

    /// Whether `host` is a plain DNS name (letters, digits, `-`, `.`) or an IP address literal,
    /// nothing a URL parser and a resolver could read differently.
    static func isPlainHost(_ host: String) -> Bool {
        guard !host.isEmpty, host.count <= 253 else { return false }
        if (try? SocketAddress(ipAddress: host, port: 0)) != nil { return true }
        return host.unicodeScalars.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == ".")
        }
    }

    /// Every address `host` resolves to (numeric hosts included).
    static func lookup(_ host: String, port: Int) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else { throw Refusal(description: "cannot resolve", unresolved: true) }
        defer { freeaddrinfo(list) }
        var found: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        found.append(SocketAddress($0.pointee, host: host))
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        found.append(SocketAddress($0.pointee, host: host))
                    }
                default: break
                }
            }
            entry = current.pointee.ai_next
        }
        return found
    }

    /// Whether `address` is a public unicast address.
    static func isPublic(_ address: SocketAddress) -> Bool {
        switch address {
        case .v4(let v4):
            return isPublic(v4: withUnsafeBytes(of: v4.address.sin_addr) { Array($0) })
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d): judge the IPv4 inside.
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return isPublic(v4: Array(bytes[12...]))
            }
            if bytes[0..<12] == [0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {
                return isPublic(v4: Array(bytes[12...]))
            }
            // 6to4 (2002::/16) carries an IPv4 address in bytes 2–5: judge it.
            if bytes[0] == 0x20 && bytes[1] == 0x02 { return isPublic(v4: Array(bytes[2..<6])) }
            // 2001::/23: IETF protocol assignments (Teredo, benchmarking, ORCHID).
            if bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] < 0x02 { return false }
            // 3fff::/20, documentation (RFC 9637).
            if bytes[0] == 0x3F && bytes[1] == 0xFF && bytes[2] < 0x10 { return false }
            if bytes.allSatisfy({ $0 == 0 }) || bytes == [UInt8](repeating: 0, count: 15) + [1] { return false }
            if bytes[0] & 0xFE == 0xFC { return false }  // fc00::/7 unique local
            if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return false }  // fe80::/10 link-local
            if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0xC0 { return false }  // fec0::/10 site-local
            if bytes[0] == 0xFF { return false }  // multicast
            // 2001:db8::/32, documentation.
            if bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0D && bytes[3] == 0xB8 { return false }
            return bytes[0] & 0xE0 == 0x20  // 2000::/3, the global unicast space
        case .unixDomainSocket:
            return false
        }
    }

    /// Whether the IPv4 address `b` (four bytes, network order) is public.
    static func isPublic(v4 b: [UInt8]) -> Bool {
        guard b.count == 4 else { return false }
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _), (169, 254), (192, 168): return false
        case (100, 64...127): return false  // shared address space (carrier NAT)
        case (172, 16...31): return false
        case (198, 18...19): return false  // benchmarking
        case (192, 0) where b[2] == 0 || b[2] == 2: return false  // IETF protocol, TEST-NET-1
        case (192, 88) where b[2] == 99: return false  // 6to4 relay anycast
        case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return false  // TEST-NET-2, -3
        case (224...255, _): return false  // multicast, reserved, broadcast
        default: return true
        }
    }
}
