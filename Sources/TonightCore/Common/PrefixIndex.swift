import Foundation

/// Search as you type over names, in memory: every folded word of every name, sorted, so the
/// names with a word starting with a prefix are one binary search away. Results come in rank
/// order (the order the names were given in: most popular first).
///
/// `PrefixIndex(names: ["Sigur Rós", "Rosalía"]).search("ros r", limit: 10)` → `[0, 1]`: each
/// word typed must start a word of the name (case, accents and punctuation ignored).
public struct PrefixIndex: Sendable {
    /// Folded names, by rank.
    private let folded: [String]
    /// All words' bytes, back to back.
    private let text: [UInt8]
    /// One entry per (word, name), sorted by the word's bytes, then rank.
    private let entries: [Entry]

    private struct Entry: Sendable {
        var offset: UInt32
        var length: UInt32
        var rank: Int32
    }

    /// Indexes `names`; a name's position is its rank (0 first).
    public init(names: [String]) {
        var folded: [String] = []
        folded.reserveCapacity(names.count)
        var words: [(bytes: ArraySlice<UInt8>, rank: Int32)] = []
        for (rank, name) in names.enumerated() {
            let key = SearchText.fold(name)
            folded.append(key)
            let bytes = Array(key.utf8)
            var seen = Set<ArraySlice<UInt8>>()
            for word in bytes.split(separator: UInt8(ascii: " ")) where seen.insert(word).inserted {
                words.append((word, Int32(rank)))
            }
        }
        words.sort { a, b in
            a.bytes.lexicographicallyPrecedes(b.bytes) || (a.bytes == b.bytes && a.rank < b.rank)
        }
        var text: [UInt8] = []
        var entries: [Entry] = []
        entries.reserveCapacity(words.count)
        for word in words {
            entries.append(Entry(offset: UInt32(text.count), length: UInt32(word.bytes.count), rank: word.rank))
            text.append(contentsOf: word.bytes)
        }
        self.folded = folded
        self.text = text
        self.entries = entries
    }

    /// How many names are indexed.
    public var count: Int { folded.count }

    /// The ranks of the first `limit` names (by rank) having, for each word of `query`, a word that
    /// starts with it. Empty when the query has no letters or digits.
    public func search(_ query: String, limit: Int) -> [Int] {
        let words = SearchText.words(query).map { Array($0.utf8) }
        guard let primary = words.max(by: { $0.count < $1.count }), limit > 0 else { return [] }
        var others = words
        others.remove(at: others.firstIndex(of: primary)!)
        let otherWords = others.map { String(decoding: $0, as: UTF8.self) }
        var best: [Int32] = []
        text.withUnsafeBufferPointer { text in
            var index = lowerBound(primary, text)
            while index < entries.count, hasPrefix(entries[index], primary, text) {
                let rank = entries[index].rank
                index += 1
                if best.count == limit, rank >= best[limit - 1] { continue }
                if best.contains(rank) { continue }
                if !otherWords.isEmpty {
                    let nameWords = folded[Int(rank)].split(separator: " ")
                    guard otherWords.allSatisfy({ word in nameWords.contains { $0.hasPrefix(word) } }) else {
                        continue
                    }
                }
                let slot = best.firstIndex { $0 > rank } ?? best.count
                best.insert(rank, at: slot)
                if best.count > limit { best.removeLast() }
            }
        }
        return best.map(Int.init)
    }

    private func lowerBound(_ key: [UInt8], _ text: UnsafeBufferPointer<UInt8>) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(entries[middle], key, text) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Whether the entry's word sorts before `key`.
    private func precedes(_ entry: Entry, _ key: [UInt8], _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let length = Int(entry.length)
        let common = min(length, key.count)
        let order = key.withUnsafeBufferPointer { key in
            common == 0 ? 0 : memcmp(text.baseAddress! + Int(entry.offset), key.baseAddress!, common)
        }
        return order < 0 || (order == 0 && length < key.count)
    }

    private func hasPrefix(_ entry: Entry, _ key: [UInt8], _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(entry.length) >= key.count else { return false }
        return key.withUnsafeBufferPointer { key in
            key.isEmpty || memcmp(text.baseAddress! + Int(entry.offset), key.baseAddress!, key.count) == 0
        }
    }
}
