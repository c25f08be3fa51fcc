import Foundation
import Testing
import TonightCore

@Suite("Artist affinity parser")
struct AffinityParserTests {
    private func parse(_ text: String) throws -> (entries: [AffinityEntry], rejects: [ImportReject]) {
        try parse(bytes: Array(text.utf8))
    }

    private func parse(bytes: [UInt8]) throws -> (entries: [AffinityEntry], rejects: [ImportReject]) {
        var entries: [AffinityEntry] = []
        var rejects: [ImportReject] = []
        try AffinityParser(bytes: bytes).parse({ entries.append($0) }, reject: { rejects.append($0) })
        return (entries, rejects)
    }

    @Test("the FORMATS.md example: triples, quoted names with commas, non-ASCII")
    func example() throws {
        let text = """
            Sigur Rós,1011,Jónsi,0.94,2231,"Godspeed You! Black Emperor",0.81,4410,Explosions in the Sky,0.77
            "Crosby, Stills & Nash",5521,Neil Young,0.88

            """
        let (entries, rejects) = try parse(text)
        #expect(rejects.isEmpty)
        #expect(
            entries == [
                AffinityEntry(
                    artistName: "Sigur Rós", line: 1,
                    recommendations: [
                        AffinityRecommendation(artistId: "1011", artistName: "Jónsi", score: 0.94),
                        AffinityRecommendation(
                            artistId: "2231", artistName: "Godspeed You! Black Emperor", score: 0.81),
                        AffinityRecommendation(artistId: "4410", artistName: "Explosions in the Sky", score: 0.77),
                    ]),
                AffinityEntry(
                    artistName: "Crosby, Stills & Nash", line: 2,
                    recommendations: [AffinityRecommendation(artistId: "5521", artistName: "Neil Young", score: 0.88)]),
            ])
    }

    @Test("doubled quotes, quoted line breaks (record reported at its first line), CRLF, blank lines, BOM")
    func quoting() throws {
        let text = "\u{FEFF}\r\n\"The \"\"Band\"\"\",1,\"Line\r\none\",1\r\n  \r\nNext,2,\"a,b\",0\r\n"
        let (entries, rejects) = try parse(text)
        #expect(rejects.isEmpty)
        #expect(entries.map(\.artistName) == ["The \"Band\"", "Next"])
        #expect(entries.map(\.line) == [2, 5])
        #expect(
            entries[0].recommendations == [AffinityRecommendation(artistId: "1", artistName: "Line\none", score: 1)])
        #expect(entries[1].recommendations[0].artistName == "a,b")
        #expect(entries[1].recommendations[0].score == 0)
    }

    @Test("rejects with line numbers, and the parse goes on")
    func rejects() throws {
        let text = """
            Good,1,A,0.5
            Short,1,A
            ,1,A,0.5
            NoId,,A,0.5
            NoName,1,,0.5
            TooHigh,1,A,1.5
            Negative,1,A,-0.1
            Word,1,A,abc
            NaN,1,A,NaN
            Exponent,1,A,1e-1
            Trailing,1,A,0.5,
            Alone
            "Closed"x,1,A,0.5
            Last,2,B,.25
            """
        let (entries, rejects) = try parse(text)
        #expect(entries.map(\.artistName) == ["Good", "Last"])
        #expect(entries.last?.line == 14)
        #expect(entries.last?.recommendations.first?.score == 0.25)
        #expect(rejects.map(\.position) == (2...13).map { "line \($0)" })
        let reasons = rejects.map(\.reason)
        #expect(reasons[0].contains("not whole"))
        #expect(reasons[1] == "empty artist name")
        #expect(reasons[2].contains("empty artist id"))
        #expect(reasons[3].contains("empty artist name in triple 1"))
        for index in 4...8 { #expect(reasons[index].contains("not a decimal between 0 and 1"), "\(reasons[index])") }
        #expect(reasons[9].contains("not whole"))
        #expect(reasons[10] == "no recommendations")
        #expect(reasons[11] == "text after a closing quote")
    }

    @Test("an unterminated quote rejects its line; reading resumes on the next line")
    func unterminatedQuote() throws {
        let (entries, rejects) = try parse("A,1,\"Open,0.5\nB,2,C,0.5\nD,3,E,0.75")
        #expect(rejects == [ImportReject(position: "line 1", reason: "unterminated quote")])
        #expect(entries.map(\.artistName) == ["B", "D"])
        #expect(entries.map(\.line) == [2, 3])

        var long = "X,1,\"never closed,0.5\n"
        for index in 0..<100 { long += "Artist \(index),\(index),Y,0.5\n" }
        let (many, manyRejects) = try parse(long)
        #expect(manyRejects.map(\.position) == ["line 1"])
        #expect(many.count == 100)
    }

    @Test("invalid UTF-8 is rejected")
    func invalidUTF8() throws {
        var bytes = Array("Good,1,A,0.5\nBad".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(",1,A,0.5\n".utf8)
        let (entries, rejects) = try parse(bytes: bytes)
        #expect(entries.map(\.artistName) == ["Good"])
        #expect(rejects.map(\.position) == ["line 2"])
        #expect(rejects.first?.reason.contains("UTF-8") == true)
    }

    @Test("streams a file in chunks; records crossing chunk boundaries survive; missing file is unreadable")
    func file() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("affinity-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: url) }
        var text = ""
        for index in 0..<20_000 {
            text += "\"Artist, \(index)\",\(index),\"Rec \"\"\(index)\"\"\",0.\(index % 10)\(index % 7)\n"
        }
        try Data(text.utf8).write(to: url)
        var entries: [AffinityEntry] = []
        try AffinityParser(path: url.path).parse({ entries.append($0) }, reject: { Issue.record("\($0)") })
        #expect(entries.count == 20_000)
        #expect(entries[12_345].artistName == "Artist, 12345")
        #expect(entries[12_345].line == 12_346)
        #expect(entries[12_345].recommendations[0].artistName == "Rec \"12345\"")
        #expect(throws: ImportError.self) {
            try AffinityParser(path: url.path + ".missing").parse({ _ in }, reject: { _ in })
        }
    }
}
