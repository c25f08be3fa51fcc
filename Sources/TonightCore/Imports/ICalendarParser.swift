// One file on purpose (~550 lines): a parser of one format (RFC 5545), line unfolding, property
// parsing and the VEVENT state machine read best together.
import Foundation

/// Reads an iCalendar file (RFC 5545) and emits one ``ImportRecord/event(_:)`` per VEVENT.
///
/// The file is streamed line by line; folded lines (CRLF or LF followed by a space or tab) are unfolded
/// first. Per VEVENT:
/// - `UID` → id, `SUMMARY` → name, `DTSTART` → start; all three are required.
/// - `VALUE=DATE` → an all-day `.local` time; a `Z` time → `.instant`; `TZID=` → `.local` in that zone
///   (IANA ids, a few Windows names, `/vendor/…/Area/City` prefixes); otherwise a floating `.local`.
/// - `DTEND`, or `DURATION` added to the start: weeks and days on the calendar, hours, minutes and seconds
///   as elapsed time (so across a DST change the wall clock moves by more or less).
/// - `STATUS:CANCELLED` → `.cancelled`, anything else `.scheduled`; `URL`, `DESCRIPTION`, `CATEGORIES`.
/// - `LOCATION` → an embedded venue (name before the first comma, street after it, id from the folded
///   text), with `GEO` as its position. No `LOCATION`, no venue.
/// - Recurring events (`RRULE`, `RDATE`) are imported as their first occurrence only. A `RECURRENCE-ID`
///   override becomes an event of its own with id `UID#RECURRENCE-ID`.
/// - VTIMEZONE, VALARM, VTODO and other components are skipped; the first of a repeated property wins.
///
/// A bad VEVENT is rejected at the line of its `BEGIN:VEVENT`. A file that does not start with
/// `BEGIN:VCALENDAR`, has unbalanced `BEGIN`/`END`, or ends inside a component throws
/// ``ImportError/malformed(position:reason:)``.
public struct ICalendarParser: Sendable {
    /// The longest line accepted, after unfolding: 16 MiB.
    public static let maxLineLength = 1 << 24

    private let reader: ChunkedLineReader

    /// Reads the file at `path`.
    public init(path: String) {
        reader = ChunkedLineReader(path: path)
    }

    /// Reads an in-memory file.
    public init(bytes: [UInt8]) {
        reader = ChunkedLineReader(bytes: bytes)
    }

    /// Reads an in-memory file.
    public init(text: String) {
        self.init(bytes: Array(text.utf8))
    }

    /// Calls `handle` with each valid event and `reject` with each invalid one.
    public func parse(_ handle: (ImportRecord) throws -> Void, reject: (ImportReject) throws -> Void) throws {
        var state = CalendarState()
        var logical: [UInt8] = []
        var logicalLine = 0
        try reader.forEachLine { bytes, number in
            guard let first = bytes.first else { return }
            if first == 0x20 || first == 0x09, logicalLine > 0 {
                logical.append(contentsOf: bytes.dropFirst())
                guard logical.count <= ICalendarParser.maxLineLength else {
                    throw ImportError.malformed(
                        position: "line \(logicalLine)",
                        reason: "unfolded line longer than \(ICalendarParser.maxLineLength) bytes")
                }
                return
            }
            if logicalLine > 0 {
                try state.process(logical, line: logicalLine, handle: handle, reject: reject)
            }
            logical = Array(bytes)
            logicalLine = number
        }
        if logicalLine > 0 {
            try state.process(logical, line: logicalLine, handle: handle, reject: reject)
        }
        try state.finish()
    }
}

/// A content line: `NAME;PARAM=value,"quoted":value`. Names are upper-cased; the value is raw (escaped).
private struct ContentLine {
    var name: String
    var parameters: [String: [String]]
    var value: String

    func parameter(_ name: String) -> String? { parameters[name]?.first }

