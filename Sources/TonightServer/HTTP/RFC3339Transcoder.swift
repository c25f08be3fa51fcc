import Foundation
import OpenAPIRuntime
import TonightCore

/// Writes dates exactly as the OpenAPI runtime's ``ISO8601DateTranscoder`` does
/// (`2026-11-23T21:30:00Z`, whole seconds, UTC), without its formatter: that one is shared behind a
/// lock by every request and costs a few microseconds a date, which a page of twenty places with
/// two dates each felt. Dates before 1583 (where the formatter switches to the Julian calendar) or
/// after 9999, and all decoding, go to the runtime's transcoder.
struct RFC3339Transcoder: DateTranscoder {
    private let standard = ISO8601DateTranscoder()

    /// Seconds from 1970 of 1583-01-01T00:00:00Z and of 9999-12-31T23:59:59Z.
    private static let range: ClosedRange<Int64> = -12_212_553_600...253_402_300_799

    func encode(_ date: Date) throws -> String {
        // The formatter rounds to the millisecond, then drops the milliseconds; the same here. A
        // half millisecond goes to the even one (away from zero, a date before 1970 half a
        // millisecond before a second lost that second).
        let millis = (date.timeIntervalSince1970 * 1000).rounded(.toNearestOrEven)
        guard let whole = Int64(exactly: (millis / 1000).rounded(.down)), Self.range.contains(whole) else {
            return try standard.encode(date)
        }
        return Self.text(secondsSince1970: whole)
    }

    func decode(_ text: String) throws -> Date {
        try standard.decode(text)
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` of a second in ``range``.
    static func text(secondsSince1970 seconds: Int64) -> String {
        var days = seconds / 86_400
        var second = seconds % 86_400
        if second < 0 {
            second += 86_400
            days -= 1
        }
        let date = CalendarDate(daysSinceEpoch: Int(days))
        return String(unsafeUninitializedCapacity: 20) { buffer in
            var index = 0
            func put(_ value: Int, width: Int, then separator: Unicode.Scalar) {
                var rest = value
                for position in stride(from: width - 1, through: 0, by: -1) {
                    buffer[index + position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                buffer[index + width] = UInt8(ascii: separator)
                index += width + 1
            }
            put(date.year, width: 4, then: "-")
            put(date.month, width: 2, then: "-")
            put(date.day, width: 2, then: "T")
            put(Int(second / 3600), width: 2, then: ":")
            put(Int(second / 60 % 60), width: 2, then: ":")
            put(Int(second % 60), width: 2, then: "Z")
            return index
        }
    }
}
