/// Fewer indexes to write on import. Imported rows are keyed `source:id`, so the primary key already
/// makes `(source, source_id)` unique; the organiser index only needs rows that have an organiser;
/// search as you type moved into memory (`ArtistSuggester`), so `artist_words` is gone.
struct LeanImportIndexes: Migration {
    let name = "0010_lean_import_indexes"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            "DROP INDEX places_source",
            "DROP INDEX categories_source",
            "DROP INDEX artists_source",
            "DROP INDEX events_source",
            "DROP INDEX events_organizer",
            "CREATE INDEX events_organizer ON events(organizer_id) WHERE organizer_id IS NOT NULL",
            "DROP TABLE artist_words",
        ]
    }
}
