import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The proxies whose `X-Forwarded-For` the server believes (`HTTP_TRUSTED_PROXIES`: addresses and
/// CIDR ranges, IPv4 or IPv6, comma-separated).
///
/// A request's client is its TCP peer, unless the peer is a trusted proxy: then it is the
/// right-most `X-Forwarded-For` entry that is not a trusted proxy (each proxy appends the address
/// it was reached from, so entries left of that were written by the client and are ignored). When
/// every entry is a trusted proxy the left-most one is the client; an entry that is not an address
/// ends the walk at the hop right of it. A request from a peer that is not trusted has its header
/// ignored, so a client reaching the server directly cannot pick its own address.
struct TrustedProxies: Sendable, Equatable {
    /// A range of addresses: the first `prefix` bits of `bytes` (4 bytes for IPv4, 16 for IPv6).
    struct Range: Sendable, Equatable {
        let bytes: [UInt8]
        let prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var bits = prefix
            for (a, b) in zip(address, bytes) {
                guard bits > 0 else { return true }
                let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                if a & mask != b & mask { return false }
                bits -= 8
            }
            return true
        }
    }

    let ranges: [Range]

    /// No trusted proxy: every client is its peer.
    static let none = TrustedProxies(ranges: [])

    /// Loopback and private networks (what `HTTP_TRUST_PROXY=true` meant before the list existed).
    static let privateNetworks = try! TrustedProxies(
        parsing: "127.0.0.0/8, ::1, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7")

    init(ranges: [Range]) { self.ranges = ranges }

    /// Parses `a.b.c.d`, `a.b.c.d/n`, `x::y` and `x::/n` entries; throws on anything else.
    init(parsing list: String) throws {
        var ranges: [Range] = []
        for entry in list.split(separator: ",") {
            let text = entry.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { continue }
            let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
            guard let bytes = Self.parse(parts[0]) else {
                throw ConfigurationError("HTTP_TRUSTED_PROXIES: \(text) is not an address or CIDR range")
            }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...bytes.count * 8).contains(prefix) else {
                throw ConfigurationError("HTTP_TRUSTED_PROXIES: \(text) has a bad prefix length")
            }
            ranges.append(Range(bytes: bytes, prefix: prefix))
        }
        self.ranges = ranges
    }

    var isEmpty: Bool { ranges.isEmpty }

    /// Whether `address` is a trusted proxy.
    func contains(_ address: String) -> Bool {
        guard !ranges.isEmpty, let bytes = Self.parse(address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The client of a request that came from `peer` with `forwardedFor` (see the type).
    func client(peer: String, forwardedFor: String?) -> String {
        guard let forwardedFor, contains(peer) else { return peer }
        var client = peer
        for entry in forwardedFor.split(separator: ",").reversed() {
            let hop = entry.trimmingCharacters(in: .whitespaces)
            guard Self.parse(hop) != nil else { break }
            client = hop
            if !contains(hop) { break }
        }
        return client
    }

    /// The bytes of an IPv4 or IPv6 address (IPv4-mapped IPv6 as IPv4), or nil.
    static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return Array(bytes.suffix(4))
        }
        return bytes
    }
}
