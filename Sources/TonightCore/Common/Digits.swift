/// Zero-padded decimal numbers without `String(format:)` (which goes through Foundation and shows
/// up in import profiles).
enum Digits {
    /// `value` with at least `width` digits, zero-padded (`padded(7, 2) == "07"`).
    static func padded(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
