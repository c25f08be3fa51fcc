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
    public static func count(_ list: Substring, _ criteria: Criteria) -> Counts {
        var counts = Counts()
        for entry in list.split(separator: ";") {
            let fields = entry.split(separator: ",", maxSplits: 2, omittingEmptySubsequences: false)
            guard let id = fields.first else { continue }
            if id == criteria.userID {
                counts.includesUser = true
                continue
            }
            if criteria.friends.contains(String(id)) { counts.friends += 1 }
            if criteria.avoided.contains(String(id)) { counts.avoided += 1 }
            if fields.count > 1, !fields[1].isEmpty, criteria.genders.contains(String(fields[1])) {
                counts.preferredGenders += 1
            }
            if fields.count > 2, !fields[2].isEmpty {
                let birth = fields[2]
                if criteria.birthDates.contains(where: { bracket in
                    (bracket.after.map { birth > $0 } ?? true) && (bracket.through.map { birth <= $0 } ?? true)
                }) {
                    counts.preferredAgeGroups += 1
                }
            }
        }
        return counts
    }
}