    /// Parses one unfolded line, or nil when it has no name or no `:`.
    static func parse(_ text: String) -> ContentLine? {
        let bytes = Array(text.utf8)
        var index = 0
        func token(until stops: Set<UInt8>) -> String {
            let start = index
            while index < bytes.count, !stops.contains(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        let name = token(until: [0x3B, 0x3A]).uppercased()
        guard !name.isEmpty, name.utf8.allSatisfy(isNameByte) else {
            return nil
        }
        var parameters: [String: [String]] = [:]
        while index < bytes.count, bytes[index] == 0x3B {
            index += 1
            let key = token(until: [0x3D, 0x3A, 0x3B]).uppercased()
            guard index < bytes.count, bytes[index] == 0x3D else { return nil }
            var values: [String] = []
            repeat {
                index += 1
                if index < bytes.count, bytes[index] == 0x22 {
                    index += 1
                    values.append(token(until: [0x22]))
                    guard index < bytes.count else { return nil }
                    index += 1
                } else {
                    values.append(token(until: [0x2C, 0x3B, 0x3A]))
                }
            } while index < bytes.count && bytes[index] == 0x2C
            if parameters[key] == nil { parameters[key] = values }
        }
        guard index < bytes.count, bytes[index] == 0x3A else { return nil }
        let value = String(decoding: bytes[(index + 1)...], as: UTF8.self)
        return ContentLine(name: name, parameters: parameters, value: value)
    }
}

/// Letters, digits and `-`, the bytes of property and parameter names.
private func isNameByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "-"):
        true
    default:
        false
    }
}

/// The component nesting of the file being read and the VEVENT being collected.
private struct CalendarState {
    struct Draft {
        var line: Int
        var depth: Int
        var properties: [String: ContentLine] = [:]
        var categories: [ContentLine] = []
        var problem: String?
    }

    var stack: [(name: String, line: Int)] = []
    var draft: Draft?
    var sawContent = false
    /// Venue ids by LOCATION text: folding is the costliest step and calendars repeat their venues.
    var venueIds: [String: String] = [:]

    mutating func process(
        _ bytes: [UInt8], line: Int, handle: (ImportRecord) throws -> Void, reject: (ImportReject) throws -> Void
    ) throws {
        let valid = ImportText.utf8(bytes[...])
        let text = valid ?? String(decoding: bytes, as: UTF8.self)
        let content = ContentLine.parse(text)
        if !sawContent {
            sawContent = true
            guard let content, content.name == "BEGIN", content.value.uppercased() == "VCALENDAR" else {
                throw ImportError.malformed(
                    position: "line \(line)", reason: "not an iCalendar file: expected BEGIN:VCALENDAR")
            }
        }
        if let content, content.name == "BEGIN" || content.name == "END" {
            let component = ImportText.trim(content.value).uppercased()
            if content.name == "BEGIN" {
                try begin(component, line: line)
            } else {
                try end(component, line: line, handle: handle, reject: reject)
            }
            return
        }
        guard stack.count > 0 else {
            throw ImportError.malformed(position: "line \(line)", reason: "content outside BEGIN:VCALENDAR")
        }
        guard var current = draft, current.depth == stack.count else { return }
        defer { draft = current }
        guard current.problem == nil else { return }
        guard valid != nil else {
            current.problem = "invalid UTF-8 on line \(line)"
            return
        }
        guard let content else {
            current.problem = "malformed content line \(line)"
            return
        }
        if content.name == "CATEGORIES" {
            current.categories.append(content)
        } else if current.properties[content.name] == nil {
            current.properties[content.name] = content
        }
    }

    mutating func finish() throws {
        if let open = stack.last {
            throw ImportError.malformed(
                position: "line \(open.line)", reason: "file ends inside \(open.name) (no END:\(open.name))")
        }
        if !sawContent {
            throw ImportError.malformed(position: "line 1", reason: "empty file: expected BEGIN:VCALENDAR")
        }
    }

