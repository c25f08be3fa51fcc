import Foundation

/// Opaque, time-ordered identifiers (UUIDv7, RFC 9562), lower-case.
public enum Identifier {
    /// A new UUIDv7: 48 bits of Unix milliseconds, then random bits, so ids sort by creation time.
    public static func make(now: Date = Date()) -> String {
        // Two draws of eight bytes (one system call each; a draw per byte made sixteen).
        var generator = SystemRandomNumberGenerator()
        var bytes = withUnsafeBytes(of: (generator.next() as UInt64, generator.next() as UInt64)) { Array($0) }
        let millis = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        for index in 0..<6 { bytes[index] = UInt8((millis >> (40 - 8 * UInt64(index))) & 0xff) }
        bytes[6] = (bytes[6] & 0x0f) | 0x70
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
