/// Zero-padded decimal numbers without `String(format:)` (which goes through Foundation and shows
/// up in import profiles).
enum Digits {
    /// `value` with at least `width` digits, zero-padded (`padded(7, 2) == "07"`).
    static func padded(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// Whether an ASCII byte is `0-9`, `A-Z` or `a-z`.
    static func isBase62(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}
