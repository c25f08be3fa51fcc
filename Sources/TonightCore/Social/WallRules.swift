import Foundation

/// Rules of the event wall and of matching (Pala), kept apart from storage.
public enum WallRules {
    /// A gender preference as stored for the wall's SQL filter: `|female|male|`, sorted; empty
    /// means everyone.
    public static func gendersKey(_ genders: [String]) -> String {
        let unique = Set(genders.filter { !$0.isEmpty && !$0.contains("|") })
        return unique.isEmpty ? "" : "|" + unique.sorted().joined(separator: "|") + "|"
    }

    /// Whether someone whose wall preference is `key` (see ``gendersKey(_:)``) wants to meet a
    /// person of `gender`. People with no gender set only fit preferences that are open to everyone.
    public static func accepts(_ key: String, gender: String?) -> Bool {
        key.isEmpty || gender.map { key.contains("|\($0)|") } == true
    }

    /// The latest birth date (`YYYY-MM-DD`) of someone who is 18 on `today`: walls are for adults,
    /// and someone without a birth date counts as one.
    public static func adultBirthDateCutoff(today: CalendarDate) -> String {
        let day = today.month == 2 && today.day == 29 ? 28 : today.day
        return CalendarDate(year: today.year - 18, month: today.month, day: day)?.description ?? ""
    }

    /// Whether a birth date (`YYYY-MM-DD`, or nil when unknown) lets its owner use walls on `today`.
    public static func isAdult(birthDate: String?, today: CalendarDate) -> Bool {
        guard let birthDate else { return true }
        return birthDate <= adultBirthDateCutoff(today: today)
    }

    /// The two users of a pair in the order matches store them, so a pair has one spelling.
    public static func pair(_ a: String, _ b: String) -> (first: String, second: String) {
        a < b ? (a, b) : (b, a)
    }
}
