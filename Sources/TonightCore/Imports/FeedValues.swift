import Foundation

/// Byte-level value checks shared by the XML import parsers (feed, OpenStreetMap).
enum FeedValues {
    @inline(__always)
    static func isASCIISpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    @inline(__always)
    static func isASCIILetter(_ b: UInt8) -> Bool { (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) }

    @inline(__always)
    static func isDigit(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) }

    /// `text` without leading and trailing ASCII whitespace (the same string when there is none).
    static func trimmed(_ text: String) -> String {
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last, isASCIISpace(first) || isASCIISpace(last) else {
            return text
        }
        guard let start = utf8.firstIndex(where: { !isASCIISpace($0) }) else { return "" }
        let end = utf8.lastIndex(where: { !isASCIISpace($0) })!
        return String(text[start...end])
    }

    /// A value for a message: quoted, at most 60 characters.
    static func quoted(_ text: String) -> String {
        text.count > 60 ? "\"\(text.prefix(60))…\"" : "\"\(text)\""
    }

    /// Whether `text` is an absolute `http` or `https` URL with a host and no spaces or control characters.
    static func isWebURL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { b in
            guard b.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else { return false }
            let lower = { (k: Int) in k < b.count ? b[k] | 0x20 : 0 }  // ASCII letters to lower case
            guard lower(0) == 0x68, lower(1) == 0x74, lower(2) == 0x74, lower(3) == 0x70 else { return false }  // http
            var k = lower(4) == 0x73 ? 5 : 4  // s
            guard k + 3 <= b.count, b[k] == 0x3A, b[k + 1] == 0x2F, b[k + 2] == 0x2F else { return false }  // ://
            k += 3
            var hostStart = k
            while k < b.count && b[k] != 0x2F && b[k] != 0x3F && b[k] != 0x23 {
                if b[k] == 0x40 { hostStart = k + 1 }  // after user@
                k += 1
            }
            return k > hostStart && b[hostStart] != 0x3A
        }
    }

    /// A plain decimal number (`-12.5`, `34`; no exponent, no hex, no `nan`).
    static func decimalDouble(_ text: String) -> Double? {
        var digits = 0, dots = 0
        for (k, b) in text.utf8.enumerated() {
            if isDigit(b) {
                digits += 1
            } else if b == 0x2E {
                dots += 1
            } else if !((b == 0x2D || b == 0x2B) && k == 0) {
                return nil
            }
        }
        guard digits > 0, dots <= 1, digits <= 30 else { return nil }
        return Double(text)
    }

    /// An unsigned decimal amount (`45`, `125.50`), at most 18 significant digits.
    static func decimal(_ text: String) -> Decimal? {
        var significand: UInt64 = 0, digits = 0, fraction = 0, dot = false
        for b in text.utf8 {
            if isDigit(b) {
                digits += 1
                if dot { fraction += 1 }
                significand = significand &* 10 &+ UInt64(b - 0x30)
            } else if b == 0x2E && !dot {
                dot = true
            } else {
                return nil
            }
        }
        guard digits > 0, digits <= 18, !(dot && fraction == 0), text.utf8.first != 0x2E else { return nil }
        return Decimal(sign: .plus, exponent: -fraction, significand: Decimal(significand))
    }

    /// An RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` (`t`, `z` and a space also accepted).
    static func rfc3339(_ text: String) -> Date? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var n = 0
            for k in from..<(from + count) {
                guard isDigit(b[k]) else { return nil }
                n = n * 10 + Int(b[k] - 0x30)
            }
            return n
        }
        guard b[4] == 0x2D, b[7] == 0x2D, [0x54, 0x74, 0x20].contains(b[10]), b[13] == 0x3A, b[16] == 0x3A,
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var k = 19
        var fraction = 0.0
        if b[k] == 0x2E {
            k += 1
            var scale = 0.1
            let start = k
            while k < b.count && isDigit(b[k]) {
                fraction += Double(b[k] - 0x30) * scale
                scale /= 10
                k += 1
            }
            guard k > start, k - start <= 9 else { return nil }
        }
        var offset = 0
        guard k < b.count else { return nil }
        if b[k] == 0x5A || b[k] == 0x7A {
            k += 1
        } else if b[k] == 0x2B || b[k] == 0x2D {
            guard b.count == k + 6, b[k + 3] == 0x3A, let oh = number(k + 1, 2), let om = number(k + 4, 2),
                oh <= 23, om <= 59
            else { return nil }
            offset = (oh * 3600 + om * 60) * (b[k] == 0x2D ? -1 : 1)
            k += 6
        } else {
            return nil
        }
        guard k == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