    private mutating func begin(_ component: String, line: Int) throws {
        if stack.isEmpty, component != "VCALENDAR" {
            throw ImportError.malformed(position: "line \(line)", reason: "BEGIN:\(component) outside VCALENDAR")
        }
        stack.append((component, line))
        if component == "VEVENT", draft == nil {
            draft = Draft(line: line, depth: stack.count)
        }
    }

    private mutating func end(
        _ component: String, line: Int, handle: (ImportRecord) throws -> Void, reject: (ImportReject) throws -> Void
    ) throws {
        guard let open = stack.last, open.name == component else {
            let what = stack.last.map { "does not close BEGIN:\($0.name) of line \($0.line)" } ?? "without BEGIN"
            throw ImportError.malformed(position: "line \(line)", reason: "END:\(component) \(what)")
        }
        if let finished = draft, finished.depth == stack.count {
            draft = nil
            switch ICalendarEvent.build(finished, venueIds: &venueIds) {
            case .success(let event): try handle(.event(event))
            case .failure(let failure):
                try reject(ImportReject(position: "line \(finished.line)", reason: failure.reason))
            }
        }
        stack.removeLast()
    }
}

/// Builds an ``ImportedEvent`` from a VEVENT's properties.
private enum ICalendarEvent {
    typealias Failure = ICalendarEventFailure

    static func build(
        _ draft: CalendarState.Draft, venueIds: inout [String: String]
    ) -> Result<ImportedEvent, Failure> {
        do {
            return .success(try event(draft, venueIds: &venueIds))
        } catch {
            return .failure(error)
        }
    }

    private static func event(
        _ draft: CalendarState.Draft, venueIds: inout [String: String]
    ) throws(Failure) -> ImportedEvent {
        if let problem = draft.problem { throw Failure(reason: problem) }
        let properties = draft.properties
        guard var id = properties["UID"].flatMap({ ImportText.clean(ICalendarText.unescape($0.value)) }) else {
            throw Failure(reason: "missing UID")
        }
        if let recurrence = ImportText.clean(properties["RECURRENCE-ID"]?.value) {
            id += "#" + recurrence
        }
        guard let name = properties["SUMMARY"].flatMap({ ImportText.clean(ICalendarText.unescape($0.value)) })
        else { throw Failure(reason: "missing SUMMARY") }
        guard let startLine = properties["DTSTART"] else { throw Failure(reason: "missing DTSTART") }
        let start = try ICalendarTime.time(startLine, property: "DTSTART")
        var end: ImportedTime?
        if let endLine = properties["DTEND"] {
            end = try ICalendarTime.time(endLine, property: "DTEND")
        } else if let duration = properties["DURATION"] {
            end = try ICalendarTime.adding(ICalendarTime.duration(duration.value), to: start)
        }
        if let end, ICalendarTime.isBefore(end, start) { throw Failure(reason: "event ends before it starts") }

        var event = ImportedEvent(id: id, name: name, start: start, end: end)
        let status = ImportText.clean(properties["STATUS"]?.value)?.uppercased()
        event.status = status == "CANCELLED" || status == "CANCELED" ? .cancelled : .scheduled
        event.url = ImportText.clean(properties["URL"]?.value)
        event.description = properties["DESCRIPTION"].flatMap { ImportText.clean(ICalendarText.unescape($0.value)) }
        var seen: Set<String> = []
        for line in draft.categories {
            for category in ICalendarText.list(line.value) where seen.insert(category).inserted {
                event.categoryNames.append(category)
            }
        }
        if let location = properties["LOCATION"].flatMap({ ImportText.clean(ICalendarText.unescape($0.value)) }) {
            if venueIds.count > 10_000 { venueIds.removeAll() }
            var venue = ICalendarVenue.venue(location, id: venueIds[location])
            venueIds[location] = venue.id
            if let geo = properties["GEO"] { venue.location = try position(geo.value) }
            event.venue = venue
            event.venueId = venue.id
        }
        return event
    }

