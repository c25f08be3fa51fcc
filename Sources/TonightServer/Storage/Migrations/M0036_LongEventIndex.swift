/// Events lasting more than a day (festivals, exhibitions), by end: an event search reads those
/// still running at the start of its window from here, and the rest by start from at most a day
/// before the window (``EventRepository/WindowPart``). Before, "or running at `from`" left SQLite
/// only `start_at < to` to bound `events_start`, so every search read the whole history: 1.2 s
/// for a page with a million past events, 0.14 ms bounded (measured with the `sqlite3` module).
///
/// The condition is written as the searches write it (a literal), so both databases see that it
/// serves them.
struct LongEventIndex: Migration {
    let name = "0036_long_event_index"
    /// "More than a day", in milliseconds.
    static let longer: Int64 = 86_400_000

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE INDEX events_long ON events(end_at) \
            WHERE end_at - start_at > \(Self.longer)
            """
        ]
    }
}
