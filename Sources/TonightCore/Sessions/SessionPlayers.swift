/// A session's players as the recommendation query reads them: `id,gender,birthDate;…` (the
/// `players` column, kept by the transaction that changes attendance).
public struct SessionPlayers: Sendable, Equatable {
    /// What a recommendation counts among a session's players.
    public struct Counts: Sendable, Equatable {
        public var friends = 0
        public var preferredGenders = 0
        public var preferredAgeGroups = 0
        public var avoided = 0
        /// Whether the asking user is one of them.
        public var includesUser = false
    }

    /// Who and what to count.
    public struct Criteria: Sendable {
        public var userID: String
        public var friends: Set<String>
        public var genders: Set<String>
        /// Birth-date brackets `(after, through)`, `YYYY-MM-DD`; nil ends are open.
        public var birthDates: [(after: String?, through: String?)]
        public var avoided: Set<String>

        public init(
            userID: String, friends: Set<String>, genders: Set<String>,
            birthDates: [(after: String?, through: String?)], avoided: Set<String>
        ) {
            self.userID = userID
            self.friends = friends
            self.genders = genders
            self.birthDates = birthDates
            self.avoided = avoided
        }
    }

    /// Counts the players in `list` (`id,gender,birthDate` entries separated by `;`).
    ///
    /// Works on UTF-8 bytes: a recommendation reads thousands of these per request, and
    /// splitting by `Character` (grapheme clusters) cost more than the database query.
    public static func count(_ list: Substring, _ criteria: Criteria) -> Counts {
        var counts = Counts()
        let user = Array(criteria.userID.utf8)
        let genders = criteria.genders.map { Array($0.utf8) }
        let brackets = criteria.birthDates.map { (after: $0.after.map { Array($0.utf8) }, through: $0.through.map { Array($0.utf8) }) }
        let checkIDs = !criteria.friends.isEmpty || !criteria.avoided.isEmpty
        for entry in list.utf8.split(separator: 59) {  // ;
            let fields = entry.split(separator: 44, maxSplits: 2, omittingEmptySubsequences: false)  // ,
            guard let id = fields.first else { continue }
            if id.elementsEqual(user) {
                counts.includesUser = true
                continue
            }
            if checkIDs {
                let key = Substring(id)
                if criteria.friends.contains(String(key)) { counts.friends += 1 }
                if criteria.avoided.contains(String(key)) { counts.avoided += 1 }
            }
            if fields.count > 1, !fields[1].isEmpty, genders.contains(where: { fields[1].elementsEqual($0) }) {
                counts.preferredGenders += 1
            }
            if fields.count > 2, !fields[2].isEmpty {
                let birth = fields[2]
                if brackets.contains(where: { bracket in
                    (bracket.after.map { $0.lexicographicallyPrecedes(birth) } ?? true)
                        && (bracket.through.map { !$0.lexicographicallyPrecedes(birth) } ?? true)
                }) {
                    counts.preferredAgeGroups += 1
                }
            }
        }
        return counts
    }
}
