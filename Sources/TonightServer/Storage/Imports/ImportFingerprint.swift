/// A 64-bit fingerprint (FNV-1a) of the values an import writes into a row: the same values give
/// the same fingerprint in every process and version, so a refresh compares one stored number
/// instead of reading and decoding the row. Not a security measure: a collision (one in 2⁶⁴ per
/// row) would leave one changed record unapplied until its next change.
enum ImportFingerprint {
    /// The fingerprint of `values`, then `extra` (an event's performers), each typed and separated.
    static func of(_ values: [SQLValue], _ extra: [String] = []) -> Int64 {
        var hash = FNV()
        for value in values {
            switch value {
            case .null: hash.add(tag: 0)
            case .integer(let number):
                hash.add(tag: 1)
                hash.add(UInt64(bitPattern: number))
            case .real(let number):
                hash.add(tag: 2)
                hash.add(number.bitPattern)
            case .text(let text):
                hash.add(tag: 3)
                hash.add(text)
            }
        }
        for text in extra {
            hash.add(tag: 4)
            hash.add(text)
        }
        return Int64(bitPattern: hash.value)
    }

    private struct FNV {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func add(tag: UInt8) { add(byte: tag) }

        mutating func add(byte: UInt8) {
            value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
        }

        mutating func add(_ number: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) {
                add(byte: UInt8(truncatingIfNeeded: number >> UInt64(shift)))
            }
        }

        mutating func add(_ text: String) {
            var text = text
            text.withUTF8 { for byte in $0 { add(byte: byte) } }
            add(UInt64(text.utf8.count))
        }
    }
}