    private static func position(_ value: String) throws(Failure) -> GeoPoint {
        let parts = value.split(separator: value.contains(Character(";")) ? ";" : ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let latitude = Double(ImportText.trim(parts[0])),
            let longitude = Double(ImportText.trim(parts[1])),
            GeoPoint.issues(latitude: latitude, longitude: longitude).isEmpty
        else { throw Failure(reason: "bad GEO \"\(value)\": expected latitude;longitude in range") }
        return GeoPoint(latitude: latitude, longitude: longitude)
    }
}

/// The venue embedded from a LOCATION text.
private enum ICalendarVenue {
    /// `"Tempodrom, Möckernstraße 10, Berlin"` → name `Tempodrom`, street `Möckernstraße 10, Berlin`, and an id
    /// from the folded text (`tempodrom-mockernstrasse-10-berlin`), hashed when long.
    static func venue(_ location: String, id knownId: String? = nil) -> ImportedVenue {
        let comma = location.firstIndex(of: ",")
        let head = comma.map { ImportText.trim(location[..<$0]) } ?? location
        let street = comma.flatMap { ImportText.clean(location[location.index(after: $0)...]) }
        return ImportedVenue(id: knownId ?? id(location), name: head.isEmpty ? location : head, street: street)
    }

    /// A stable id for a location text: its folded words joined with `-`; past 64 bytes, a prefix and a hash.
    static func id(_ location: String) -> String {
        let folded = SearchText.fold(location)
        let slug = folded.replacingOccurrences(of: " ", with: "-")
        if slug.isEmpty { return "loc-" + fnv1a(location) }
        if slug.utf8.count <= 64 { return slug }
        return String(slug.prefix(40)) + "-" + fnv1a(folded)
    }

