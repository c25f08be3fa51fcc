/// A fingerprint of the values an import wrote into each row it owns (``ImportFingerprint``), so a
/// feed imported again skips the records it did not change without reading their rows back.
/// Rows written before it (or by hand) have none and are compared column by column once.
struct ImportFingerprints: Migration {
    let name = "0030_import_fingerprints"

    func statements(for kind: DatabaseKind) -> [String] {
        ["events", "artists", "places"].map { "ALTER TABLE \($0) ADD COLUMN import_hash BIGINT" }
    }
}
