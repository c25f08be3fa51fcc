import Foundation
import Testing
import TonightCore

private func parseOSM(_ body: String, chunkSize: Int = XMLPullParser.defaultChunkSize) throws -> (
    venues: [ImportedVenue], rejects: [ImportReject]
) {
    var venues: [ImportedVenue] = []
    var rejects: [ImportReject] = []
    let xml = "<?xml version='1.0' encoding='UTF-8'?>\n<osm version=\"0.6\" generator=\"test\">\n\(body)\n</osm>\n"
    try OSMParser(bytes: Array(xml.utf8), chunkSize: chunkSize).parse(
        { record in
            if case .venue(let venue) = record { venues.append(venue) } else { Issue.record("not a venue: \(record)") }
        }, reject: { rejects.append($0) })
    return (venues, rejects)
}

private func tags(_ pairs: KeyValuePairs<String, String>) -> String {
    pairs.map { "<tag k=\"\($0.key)\" v=\"\($0.value)\"/>" }.joined()
}

@Suite("OpenStreetMap parser")
struct OSMParserTests {
    @Test("a tagged node becomes a venue with address, hours and links")
    func node() throws {
        let (venues, rejects) = try parseOSM(
            """
            <bounds minlat="51.5" minlon="-0.2" maxlat="51.6" maxlon="-0.1"/>
            <node id="123" lat="51.5131" lon="-0.1246" version="3" user="x">
              \(tags(["amenity": "pub", "name": "The Lamb &amp; Flag", "addr:housenumber": "33",
                "addr:street": "Rose Street", "addr:city": "London", "addr:postcode": "WC2E 9EB",
                "addr:country": "gb", "addr:state": "England", "opening_hours": "Mo-Sa 11:00-23:00; Su 12:00-22:30",
                "website": "https://lambandflag.example", "image": "https://img.example/lamb.jpg", "source": "survey"]))
            </node>
            <node id="124" lat="51.5" lon="-0.1"/>
            <node id="125" lat="51.5" lon="-0.1"><tag k="highway" v="bus_stop"/><tag k="name" v="Stop"/></node>
            """)
        #expect(rejects.isEmpty)
        #expect(
            venues == [
                ImportedVenue(
                    id: "node/123", name: "The Lamb & Flag", category: "pub", street: "33 Rose Street", city: "London",
                    state: "England", postalCode: "WC2E 9EB", country: "GB",
                    location: GeoPoint(latitude: 51.5131, longitude: -0.1246),
                    openingHours: "Mo-Sa 11:00-23:00; Su 12:00-22:30", imageURL: "https://img.example/lamb.jpg",
                    url: "https://lambandflag.example")
            ])
    }

    @Test("url falls back to contact:website then url; bad links and countries are dropped")
    func links() throws {
        let (venues, _) = try parseOSM(
            """
            <node id="1" lat="1" lon="1">\(tags(["amenity": "bar", "name": "A",
                "contact:website": "http://a.example", "url": "https://u.example"]))</node>
            <node id="2" lat="1" lon="1">\(tags(["amenity": "bar", "name": "B",
                "website": "www.b.example", "url": "https://u.example"]))</node>
            <node id="3" lat="1" lon="1">\(tags(["amenity": "bar", "name": "C",
                "image": "File:C.jpg", "addr:country": "Deutschland", "addr:street": "Main St"]))</node>
            """)
        #expect(venues.map(\.url) == ["http://a.example", "https://u.example", nil])
        #expect(venues[2].imageURL == nil && venues[2].country == nil && venues[2].street == "Main St")
    }

    @Test("a way is placed at the spherical centroid of its nodes")
    func way() throws {
        let (venues, rejects) = try parseOSM(
            """
            <node id="1" lat="10.0" lon="20.0"/><node id="2" lat="10.0" lon="20.002"/>
            <node id="3" lat="10.002" lon="20.002"/><node id="4" lat="10.002" lon="20.0"/>
            <way id="456"><nd ref="1"/><nd ref="2"/><nd ref="3"/><nd ref="4"/><nd ref="1"/>
              \(tags(["leisure": "stadium", "name": "Arena"]))</way>
            """)
        #expect(rejects.isEmpty)
        let venue = try #require(venues.first)
        #expect(venue.id == "way/456" && venue.category == "stadium")
        let location = try #require(venue.location)
        #expect(abs(location.latitude - 10.001) < 1e-6 && abs(location.longitude - 20.001) < 1e-6)
    }

    @Test("node coordinates are found whatever order the ids come in; a repeated node's last position counts")
    func nodeOrder() throws {
        let (venues, _) = try parseOSM(
            """
            <node id="50" lat="1" lon="1"/><node id="-3" lat="2" lon="2"/><node id="90" lat="3" lon="3"/>
            <node id="50" lat="4" lon="4"/>
            <way id="1"><nd ref="-3"/>\(tags(["leisure": "pitch", "name": "A"]))</way>
            <way id="2"><nd ref="50"/>\(tags(["leisure": "pitch", "name": "B"]))</way>
            <way id="3"><nd ref="90"/>\(tags(["leisure": "pitch", "name": "C"]))</way>
            """)
        #expect(venues.map(\.location?.latitude) == [2, 4, 3])
    }

    @Test("a way across the antimeridian is centred on it, not on the other side of the world")
    func antimeridian() throws {
        let (venues, _) = try parseOSM(
            """
            <node id="1" lat="-16.5" lon="179.999"/><node id="2" lat="-16.5" lon="-179.999"/>
            <node id="3" lat="-16.501" lon="-179.999"/><node id="4" lat="-16.501" lon="179.999"/>
            <way id="9"><nd ref="1"/><nd ref="2"/><nd ref="3"/><nd ref="4"/><nd ref="1"/>
              \(tags(["leisure": "park", "name": "Dateline Park"]))</way>
            """)
        let location = try #require(venues.first?.location)
        #expect(abs(location.latitude + 16.5005) < 1e-6)
        #expect(abs(abs(location.longitude) - 180) < 1e-6)
    }

    @Test(
        "category mapping",
        arguments: [
            ("amenity", "bar", "bar"), ("amenity", "pub", "pub"), ("amenity", "biergarten", "biergarten"),
            ("amenity", "nightclub", "nightclub"), ("amenity", "stripclub", "nightclub"),
            ("amenity", "music_venue", "concert_hall"), ("amenity", "concert_hall", "concert_hall"),
            ("amenity", "theatre", "theatre"), ("amenity", "cinema", "cinema"),
            ("amenity", "arts_centre", "arts_centre"),
            ("amenity", "events_venue", "events_venue"), ("amenity", "casino", "casino"),
            ("leisure", "sports_centre", "sports_centre"), ("leisure", "pitch", "pitch"),
            ("leisure", "stadium", "stadium"),
            ("leisure", "park", "park"), ("leisure", "fitness_centre", "fitness_centre"),
            ("leisure", "sports_hall", "sports_centre"), ("leisure", "swimming_pool", "swimming_pool"),
            ("leisure", "ice_rink", "ice_rink"), ("leisure", "track", "track"), ("leisure", "dance", "club"),
            ("building", "stadium", "stadium"),
        ])
    func categories(key: String, value: String, slug: String) throws {
        let (venues, _) = try parseOSM(
            "<node id='7' lat='0' lon='0'><tag k='\(key)' v='\(value)'/><tag k='name' v='X'/></node>")
        #expect(venues.map(\.category) == [slug])
    }

    @Test("amenity wins over leisure; other features are ignored without a reject")
    func precedenceAndIgnored() throws {
        #expect(OSMParser.category(amenity: "bar", leisure: "park", building: nil) == "bar")
        #expect(OSMParser.category(amenity: "restaurant", leisure: "park", building: nil) == "park")
        #expect(OSMParser.category(amenity: "school", leisure: nil, building: "yes") == nil)
        let (venues, rejects) = try parseOSM(
            "<node id='1' lat='0' lon='0'>\(tags(["amenity": "school"]))</node>"
                + "<way id='2'><nd ref='1'/>\(tags(["building": "yes"]))</way>"
                + "<relation id='3'><member type='node' ref='1' role=''/>"
                + "\(tags(["amenity": "bar", "name": "R"]))</relation>"
        )
        #expect(venues.isEmpty && rejects.isEmpty)
    }

    @Test("rejects: unnamed places, ways with unknown nodes, nodes without coordinates, unknown entities")
    func rejects() throws {
        let (venues, rejects) = try parseOSM(
            """
            <node id="1" lat="48.1" lon="11.5">\(tags(["amenity": "biergarten"]))</node>
            <way id="2"><nd ref="98"/><nd ref="99"/>\(tags(["leisure": "pitch", "name": "Field"]))</way>
            <way id="3">\(tags(["leisure": "pitch", "name": "Empty"]))</way>
            <node id="4" lat="95" lon="0">\(tags(["amenity": "bar", "name": "North"]))</node>
            <node id="5" lat="1" lon="1"><tag k="amenity" v="bar"/><tag k="name" v="&xxe;"/></node>
            <way id="6"><nd ref="1"/><nd ref="97"/>\(tags(["leisure": "park", "name": "Partial"]))</way>
            """)
        #expect(
            rejects == [
                ImportReject(position: "line 3, node/1", reason: "unnamed amenity=biergarten (a place needs a name)"),
                ImportReject(position: "line 4, way/2", reason: "none of the way's 2 nodes is in the file"),
                ImportReject(position: "line 5, way/3", reason: "way without nodes"),
                ImportReject(position: "line 6, node/4", reason: "node without a valid lat/lon"),
                ImportReject(position: "line 7, node/5", reason: "unknown entity &xxe;"),
            ])
        #expect(venues.map(\.id) == ["way/6"])
        #expect(venues.first?.location == GeoPoint(latitude: 48.1, longitude: 11.5))
    }

    @Test("small chunks and hostile or foreign documents")
    func chunksAndErrors() throws {
        let body =
            "<node id='1' lat='-33.8688197' lon='151.2092955'>\(tags(["amenity": "theatre", "name": "Opera"]))</node>"
        let whole = try parseOSM(body), bytewise = try parseOSM(body, chunkSize: 1)
        #expect(whole.venues == bytewise.venues)
        #expect(whole.venues.first?.location == GeoPoint(latitude: -33.8688197, longitude: 151.2092955))
        #expect(throws: ImportError.self) {
            try OSMParser(bytes: Array("<feed/>".utf8)).parse({ _ in }, reject: { _ in })
        }
        #expect(throws: ImportError.self) {
            try OSMParser(bytes: Array("<!DOCTYPE osm SYSTEM 'http://x/osm.dtd'><osm/>".utf8)).parse(
                { _ in }, reject: { _ in })
        }
    }
}