    /// 64-bit FNV-1a of the UTF-8 bytes as 16 hex digits (stable across runs, unlike `Hasher`).
    static func fnv1a(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// iCalendar TEXT values.
private enum ICalendarText {
    /// Undoes `\\`, `\;`, `\,`, `\n` and `\N`; any other escaped character stands for itself.
    static func unescape(_ text: some StringProtocol) -> String {
        guard text.utf8.contains(UInt8(ascii: "\\")) else { return String(text) }
        var out = ""
        var escaped = false
        for character in text {
            if escaped {
                out.append(character == "n" || character == "N" ? "\n" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                out.append(character)
            }
        }
        if escaped { out.append("\\") }
        return out
    }

    /// A comma-separated TEXT list, unescaped, trimmed, without empty items.
    static func list(_ text: String) -> [String] {
        var items: [String] = []
        var current = ""
        var escaped = false
        for character in text {
            if escaped {
                current.append("\\")
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "," {
                items.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        items.append(current)
        return items.compactMap { ImportText.clean(unescape($0)) }
    }
}

/// iCalendar DATE, DATE-TIME and DURATION values.
enum ICalendarTime {
    typealias Failure = ICalendarEventFailure

    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }()

    /// A DTSTART/DTEND-like property as an imported time.
    fileprivate static func time(_ line: ContentLine, property: String) throws(Failure) -> ImportedTime {
        let value = ImportText.trim(line.value)
        let bad = Failure(reason: "bad \(property) \"\(value)\"")
        let bytes = Array(value.utf8)
        guard bytes.count >= 8, let year = number(bytes, 0, 4), let month = number(bytes, 4, 2),
            let day = number(bytes, 6, 2),
            let date = CalendarDate(String(format: "%04d-%02d-%02d", year, month, day))
        else { throw bad }
        if bytes.count == 8 { return .local(date: date, time: nil, timeZone: nil) }
        guard line.parameter("VALUE")?.uppercased() != "DATE" else { throw bad }
        guard bytes.count == 15 || (bytes.count == 16 && bytes[15] == UInt8(ascii: "Z")),
            bytes[8] == UInt8(ascii: "T"), let hour = number(bytes, 9, 2), let minute = number(bytes, 11, 2),
            let second = number(bytes, 13, 2), let time = LocalTime(hour: hour, minute: minute, second: second)
        else { throw bad }
        if bytes.count == 16 { return .instant(instant(date, time, in: .gmt)) }
        guard let tzid = line.parameter("TZID") else { return .local(date: date, time: time, timeZone: nil) }
        guard let zone = zoneIdentifier(tzid) else { throw Failure(reason: "unknown time zone \"\(tzid)\"") }
        return .local(date: date, time: time, timeZone: zone)
    }

    /// An IANA zone id for a TZID: as is, without a `/vendor/version/` prefix, or from a Windows name.
    static func zoneIdentifier(_ tzid: String) -> String? {
        let trimmed = ImportText.trim(tzid)
        if TimeZone(identifier: trimmed) != nil { return trimmed }
        let parts = trimmed.split(separator: "/")
        for count in [3, 2] where parts.count >= count {
            let candidate = parts.suffix(count).joined(separator: "/")
            if TimeZone(identifier: candidate) != nil { return candidate }
        }
        return windowsZones[trimmed]
    }

    /// A DURATION as calendar days and elapsed seconds. Negative durations are refused.
    static func duration(_ text: String) throws(Failure) -> (days: Int, seconds: Int) {
        let bad = Failure(reason: "bad DURATION \"\(text)\"")
        var rest = Substring(ImportText.trim(text).uppercased())
        if rest.first == "+" { rest = rest.dropFirst() }
        guard rest.first == "P" else { throw bad }
        rest = rest.dropFirst()
        var days = 0, seconds = 0, inTime = false, sawUnit = false
        var digits = ""
        for character in rest {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            if character == "T", digits.isEmpty, !inTime {
                inTime = true
                continue
            }
            guard let amount = Int(digits), amount < 1_000_000 else { throw bad }
            digits = ""
            sawUnit = true
            switch (character, inTime) {
            case ("W", false): days += amount * 7
            case ("D", false): days += amount
            case ("H", true): seconds += amount * 3600
            case ("M", true): seconds += amount * 60
            case ("S", true): seconds += amount
            default: throw bad
            }
        }
        guard sawUnit, digits.isEmpty else { throw bad }
        return (days, seconds)
    }

    /// `start` plus a duration: days on the calendar, seconds as elapsed time in the start's zone.
    static func adding(_ duration: (days: Int, seconds: Int), to start: ImportedTime) throws(Failure) -> ImportedTime {
        switch start {
        case .instant(let date):
            return .instant(date.addingTimeInterval(TimeInterval(duration.days * 86_400 + duration.seconds)))
        case .local(let date, nil, let zone):
            guard duration.seconds % 86_400 == 0 else {
                throw Failure(reason: "DURATION with hours, minutes or seconds on an all-day event")
            }
            return .local(
                date: adding(days: duration.days + duration.seconds / 86_400, to: date), time: nil, timeZone: zone)
        case .local(let date, let time?, let zoneId):
            let day = adding(days: duration.days, to: date)
            let zone = zoneId.flatMap(TimeZone.init(identifier:)) ?? .gmt
            let end = instant(day, time, in: zone).addingTimeInterval(TimeInterval(duration.seconds))
            var calendar = utc
            calendar.timeZone = zone
            let parts = calendar.dateComponents([.hour, .minute, .second], from: end)
            let endTime = LocalTime(hour: parts.hour ?? 0, minute: parts.minute ?? 0, second: parts.second ?? 0)
            return .local(date: CalendarDate(date: end, timeZone: zone), time: endTime, timeZone: zoneId)
        }
    }

    /// True when both times are comparable and `end` is earlier than `start`.
    static func isBefore(_ end: ImportedTime, _ start: ImportedTime) -> Bool {
        switch (end, start) {
        case (.instant(let e), .instant(let s)):
            return e < s
        case (.local(let ed, let et, let ez), .local(let sd, let st, let sz)) where ez == sz:
            return (ed, et?.secondsSinceMidnight ?? 0) < (sd, st?.secondsSinceMidnight ?? 0)
        default:
            return false
        }
    }

    static func adding(days: Int, to date: CalendarDate) -> CalendarDate {
        guard days != 0 else { return date }
        let moved = instant(date, LocalTime(hour: 12, minute: 0)!, in: .gmt).addingTimeInterval(
            TimeInterval(days * 86_400))
        return CalendarDate(date: moved)
    }

    /// The instant of a wall-clock time in `zone`.
    static func instant(_ date: CalendarDate, _ time: LocalTime, in zone: TimeZone) -> Date {
        var calendar = utc
        calendar.timeZone = zone
        let parts = DateComponents(
            year: date.year, month: date.month, day: date.day, hour: time.hour, minute: time.minute,
            second: time.second)
        return calendar.date(from: parts) ?? Date(timeIntervalSince1970: 0)
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[start..<(start + count)] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Common Windows zone names (Outlook, Exchange) and their IANA equivalents (CLDR windowsZones, region 001).
    static let windowsZones: [String: String] = [
        "Dateline Standard Time": "Etc/GMT+12",
        "Hawaiian Standard Time": "Pacific/Honolulu",
        "Alaskan Standard Time": "America/Anchorage",
        "Pacific Standard Time": "America/Los_Angeles",
        "US Mountain Standard Time": "America/Phoenix",
        "Mountain Standard Time": "America/Denver",
        "Central Standard Time": "America/Chicago",
        "Central Standard Time (Mexico)": "America/Mexico_City",
        "Canada Central Standard Time": "America/Regina",
        "Eastern Standard Time": "America/New_York",
        "US Eastern Standard Time": "America/Indianapolis",
        "SA Pacific Standard Time": "America/Bogota",
        "Atlantic Standard Time": "America/Halifax",
        "Newfoundland Standard Time": "America/St_Johns",
        "E. South America Standard Time": "America/Sao_Paulo",
        "Argentina Standard Time": "America/Buenos_Aires",
        "UTC": "Etc/UTC",
        "GMT Standard Time": "Europe/London",
        "Greenwich Standard Time": "Atlantic/Reykjavik",
        "W. Europe Standard Time": "Europe/Berlin",
        "Central Europe Standard Time": "Europe/Budapest",
        "Romance Standard Time": "Europe/Paris",
        "Central European Standard Time": "Europe/Warsaw",
        "E. Europe Standard Time": "Europe/Chisinau",
        "FLE Standard Time": "Europe/Kiev",
        "GTB Standard Time": "Europe/Bucharest",
        "Turkey Standard Time": "Europe/Istanbul",
        "Israel Standard Time": "Asia/Jerusalem",
        "Egypt Standard Time": "Africa/Cairo",
        "South Africa Standard Time": "Africa/Johannesburg",
        "Russian Standard Time": "Europe/Moscow",
        "Arabian Standard Time": "Asia/Dubai",
        "India Standard Time": "Asia/Calcutta",
        "SE Asia Standard Time": "Asia/Bangkok",
        "China Standard Time": "Asia/Shanghai",
        "Singapore Standard Time": "Asia/Singapore",
        "Tokyo Standard Time": "Asia/Tokyo",
        "Korea Standard Time": "Asia/Seoul",
        "W. Australia Standard Time": "Australia/Perth",
        "Cen. Australia Standard Time": "Australia/Adelaide",
        "AUS Central Standard Time": "Australia/Darwin",
        "E. Australia Standard Time": "Australia/Brisbane",
        "AUS Eastern Standard Time": "Australia/Sydney",
        "New Zealand Standard Time": "Pacific/Auckland",
    ]
}

/// Why a VEVENT was rejected.
struct ICalendarEventFailure: Error {
    let reason: String
}
