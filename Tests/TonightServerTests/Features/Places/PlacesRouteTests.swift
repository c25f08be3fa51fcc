import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TonightCore

@testable import TonightServer

@Suite("Geocoding and places")
struct PlacesRouteTests {
    @Test(
        "forward geocoding: names and alternate names, any case or accents, by population", arguments: Backend.available
    )
    func forward(backend: Backend) async throws {
        try await withApp(backend) { _, client in
            let zurich = try await client.send(.get, "/v1/geocode?q=ZURICH")
            #expect(zurich.status == .ok)
            let first = (zurich.json["items"] as? [JSON])?.first ?? [:]
            #expect(first["countryCode"] as? String == "CH")
            #expect(first["timeZone"] as? String == "Europe/Zurich")
            let munich = try await client.send(.get, "/v1/geocode?q=m%C3%BCnchen&country=de")
            #expect(((munich.json["items"] as? [JSON])?.first?["name"] as? String) == "Munich")
            let paris = try await client.send(.get, "/v1/geocode?q=paris&limit=5")
            let populations = (paris.json["items"] as? [JSON] ?? []).compactMap { $0["population"] as? Int }
            #expect(populations.first == populations.max())
            for bad in ["/v1/geocode?q=%20", "/v1/geocode?q=x&country=CHE", "/v1/geocode?q=x&limit=0"] {
                #expect(try await client.send(.get, bad).status == .badRequest, "\(bad)")
            }
        }
    }

    @Test("reverse geocoding: nearest city, keys, time zone; poles, antimeridian, bad coordinates")
    func reverse() async throws {
        try await withApp(.sqlite) { _, client in
            let zurich = try await client.send(.get, "/v1/geocode/reverse?lat=47.3769&lon=8.5417")
            #expect(zurich.status == .ok)
            #expect((zurich.json["key"] as? String)?.hasSuffix("$CH") == true)
            #expect(zurich.json["regionKey"] as? String == "Zurich$CH")
            #expect(zurich.json["timeZone"] as? String == "Europe/Zurich")
            for point in ["90,0", "-90,180", "-16.5,179.999", "-16.5,-179.999", "0,-150"] {
                let parts = point.split(separator: ",")
                let answer = try await client.send(.get, "/v1/geocode/reverse?lat=\(parts[0])&lon=\(parts[1])")
                #expect(answer.status == .ok, "\(point)")
                #expect((answer.json["timeZone"] as? String)?.isEmpty == false)
            }
            let fiji = try await client.send(.get, "/v1/geocode/reverse?lat=-16.8&lon=-179.99")
            #expect(fiji.json["countryCode"] as? String == "FJ")
            for bad in ["lat=91&lon=0", "lat=0&lon=-180.5", "lat=nan&lon=0", "lat=inf&lon=0", "lat=x&lon=0"] {
                let answer = try await client.send(.get, "/v1/geocode/reverse?\(bad)")
                #expect(answer.status == .badRequest, "\(bad)")
            }
            let field = try await client.send(.get, "/v1/geocode/reverse?lat=91&lon=0")
            #expect(field.json.fieldErrors == ["lat"])
        }
    }

