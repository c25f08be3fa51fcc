/// Radius queries leave session spots out (`source <> 'spot'`), so the geo index carries `source`
/// too: without it every place in the scanned cells cost a table lookup, which made nearby pages
/// over a million places several times slower than reading the index alone.
struct PlaceGeoIndexSource: Migration {
    let name = "0026_place_geo_index_source"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            "DROP INDEX places_cell_geo",
            "CREATE INDEX places_cell_geo ON places(cell, latitude, longitude, source, id)",
        ]
    }
}
