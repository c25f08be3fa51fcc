/// A session's players as the recommendation query reads them: `id,gender,birthDate;…` (the
/// `players` column, kept by the transaction that changes attendance).
///
/// Counting works on UTF-8 bytes with everything prepared once per request: a recommendation reads
/// thousands of these lists, and splitting them into strings cost more than the database query.
public enum SessionPlayers {
    /// What a recommendation counts among a session's players.
    public struct Counts: Sendable, Equatable {
        public var friends = 0
        public var preferredGenders = 0
        public var preferredAgeGroups = 0
        public var avoided = 0
        /// Whether the asking user is one of them.
        public var includesUser = false
    }

    /// Who and what to count, prepared as bytes.
    public struct Criteria: Sendable {
        let user: [UInt8]
        let friends: ByteSet
        let avoided: ByteSet
        let genders: [[UInt8]]
        let brackets: [(after: [UInt8]?, through: [UInt8]?)]

        /// `birthDates` are brackets `(after, through)` as `YYYY-MM-DD`; nil ends are open.
        public init(
            userID: String, friends: Set<String>, genders: Set<String>,
            birthDates: [(after: String?, through: String?)], avoided: Set<String>
        ) {
            user = Array(userID.utf8)
            self.friends = ByteSet(friends)
            self.avoided = ByteSet(avoided)
            self.genders = genders.map { Array($0.utf8) }
            brackets = birthDates.map {
                (after: $0.after.map { Array($0.utf8) }, through: $0.through.map { Array($0.utf8) })
            }
        }
    }

    /// Counts the players in `list` (`id,gender,birthDate` entries separated by `;`).
    public static func count(_ list: Substring, _ criteria: Criteria) -> Counts {
        if let counts = list.utf8.withContiguousStorageIfAvailable({ count($0, criteria) }) { return counts }
        return Array(list.utf8).withUnsafeBufferPointer { count($0, criteria) }
    }

    static func count(_ bytes: UnsafeBufferPointer<UInt8>, _ c: Criteria) -> Counts {
        var counts = Counts()
        var start = 0
        while start < bytes.count {
            var end = start
            var commas: (Int, Int) = (-1, -1)
            while end < bytes.count && bytes[end] != 59 {  // ;
                if bytes[end] == 44 {  // ,
                    if commas.0 < 0 { commas.0 = end } else if commas.1 < 0 { commas.1 = end }
                }
                end += 1
            }
            let idEnd = commas.0 >= 0 ? commas.0 : end
            let id = start..<idEnd
            if !id.isEmpty {
                if equal(bytes, id, c.user) {
                    counts.includesUser = true
                } else {
                    if c.friends.contains(bytes, id) { counts.friends += 1 }
                    if c.avoided.contains(bytes, id) { counts.avoided += 1 }
                    if commas.0 >= 0 {
                        let genderEnd = commas.1 >= 0 ? commas.1 : end
                        let gender = (commas.0 + 1)..<genderEnd
                        if !gender.isEmpty && c.genders.contains(where: { equal(bytes, gender, $0) }) {
                            counts.preferredGenders += 1
                        }
                    }
                    if commas.1 >= 0 {
                        let birth = (commas.1 + 1)..<end
                        if !birth.isEmpty
                            && c.brackets.contains(where: { bracket in
                                (bracket.after.map { compare(bytes, birth, $0) > 0 } ?? true)
                                    && (bracket.through.map { compare(bytes, birth, $0) <= 0 } ?? true)
                            })
                        {
                            counts.preferredAgeGroups += 1
                        }
                    }
                }
            }
            start = end + 1
        }
        return counts
    }

    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ other: [UInt8]) -> Bool {
        guard range.count == other.count else { return false }
        var i = 0
        for index in range {
            if bytes[index] != other[i] { return false }
            i += 1
        }
        return true
    }

    /// Byte order of `bytes[range]` against `other`: negative, zero or positive.
    static func compare(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ other: [UInt8]) -> Int {
        var i = 0
        for index in range {
            guard i < other.count else { return 1 }
            if bytes[index] != other[i] { return bytes[index] < other[i] ? -1 : 1 }
            i += 1
        }
        return i < other.count ? -1 : 0
    }

    /// A set of byte strings looked up by FNV-1a hash, without building a string per lookup.
    struct ByteSet: Sendable {
        let buckets: [UInt64: [[UInt8]]]

        init(_ strings: Set<String>) {
            var buckets: [UInt64: [[UInt8]]] = [:]
            for string in strings {
                let bytes = Array(string.utf8)
                let hash = bytes.withUnsafeBufferPointer { ByteSet.hash($0, 0..<$0.count) }
                buckets[hash, default: []].append(bytes)
            }
            self.buckets = buckets
        }

        func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
            guard !buckets.isEmpty, let bucket = buckets[Self.hash(bytes, range)] else { return false }
            return bucket.contains { SessionPlayers.equal(bytes, range, $0) }
        }

        static func hash(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for index in range {
                hash ^= UInt64(bytes[index])
                hash = hash &* 0x100_0000_01b3
            }
            return hash
        }
    }
}
