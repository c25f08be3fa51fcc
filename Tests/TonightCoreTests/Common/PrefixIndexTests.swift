import Testing
import TonightCore

@Suite("Prefix index (search as you type)")
struct PrefixIndexTests {
    let index = PrefixIndex(names: ["Sigur Rós", "Rosalía", "Jónsi", "Rosa Rosalind", "Crosby, Stills & Nash", "ROS"])

    @Test("any word's prefix, case and accents ignored, in rank order, each name once")
    func prefixes() {
        #expect(index.search("ros", limit: 10) == [0, 1, 3, 5])
        #expect(index.search("RÓS", limit: 2) == [0, 1])
        #expect(index.search("sigur r", limit: 10) == [0])
        #expect(index.search("r sigur", limit: 10) == [0])
        #expect(index.search("stills nash", limit: 10) == [4])
        #expect(index.search("jonsi", limit: 10) == [2])
        #expect(index.search("osa", limit: 10) == [])
        #expect(index.search(" , ", limit: 10) == [])
        #expect(index.search("rosa", limit: 10) == [1, 3])
        #expect(index.search("z", limit: 10) == [])
    }

    @Test("agrees with a plain scan on many names")
    func bruteForce() {
        var generator = SystemRandomNumberGenerator()
        let syllables = ["ro", "sa", "li", "ja", "zz", "ös", "ki", "n", "a", "ré"]
        let names = (0..<2000).map { _ in
            (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                (0..<Int.random(in: 1...3, using: &generator)).map { _ in syllables.randomElement(using: &generator)! }
                    .joined()
            }.joined(separator: " ")
        }
        let index = PrefixIndex(names: names)
        for query in ["r", "ro", "ros", "a ro", "zz", "li ja", "re", "kin", "x"] {
            let words = SearchText.words(query)
            let expected = names.indices.filter { rank in
                let nameWords = SearchText.words(names[rank])
                return words.allSatisfy { word in nameWords.contains { $0.hasPrefix(word) } }
            }
            #expect(index.search(query, limit: 25) == Array(expected.prefix(25)), "\(query)")
        }
    }
}
