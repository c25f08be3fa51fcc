import Crypto
import Foundation

/// AWS Signature Version 4, written small.
///
/// Paths and query items are given *unencoded*; this type encodes them exactly as AWS wants
/// (RFC 3986 unreserved characters kept, everything else `%XX` upper-case, "/" kept in paths,
/// no double encoding as S3 expects), and callers must send the request using
/// ``canonicalURI(_:)`` and ``canonicalQueryString(_:)`` so that what is signed is what is sent.
public enum SigV4 {
    public static let algorithm = "AWS4-HMAC-SHA256"
    /// SHA-256 of the empty string.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    public struct Credentials: Sendable, Equatable {
        public var accessKeyID: String
        public var secretAccessKey: String
        public init(accessKeyID: String, secretAccessKey: String) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
        }
    }

    /// Everything computed while signing (kept for tests and debugging).
    public struct Signature: Sendable {
        /// The caller's headers plus `x-amz-date`, `x-amz-content-sha256` and `Authorization`.
        public var headers: [(name: String, value: String)]
        public var authorization: String
        public var signature: String
        public var canonicalRequest: String
        public var stringToSign: String
        public var signedHeaders: String
    }

    /// Signs a request for the `Authorization` header.
    ///
    /// - Parameters:
    ///   - host: the Host header value exactly as sent ("host" or "host:port" for a non-default port).
    ///   - path: the unencoded absolute path, e.g. "/bucket/media/a.mp4".
    ///   - query: unencoded query items (order irrelevant).
    ///   - headers: further headers to sign (and send), e.g. Range, Content-Type, x-amz-storage-class.
    ///     A `host` entry here is ignored in favour of `host`.
    ///   - payloadHash: hex SHA-256 of the body, or ``unsignedPayload``.
    public static func sign(
        method: String,
        host: String,
        path: String,
        query: [(String, String)] = [],
        headers: [(String, String)] = [],
        payloadHash: String,
        region: String,
        service: String = "s3",
        credentials: Credentials,
        date: Date
    ) -> Signature {
        let (amzDate, day) = timestamps(date)
        var all: [(String, String)] = [("Host", host)]
        all += headers.filter { $0.0.lowercased() != "host" }
        all.append(("x-amz-date", amzDate))
        all.append(("x-amz-content-sha256", payloadHash))
        let (canonicalHeaders, signedHeaders) = canonicalHeaders(all)
        let canonicalRequest = [
            method.uppercased(),
            canonicalURI(path),
            canonicalQueryString(query),
            canonicalHeaders,
            signedHeaders,
            payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = [algorithm, amzDate, scope, hexSHA256(Array(canonicalRequest.utf8))].joined(separator: "\n")
        let key = signingKey(secret: credentials.secretAccessKey, day: day, region: region, service: service)
        let signature = hex(hmac(key: key, Array(stringToSign.utf8)))
        let authorization =
            "\(algorithm) Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        var out = all.map { (name: $0.0, value: $0.1) }
        out.append((name: "Authorization", value: authorization))
        return Signature(
            headers: out,
            authorization: authorization,
            signature: signature,
            canonicalRequest: canonicalRequest,
            stringToSign: stringToSign,
            signedHeaders: signedHeaders
        )
    }

    /// The result of query-string presigning.
    public struct Presigned: Sendable {
        /// `scheme://host/path?query` with the X-Amz-* items and X-Amz-Signature.
        public var url: URL
        public var signature: String
        public var canonicalRequest: String
        public var stringToSign: String
    }

    /// Query-string authentication (presigned URL). Only `host` is signed; payload is UNSIGNED-PAYLOAD.
    public static func presign(
        method: String = "GET",
        scheme: String = "https",
        host: String,
        path: String,
        query: [(String, String)] = [],
        region: String,
        service: String = "s3",
        credentials: Credentials,
        date: Date,
        expires: Int
    ) -> Presigned {
        let (amzDate, day) = timestamps(date)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        var items = query
        items.append(("X-Amz-Algorithm", algorithm))
        items.append(("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope)"))
        items.append(("X-Amz-Date", amzDate))
        items.append(("X-Amz-Expires", String(expires)))
        items.append(("X-Amz-SignedHeaders", "host"))
        let (canonicalHeaders, signedHeaders) = canonicalHeaders([("host", host)])
        let canonicalQuery = canonicalQueryString(items)
        let canonicalRequest = [
            method.uppercased(),
            canonicalURI(path),
            canonicalQuery,
            canonicalHeaders,
            signedHeaders,
            unsignedPayload,
        ].joined(separator: "\n")
        let stringToSign = [algorithm, amzDate, scope, hexSHA256(Array(canonicalRequest.utf8))].joined(separator: "\n")
        let key = signingKey(secret: credentials.secretAccessKey, day: day, region: region, service: service)
        let signature = hex(hmac(key: key, Array(stringToSign.utf8)))
        let urlString = "\(scheme)://\(host)\(canonicalURI(path))?\(canonicalQuery)&X-Amz-Signature=\(signature)"
        return Presigned(
            url: URL(string: urlString)!,
            signature: signature,
            canonicalRequest: canonicalRequest,
            stringToSign: stringToSign
        )
    }

    // MARK: Pieces

    /// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request")`.
    public static func signingKey(secret: String, day: String, region: String, service: String) -> [UInt8] {
        var key = hmac(key: Array(("AWS4" + secret).utf8), Array(day.utf8))
        key = hmac(key: key, Array(region.utf8))
        key = hmac(key: key, Array(service.utf8))
        return hmac(key: key, Array("aws4_request".utf8))
    }

    /// "/" + each segment URI-encoded, "/" kept. An empty path is "/".
    public static func canonicalURI(_ path: String) -> String {
        if path.isEmpty { return "/" }
        let encoded = path.split(separator: "/", omittingEmptySubsequences: false)
            .map { uriEncode(String($0)) }
            .joined(separator: "/")
        return encoded.hasPrefix("/") ? encoded : "/" + encoded
    }

    /// Names and values encoded, sorted by encoded name then value, joined with "&".
    public static func canonicalQueryString(_ items: [(String, String)]) -> String {
        let encoded: [(name: String, value: String)] = items.map { item in
            (name: uriEncode(item.0), value: uriEncode(item.1))
        }
        let sorted = encoded.sorted { (a, b) -> Bool in
            a.name == b.name ? a.value < b.value : a.name < b.name
        }
        return sorted.map { $0.name + "=" + $0.value }.joined(separator: "&")
    }

    /// Lower-cased names, values trimmed with inner runs of spaces collapsed, sorted by name,
    /// repeated names joined with ","; returns (canonical headers block, signed headers list).
    public static func canonicalHeaders(_ headers: [(String, String)]) -> (String, String) {
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            let trimmed = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            merged[name.lowercased(), default: []].append(trimmed)
        }
        let names = merged.keys.sorted()
        let block = names.map { "\($0):\(merged[$0]!.joined(separator: ","))\n" }.joined()
        return (block, names.joined(separator: ";"))
    }

    /// RFC 3986 encoding as AWS specifies: A-Z a-z 0-9 - . _ ~ kept, everything else %XX (upper hex).
    public static func uriEncode(_ string: String) -> String {
        var out = ""
        out.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(upperHexDigits[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(upperHexDigits[Int(byte & 0x0f)]))
            }
        }
        return out
    }

    /// ("20130524T000000Z", "20130524") in UTC.
    public static func timestamps(_ date: Date) -> (amzDate: String, day: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func pad(_ v: Int?, _ width: Int) -> String {
            let s = String(v ?? 0)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let day = pad(c.year, 4) + pad(c.month, 2) + pad(c.day, 2)
        return (day + "T" + pad(c.hour, 2) + pad(c.minute, 2) + pad(c.second, 2) + "Z", day)
    }

    public static func hexSHA256(_ bytes: [UInt8]) -> String {
        hex(Array(SHA256.hash(data: bytes)))
    }

    static func hmac(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }

    static let upperHexDigits = Array("0123456789ABCDEF".utf8)
    static let lowerHexDigits = Array("0123456789abcdef".utf8)

    public static func hex<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var out = [UInt8]()
        for b in bytes {
            out.append(lowerHexDigits[Int(b >> 4)])
            out.append(lowerHexDigits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
