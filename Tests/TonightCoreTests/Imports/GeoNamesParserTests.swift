import Foundation
import Testing
import TonightCore

/// One line of a GeoNames dump with the 19 columns; `overrides` replaces columns by index.
private func dumpLine(_ overrides: [Int: String] = [:], id: Int = 6_324_729) -> String {
    var columns = [
        "\(id)", "Halifax", "Halifax", "Galifaks,Halifaks, Галифакс ,,ハリファックス", "44.64269", "-63.57688",
        "P", "PPLA", "CA", "", "07", "1209034", "", "", "471559", "", "36", "America/Halifax", "2024-01-16",
    ]
    for (index, value) in overrides { columns[index] = value }
    return columns.joined(separator: "\t")
}

private func parse(_ parser: GeoNamesParser) throws -> (cities: [City], rejects: [ImportReject]) {
    var cities: [City] = []
    var rejects: [ImportReject] = []
    try parser.parse({ cities.append($0) }, reject: { rejects.append($0) })
    return (cities, rejects)
}

private func parse(_ text: String) throws -> (cities: [City], rejects: [ImportReject]) {
    try parse(GeoNamesParser(bytes: Array(text.utf8)))
}

@Suite("GeoNames parser")
struct GeoNamesParserTests {
    @Test("reads the 19-column dump layout")
    func readsDump() throws {
        let (cities, rejects) = try parse(dumpLine() + "\n")
        #expect(rejects.isEmpty)
        let halifax = try #require(cities.first)
        #expect(halifax.geonameId == 6_324_729)
        #expect(halifax.name == "Halifax" && halifax.asciiName == "Halifax")
        #expect(halifax.alternateNames == ["Galifaks", "Halifaks", "Галифакс", "ハリファックス"])
        #expect(halifax.location == GeoPoint(latitude: 44.64269, longitude: -63.57688))
        #expect(halifax.countryCode == "CA" && halifax.admin1Code == "07")
        #expect(halifax.regionName == "07", "left to the gazetteer")
        #expect(halifax.population == 471_559)
        #expect(halifax.timeZone == "America/Halifax")

        let gazetteer = try Gazetteer(cities: "", admin1: "CA\t07\tNova Scotia\tAmerica/Halifax\n").merging(cities)
        #expect(gazetteer.city(geonameId: 6_324_729)?.key == "Halifax$Nova Scotia$CA")
        #expect(gazetteer.search("галифакс").first?.geonameId == 6_324_729)
    }

    @Test("byte order mark, CRLF, blank lines and a last line without a newline")
    func lineEndings() throws {
        let text = "\u{FEFF}" + dumpLine(id: 1) + "\r\n\r\n" + dumpLine(id: 2) + "\n\n" + dumpLine(id: 3)
        let (cities, rejects) = try parse(text)
        #expect(rejects.isEmpty)
        #expect(cities.map(\.geonameId) == [1, 2, 3])
        #expect(cities.last?.timeZone == "America/Halifax")
        #expect(try parse("").cities.isEmpty)
    }

    @Test("empty ascii name falls back to the name; empty population is 0")
    func lenientColumns() throws {
        let city = try #require(try parse(dumpLine([1: "Tórshavn", 2: "", 3: "", 14: ""])).cities.first)
        #expect(city.asciiName == "Tórshavn")
        #expect(city.alternateNames.isEmpty)
        #expect(city.population == 0)
    }

    @Test("rejects bad lines with their line number and reason, and goes on")
    func rejects() throws {
        let lines = [
            dumpLine(id: 1),
            "1\tonly\tthree",
            dumpLine([0: "abc"]),
            dumpLine([0: "0"]),
            dumpLine([4: "91"]),
            dumpLine([5: "east"]),
            dumpLine([4: "nan"]),
            dumpLine([1: "  "]),
            dumpLine([14: "-5"]),
            dumpLine([14: "1.5"]),
            dumpLine([17: ""]),
            dumpLine([8: "C1"]),
            dumpLine(id: 2),
        ]
        let (cities, rejects) = try parse(lines.joined(separator: "\n"))
        #expect(cities.map(\.geonameId) == [1, 2])
        #expect(
            rejects.map(\.description) == [
                "line 2: expected 19 columns, found 3",
                "line 3: bad geonameid 'abc'",
                "line 4: bad geonameid '0'",
                "line 5: bad coordinates '91', '-63.57688'",
                "line 6: bad coordinates '44.64269', 'east'",
                "line 7: bad coordinates 'nan', '-63.57688'",
                "line 8: empty name",
                "line 9: bad population '-5'",
                "line 10: bad population '1.5'",
                "line 11: empty timezone",
                "line 12: bad country code 'C1'",
            ])
    }

    @Test("streams a file across read boundaries, same as from memory; rejects over-long lines")
    func streamsFile() throws {
        var lines = (1...3000).map { dumpLine(id: $0) }
        let long = dumpLine([3: String(repeating: "Name,", count: GeoNamesParser.maximumLineLength / 5 + 10)], id: 9999)
        lines.insert(long, at: 1500)
        let text = lines.joined(separator: "\n") + "\n"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("geonames-\(UUID()).txt").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let fromFile = try parse(GeoNamesParser(path: path))
        let fromMemory = try parse(text)
        #expect(fromFile.cities.count == 3000)
        #expect(fromFile.cities.map(\.geonameId) == Array(1...3000))
        #expect(fromFile.cities == fromMemory.cities)
        let expected = [ImportReject(position: "line 1501", reason: "line longer than 1048576 bytes")]
        #expect(fromFile.rejects == expected)
        #expect(fromMemory.rejects == expected)
    }

    @Test("a missing file is unreadable; errors thrown by the handlers stop the parse")
    func errors() throws {
        #expect(throws: ImportError.unreadable("cannot open /nonexistent/cities15000.txt")) {
            try GeoNamesParser(path: "/nonexistent/cities15000.txt").parse({ _ in }, reject: { _ in })
        }
        struct Stop: Error {}
        var seen = 0
        let parser = GeoNamesParser(bytes: Array((dumpLine(id: 1) + "\n" + dumpLine(id: 2)).utf8))
        #expect(throws: Stop.self) {
            try parser.parse(
                { _ in
                    seen += 1
                    throw Stop()
                }, reject: { _ in })
        }
        #expect(seen == 1)
    }
}
