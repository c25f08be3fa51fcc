/// Cities added to the bundled gazetteer (`tonight import geonames`) and places (venues).
///
/// `places.cell` is a 0.02° latitude × 0.02° longitude grid cell (`PlaceGrid`), indexed so a
/// radius query reads a handful of index ranges on either database without a geo extension.
struct CreatePlaces: Migration {
    let name = "0005_create_places"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE cities (
                geoname_id BIGINT PRIMARY KEY,
                name TEXT NOT NULL,
                ascii_name TEXT NOT NULL,
                alternate_names TEXT NOT NULL,
                country_code TEXT NOT NULL,
                admin1_code TEXT NOT NULL,
                latitude DOUBLE PRECISION NOT NULL,
                longitude DOUBLE PRECISION NOT NULL,
                population BIGINT NOT NULL,
                time_zone TEXT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE places (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                name_folded TEXT NOT NULL,
                category TEXT NOT NULL,
                latitude DOUBLE PRECISION NOT NULL,
                longitude DOUBLE PRECISION NOT NULL,
                cell BIGINT NOT NULL,
                street TEXT,
                postal_code TEXT,
                city TEXT,
                region TEXT,
                country TEXT,
                city_key TEXT,
                region_key TEXT,
                time_zone TEXT NOT NULL,
                opening_hours TEXT,
                image_url TEXT,
                website TEXT,
                source TEXT,
                source_id TEXT,
                created_by TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX places_cell ON places(cell)",
            "CREATE INDEX places_latitude ON places(latitude)",
            "CREATE INDEX places_city_key ON places(city_key)",
            "CREATE INDEX places_name ON places(name_folded)",
            "CREATE UNIQUE INDEX places_source ON places(source, source_id)",
        ]
    }
}
