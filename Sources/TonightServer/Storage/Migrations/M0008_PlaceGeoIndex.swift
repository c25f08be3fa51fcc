/// Radius queries read only the index: `(cell, latitude, longitude, id)` answers "which places are
/// near, and exactly where" without touching the table; full rows are read for one page.
struct PlaceGeoIndex: Migration {
    let name = "0008_place_geo_index"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            "DROP INDEX places_cell",
            "CREATE INDEX places_cell_geo ON places(cell, latitude, longitude, id)",
        ]
    }
}
