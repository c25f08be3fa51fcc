import Foundation

/// One entry of an iCalendar feed.
public struct CalendarEntry: Sendable, Equatable {
    public var uid: String
    public var summary: String
    public var start: Date
    public var end: Date?
    public var location: String?
    public var geo: GeoPoint?
    public var description: String?
    public var url: String?
    public var cancelled: Bool
    public var updated: Date

    public init(
        uid: String, summary: String, start: Date, end: Date?, location: String?, geo: GeoPoint?,
        description: String?, url: String?, cancelled: Bool, updated: Date
    ) {
        self.uid = uid
        self.summary = summary
        self.start = start
        self.end = end
        self.location = location
        self.geo = geo
        self.description = description
        self.url = url
        self.cancelled = cancelled
        self.updated = updated
    }
}

/// Writes an iCalendar (RFC 5545) document: CRLF line ends, text escaped, lines folded at 75
/// octets without splitting a UTF-8 character, times in UTC (`…Z`) so no VTIMEZONE is needed.
public enum ICalendarWriter {
    public static func document(name: String, entries: [CalendarEntry], now: Date) -> String {
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Tonight//Calendar//EN", "CALSCALE:GREGORIAN",
            "METHOD:PUBLISH", "X-WR-CALNAME:" + escape(name), "REFRESH-INTERVAL;VALUE=DURATION:PT1H",
        ]
        for entry in entries {
            lines += ["BEGIN:VEVENT", "UID:" + escape(entry.uid), "DTSTAMP:" + stamp(now)]
            lines.append("DTSTART:" + stamp(entry.start))
            if let end = entry.end { lines.append("DTEND:" + stamp(end)) }
            lines.append("SUMMARY:" + escape(entry.summary))
            if let location = entry.location { lines.append("LOCATION:" + escape(location)) }
            if let geo = entry.geo {
                lines.append(String(format: "GEO:%.6f;%.6f", geo.latitude, geo.longitude))
            }
            if let description = entry.description { lines.append("DESCRIPTION:" + escape(description)) }
            if let url = entry.url { lines.append("URL:" + url) }
            lines.append("STATUS:" + (entry.cancelled ? "CANCELLED" : "CONFIRMED"))
            lines.append("LAST-MODIFIED:" + stamp(entry.updated))
            lines.append("END:VEVENT")
        }
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    /// `YYYYMMDDTHHMMSSZ`.
    static func stamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
            c.second ?? 0)
    }

    /// TEXT escaping: backslash, semicolon, comma and newlines; other control characters dropped.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n": out += "\\n"
            case "\r": continue
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Splits a line into 75-octet pieces, continuation lines starting with a space.
    static func fold(_ line: String) -> String {
        var pieces: [String] = []
        var current = ""
        var octets = 0
        for character in line {
            let size = String(character).utf8.count
            let limit = pieces.isEmpty ? 75 : 74
            if octets + size > limit {
                pieces.append(current)
                current = ""
                octets = 0
            }
            current.append(character)
            octets += size
        }
        pieces.append(current)
        return pieces.joined(separator: "\r\n ")
    }
}
