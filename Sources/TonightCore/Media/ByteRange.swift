/// The one byte range a `Range` request header asks of a file (RFC 9110 §14), or why it cannot
/// be served.
public enum ByteRange: Equatable, Sendable {
    /// Serve bytes `lower...upper` (inclusive) with 206.
    case partial(lower: Int, upper: Int)
    /// Serve the whole file with 200: no header, an unknown unit, unparsable syntax or several
    /// ranges (which a server may ignore).
    case whole
    /// 416: no requested byte exists.
    case unsatisfiable

    /// Reads `header` (e.g. `bytes=0-499`, `bytes=500-`, `bytes=-500`) for a file of `size` bytes.
    /// An end past the file is clamped; a suffix longer than the file means the whole file.
    public static func parse(_ header: String?, size: Int) -> ByteRange {
        guard let header else { return .whole }
        let trimmed = header.trimmingWhitespace()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = trimmed.dropFirst(6).trimmingWhitespace()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash].trimmingWhitespace()
        let last = spec[spec.index(after: dash)...].trimmingWhitespace()
        func number(_ text: String) -> Int? {
            guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                return nil
            }
            return Int(text)
        }
        if first.isEmpty {
            // Suffix: the last N bytes.
            guard let count = number(last) else { return .whole }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .partial(lower: max(0, size - count), upper: size - 1)
        }
        guard let lower = number(first) else { return .whole }
        var upper = size - 1
        if !last.isEmpty {
            guard let end = number(last) else { return .whole }
            guard end >= lower else { return .whole }
            upper = min(end, size - 1)
        }
        guard lower < size else { return .unsatisfiable }
        return .partial(lower: lower, upper: upper)
    }
}

extension StringProtocol {
    fileprivate func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while scalars.first == " " || scalars.first == "\t" { scalars = scalars.dropFirst() }
        while scalars.last == " " || scalars.last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