    @Test(
        "moderators create and edit places; city, region and zone come from the gazetteer", arguments: Backend.available
    )
    func createAndEdit(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let user = try await client.signUp("paula").accessToken
            let body: JSON = ["name": "Bar", "category": "bar", "location": ["lat": 44.65, "lon": -63.57]]
            #expect(try await client.send(.post, "/v1/places", json: body, token: user).status == .forbidden)
            #expect(try await client.send(.post, "/v1/places", json: body).status == .unauthorized)
            let mod = try await moderatorToken(services, client)
            let place = try await createPlace(client, token: mod, name: "The Dome", lat: 44.6476, lon: -63.5728)
            #expect(place["timeZone"] as? String == "America/Halifax")
            #expect((place["cityKey"] as? String) == "Halifax$Nova Scotia$CA")
            #expect(place["regionKey"] as? String == "Nova Scotia$CA")
            #expect(place["openState"] as? String == "unknown")

            let invalid = try await client.send(
                .post, "/v1/places",
                json: ["name": " ", "category": "bar", "location": ["lat": 95, "lon": 0], "website": "ftp://x"],
                token: mod)
            #expect(invalid.status == .badRequest)
            #expect(Set(invalid.json.fieldErrors) == ["name", "location.lat", "website"])
            #expect(try await rowCount("places", in: services) == 1)

            let id = place["id"] as? String ?? ""
            let moved = try await client.send(
                .patch, "/v1/places/\(id)",
                json: ["location": ["lat": 52.52, "lon": 13.405], "openingHours": "24/7"], token: mod)
            #expect(moved.status == .ok, "\(moved.text)")
            #expect(moved.json["timeZone"] as? String == "Europe/Berlin")
            #expect(moved.json["openState"] as? String == "open")
            #expect(
                try await client.send(.patch, "/v1/places/\(id)", json: ["name": "X"], token: user).status == .forbidden
            )
            #expect(try await client.send(.get, "/v1/places/nope").status == .notFound)
        }
    }

    @Test(
        "near: sorted by distance within the radius; bbox, text, category, open filters, pages",
        arguments: Backend.available)
    func search(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            // Around Halifax: 0 m, ~1.1 km, ~5.6 km away.
            try await createPlace(client, token: mod, name: "Café Centre", lat: 44.6488, lon: -63.5752, hours: "24/7")
            try await createPlace(
                client, token: mod, name: "North Pub", lat: 44.6588, lon: -63.5752, category: "pub", hours: "Mo-Su off")
            try await createPlace(
                client, token: mod, name: "Far Club", lat: 44.6988, lon: -63.5752, category: "nightclub",
                hours: "Mo-Su 20:00-04:00; PH off")
            let near = try await client.send(.get, "/v1/places?near=44.6488,-63.5752&radius=2000")
            let items = near.json["items"] as? [JSON] ?? []
            #expect(items.map { $0["name"] as? String } == ["Café Centre", "North Pub"])
            let distances = items.compactMap { $0["distanceMeters"] as? Double }
            #expect(distances.count == 2 && distances[0] < 1 && abs(distances[1] - 1112) < 5)

            let wide = try await client.send(.get, "/v1/places?near=44.6488,-63.5752&radius=10000&limit=2")
            #expect((wide.json["items"] as? [JSON])?.count == 2)
            let cursor = wide.json["nextCursor"] as? String ?? ""
            let rest = try await client.send(
                .get, "/v1/places?near=44.6488,-63.5752&radius=10000&limit=2&cursor=\(cursor)")
            #expect((rest.json["items"] as? [JSON])?.map { $0["name"] as? String } == ["Far Club"])
            #expect(rest.json["nextCursor"] == nil)

            let text = try await client.send(.get, "/v1/places?q=CAFE")
            #expect((text.json["items"] as? [JSON])?.count == 1)
            let pubs = try await client.send(.get, "/v1/places?category=pub")
            #expect((pubs.json["items"] as? [JSON])?.map { $0["name"] as? String } == ["North Pub"])
            let box = try await client.send(.get, "/v1/places?bbox=-63.6,44.64,-63.5,44.66")
            #expect((box.json["items"] as? [JSON])?.count == 2)
            // Unknown syntax (PH) is never open; "off" is closed; 24/7 is open.
            let open = try await client.send(.get, "/v1/places?openNow=true")
            #expect((open.json["items"] as? [JSON])?.map { $0["name"] as? String } == ["Café Centre"])
            let far = (rest.json["items"] as? [JSON])?.first ?? [:]
            #expect(far["openState"] as? String == "unknown")

            for bad in [
                "near=1", "near=91,0", "radius=0&near=1,1", "bbox=1,2,3", "bbox=0,10,1,5", "cursor=zzz", "limit=101",
            ] {
                #expect(try await client.send(.get, "/v1/places?\(bad)").status == .badRequest, "\(bad)")
            }
        }
    }

    @Test("near queries across the antimeridian and at the poles", arguments: Backend.available)
    func edges(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            try await createPlace(client, token: mod, name: "East", lat: -16.5, lon: 179.9995)
            try await createPlace(client, token: mod, name: "West", lat: -16.5, lon: -179.9995)
            try await createPlace(client, token: mod, name: "Pole A", lat: 89.9995, lon: 0)
            try await createPlace(client, token: mod, name: "Pole B", lat: 89.9995, lon: 180)
            let dateLine = try await client.send(.get, "/v1/places?near=-16.5,180&radius=500")
            #expect(
                Set((dateLine.json["items"] as? [JSON] ?? []).compactMap { $0["name"] as? String }) == ["East", "West"])
            let pole = try await client.send(.get, "/v1/places?near=90,0&radius=500")
            #expect(
                Set((pole.json["items"] as? [JSON] ?? []).compactMap { $0["name"] as? String }) == ["Pole A", "Pole B"])
            let box = try await client.send(.get, "/v1/places?bbox=179,-17,-179,-16")
            #expect((box.json["items"] as? [JSON])?.count == 2)
        }
    }

    @Test("paging through a radius gives exactly the places inside, nearest first", arguments: Backend.available)
    func pagesMatchBruteForce(backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let mod = try await moderatorToken(services, client)
            let center = GeoPoint(latitude: 59.9139, longitude: 10.7522)
            var generator = SystemRandomNumberGenerator()
            var points: [String: GeoPoint] = [:]
            for index in 0..<60 {
                // Dense near the centre, sparse further out (0–5 km).
                let distance = pow(Double.random(in: 0...1, using: &generator), 2) * 5000
                let bearing = Double.random(in: 0..<(2 * .pi), using: &generator)
                let point = GeoPoint(
                    latitude: center.latitude + distance * cos(bearing) / PlaceGrid.metresPerDegree,
                    longitude: center.longitude + distance * sin(bearing)
                        / (PlaceGrid.metresPerDegree * cos(center.latitude * .pi / 180)))
                let place = try await createPlace(
                    client, token: mod, name: "P\(index)", lat: point.latitude, lon: point.longitude)
                points[place["id"] as? String ?? ""] = point
            }
            let expected = points.map { ($0.key, $0.value.distance(to: center)) }.filter { $0.1 <= 4000 }
                .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.map(\.0)
            var seen: [String] = []
            var cursor: String?
            repeat {
                let uri = "/v1/places?near=59.9139,10.7522&radius=4000&limit=7" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await client.send(.get, uri).json
                seen += (page["items"] as? [JSON] ?? []).compactMap { $0["id"] as? String }
                cursor = page["nextCursor"] as? String
            } while cursor != nil
            #expect(seen == expected)
        }
    }
}
