import SQLKit

/// Keyset conditions for lists ordered by `(number, id)`: the rows after (ascending lists) or
/// before (newest-first lists) a cursor position.
enum Keyset {
    /// Rows after `position` in ascending `(number, id)` order.
    static func after(_ position: (Int64, String), _ number: String, _ id: String) -> SQLQueryString {
        "(\(unsafeRaw: number) > \(bind: position.0) OR (\(unsafeRaw: number) = \(bind: position.0) AND \(unsafeRaw: id) > \(bind: position.1)))"
    }

    /// Rows before `position` in descending `(number, id)` order.
    static func before(_ position: (Int64, String), _ number: String, _ id: String) -> SQLQueryString {
        "(\(unsafeRaw: number) < \(bind: position.0) OR (\(unsafeRaw: number) = \(bind: position.0) AND \(unsafeRaw: id) < \(bind: position.1)))"
    }
}
