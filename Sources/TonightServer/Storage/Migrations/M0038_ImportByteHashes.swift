/// The ``ByteHash`` of the bytes an imported event, artist or venue had in its file
/// (`import_raw_hash`), next to the fingerprint of its values (migration 0030): a refresh passes a
/// record whose bytes are the same without parsing it (``ImportWriter``). Rows without one are
/// parsed and compared by fingerprint as before, and get theirs then.
struct ImportByteHashes: Migration {
    let name = "0038_import_byte_hashes"

    func statements(for kind: DatabaseKind) -> [String] {
        ["events", "artists", "places"].map { "ALTER TABLE \($0) ADD COLUMN import_raw_hash BIGINT" }
    }
}
