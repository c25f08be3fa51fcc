import Foundation

/// The weights of Playmate's session heuristic and of the dismissal penalties (configuration).
public struct SessionWeights: Sendable, Equatable {
    public var sport: Double = 5.2
    public var friends: Double = 2.3
    public var preferredGenders: Double = 1.2
    public var preferredAgeGroups: Double = 1.9
    /// Times the share of the user's sessions played that started within an hour (local) of the
    /// session's start: people keep their hours.
    public var time: Double = 1.5
    /// Taken off per earlier dismissal for "time" near the session's local hour, for "distance" at
    /// a similar or greater distance, and (halved) per player from sessions dismissed for "people".
    public var dismissalPenalty: Double = 1.0

    public init() {}
}

/// Why a recommendation was swiped away.
public enum DismissalReason: String, Sendable, Codable, CaseIterable {
    case sport, time, distance, people
}

/// A remembered dismissal, with what the session was like when it was dismissed.
public struct SessionDismissal: Sendable, Equatable {
    public var reason: DismissalReason?
    public var sport: String?
    /// Local start hour, 0–23.
    public var localHour: Int?
    public var location: GeoPoint?

    public init(reason: DismissalReason?, sport: String?, localHour: Int?, location: GeoPoint?) {
        self.reason = reason
        self.sport = sport
        self.localHour = localHour
        self.location = location
    }
}

/// What the ranking knows about the person asking.
public struct SessionTaste: Sendable, Equatable {
    /// Sports from the preferences quiz ("sports played").
    public var quizSports: Set<String>
    /// Sessions played so far, by sport and by sport + skill.
    public var playedBySport: [String: Int]
    public var playedBySportAndSkill: [String: Int]
    /// Sessions played by local start hour (0–23).
    public var playedByHour: [Int: Int]
    public var dismissals: [SessionDismissal]

    public init(
        quizSports: Set<String> = [], played: [(sport: String, skill: String, count: Int)] = [],
        hours: [(hour: Int, count: Int)] = [], dismissals: [SessionDismissal] = []
    ) {
        self.quizSports = quizSports
        var bySport: [String: Int] = [:]
        var bySkill: [String: Int] = [:]
        for row in played {
            bySport[row.sport, default: 0] += row.count
            bySkill[row.sport + "/" + row.skill, default: 0] += row.count
        }
        playedBySport = bySport
        playedBySportAndSkill = bySkill
        playedByHour = Dictionary(hours.map { ($0.hour, $0.count) }, uniquingKeysWith: +)
        self.dismissals = dismissals
    }

    /// All sessions played.
    public var totalPlayed: Int { playedBySport.values.reduce(0, +) }
}

/// A session that passed the filters, with the counts the formula needs.
public struct SessionCandidate: Sendable, Equatable {
    public var id: String
    public var sport: String
    public var skill: String
    public var startAt: Int64
    /// Local start hour, 0–23.
    public var localHour: Int
    public var location: GeoPoint
    /// Metres from the point the search is around.
    public var distance: Double
    public var friends: Int
    public var playersInPreferredGenders: Int
    public var playersInPreferredAgeGroups: Int
    /// Players who were in sessions the user dismissed for "people".
    public var avoidedPlayers: Int

    public init(
        id: String, sport: String, skill: String, startAt: Int64, localHour: Int, location: GeoPoint,
        distance: Double, friends: Int = 0, playersInPreferredGenders: Int = 0, playersInPreferredAgeGroups: Int = 0,
        avoidedPlayers: Int = 0
    ) {
        self.id = id
        self.sport = sport
        self.skill = skill
        self.startAt = startAt
        self.localHour = localHour
        self.location = location
        self.distance = distance
        self.friends = friends
        self.playersInPreferredGenders = playersInPreferredGenders
        self.playersInPreferredAgeGroups = playersInPreferredAgeGroups
        self.avoidedPlayers = avoidedPlayers
    }
}

/// A ranked session and the parts of its score, strongest first when explained.
public struct RankedSession: Sendable, Equatable {
    public var candidate: SessionCandidate
    public var score: Double
    public var sportWeight: Double
    /// Whether the quiz says the user plays this sport.
    public var fromQuiz: Bool
    /// Sessions of this sport the user has played.
    public var playedBefore: Int
    /// Of those, the sessions at this session's skill level.
    public var playedAtSkill: Int = 0
    /// The user's sessions played in all.
    public var totalPlayed: Int = 0
    /// Of those, the sessions that started within an hour (local) of this one.
    public var playedAtHour: Int = 0
    public var penalty: Double
}

/// One part of a ranked session's score and what matched, with its English sentence.
public struct SessionReason: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case sport, level, friends, genders, ageGroups, time, distance
    }

    public var kind: Kind
    public var text: String
    /// Sessions played before (sport, level), friends playing, or players preferred (genders, age groups).
    public var count: Int?
    /// The quiz lists the sport (sport).
    public var fromQuiz: Bool?
    public var distanceMeters: Double?
    /// The session's local start hour (time).
    public var hour: Int?
}

/// Playmate's heuristic: `5.2·sportWeight + 2.3·friends + 1.2·preferredGenders + 1.9·preferredAgeGroups`,
/// plus `1.5·timeShare` (our addition, so that a reason can name the hour: the share of the user's
/// played sessions that started within an hour of this one's local start, 0 without history).
///
/// `sportWeight` (0…2) is `1` when the quiz lists the sport, plus the user's history: the share of
/// their played sessions that were this sport, averaged with the share that were this sport at this
/// skill level. Each dismissal for "sport" halves the weight of that sport. Dismissals for "time"
/// take `dismissalPenalty` off sessions starting within two hours (local) of the dismissed one;
/// for "distance" off sessions at least 80 % as far from the centre as the dismissed one was; for
/// "people" half of it per player who was in a session dismissed for people.
public enum SessionRanking {
    public static func rank(
        _ candidates: [SessionCandidate], taste: SessionTaste, center: GeoPoint, weights: SessionWeights
    ) -> [RankedSession] {
        let total = taste.totalPlayed
        var sportDismissals: [String: Int] = [:]
        var hours: [Int] = []
        var distances: [Double] = []
        for dismissal in taste.dismissals {
            switch dismissal.reason {
            case .sport: if let sport = dismissal.sport { sportDismissals[sport, default: 0] += 1 }
            case .time: if let hour = dismissal.localHour { hours.append(hour) }
            case .distance: if let location = dismissal.location { distances.append(location.distance(to: center)) }
            case .people, nil: break
            }
        }
        let ranked = candidates.map { c -> RankedSession in
            let fromQuiz = taste.quizSports.contains(c.sport)
            let played = taste.playedBySport[c.sport] ?? 0
            var sportWeight = fromQuiz ? 1.0 : 0
            if total > 0 {
                let atSkill = taste.playedBySportAndSkill[c.sport + "/" + c.skill] ?? 0
                sportWeight += (Double(played) + Double(atSkill)) / (2 * Double(total))
            }
            if let times = sportDismissals[c.sport] { sportWeight /= Double(1 << min(times, 30)) }
            var penalty = 0.0
            penalty += Double(hours.filter { hourGap($0, c.localHour) <= 2 }.count) * weights.dismissalPenalty
            penalty += Double(distances.filter { c.distance >= 0.8 * $0 }.count) * weights.dismissalPenalty
            penalty += Double(c.avoidedPlayers) * weights.dismissalPenalty / 2
            let atHour = taste.playedByHour.reduce(0) { $0 + (hourGap($1.key, c.localHour) <= 1 ? $1.value : 0) }
            let timeShare = total > 0 ? Double(atHour) / Double(total) : 0
            let score =
                weights.sport * sportWeight + weights.time * timeShare + weights.friends * Double(c.friends)
                + weights.preferredGenders * Double(c.playersInPreferredGenders)
                + weights.preferredAgeGroups * Double(c.playersInPreferredAgeGroups) - penalty
            return RankedSession(
                candidate: c, score: score, sportWeight: sportWeight, fromQuiz: fromQuiz, playedBefore: played,
                playedAtSkill: taste.playedBySportAndSkill[c.sport + "/" + c.skill] ?? 0, totalPlayed: total,
                playedAtHour: atHour, penalty: penalty)
        }
        return ranked.sorted {
            ($0.score, -$0.candidate.startAt, $1.candidate.id) > ($1.score, -$1.candidate.startAt, $0.candidate.id)
        }
    }

    /// Hours apart on a 24-hour clock (23 and 1 are two apart).
    static func hourGap(_ a: Int, _ b: Int) -> Int {
        let gap = abs(a - b) % 24
        return min(gap, 24 - gap)
    }

    /// One reason per part of the score that counts, strongest contribution first, the distance
    /// last.
    ///
    /// `sportName` and `skillName` are display names; `friendNames` are the names of (some of) the
    /// friends playing, used for the first two.
    public static func reasons(
        _ ranked: RankedSession, sportName: String, skillName: String, friendNames: [String],
        weights: SessionWeights
    ) -> [SessionReason] {
        let c = ranked.candidate
        var parts: [(weight: Double, reason: SessionReason)] = []
        if ranked.fromQuiz || ranked.playedBefore > 0 {
            let text: String
            switch (ranked.fromQuiz, ranked.playedBefore) {
            case (true, 0): text = "You play \(sportName.lowercased())."
            case (_, 1): text = "You have played \(sportName.lowercased()) once."
            default: text = "You have played \(sportName.lowercased()) \(ranked.playedBefore) times."
            }
            let share = ranked.totalPlayed > 0 ? Double(ranked.playedAtSkill) / Double(2 * ranked.totalPlayed) : 0
            parts.append(
                (
                    weights.sport * (ranked.sportWeight - share),
                    SessionReason(kind: .sport, text: text, count: ranked.playedBefore, fromQuiz: ranked.fromQuiz)
                ))
            if ranked.playedAtSkill > 0 {
                let times = ranked.playedAtSkill == 1 ? "once" : "\(ranked.playedAtSkill) times"
                parts.append(
                    (
                        weights.sport * share,
                        SessionReason(
                            kind: .level, text: "You have played it at \(skillName.lowercased()) level \(times).",
                            count: ranked.playedAtSkill)
                    ))
            }
        }
        if c.friends > 0 {
            let named = friendNames.prefix(2)
            let rest = c.friends - named.count
            var who = named.joined(separator: " and ")
            if named.isEmpty {
                who = c.friends == 1 ? "A friend" : "\(c.friends) friends"
            } else if rest > 0 {
                who = named.joined(separator: ", ") + " and \(rest) more"
            }
            let verb = c.friends == 1 ? "is" : "are"
            parts.append(
                (
                    weights.friends * Double(c.friends),
                    SessionReason(kind: .friends, text: "\(who) \(verb) playing.", count: c.friends)
                ))
        }
        if c.playersInPreferredGenders > 0 {
            let n = c.playersInPreferredGenders
            parts.append(
                (
                    weights.preferredGenders * Double(n),
                    SessionReason(
                        kind: .genders, text: "\(n) \(n == 1 ? "player is" : "players are") of the genders you prefer.",
                        count: n)
                ))
        }
        if c.playersInPreferredAgeGroups > 0 {
            let n = c.playersInPreferredAgeGroups
            parts.append(
                (
                    weights.preferredAgeGroups * Double(n),
                    SessionReason(
                        kind: .ageGroups,
                        text: "\(n) \(n == 1 ? "player is" : "players are") in the age groups you prefer.", count: n)
                ))
        }
        if ranked.playedAtHour > 0, ranked.totalPlayed > 0 {
            let n = ranked.playedAtHour
            let hour = c.localHour < 10 ? "0\(c.localHour):00" : "\(c.localHour):00"
            parts.append(
                (
                    weights.time * Double(n) / Double(ranked.totalPlayed),
                    SessionReason(
                        kind: .time,
                        text: "You have played \(n == 1 ? "once" : "\(n) times") around \(hour).", count: n,
                        hour: c.localHour)
                ))
        }
        var result = parts.sorted { $0.weight > $1.weight }.map(\.reason)
        result.append(SessionReason(kind: .distance, text: distanceText(c.distance), distanceMeters: c.distance))
        return result
    }

    /// "800 m away" / "2.4 km away".
    public static func distanceText(_ meters: Double) -> String {
        if meters < 1000 { return "\(Int((meters / 50).rounded()) * 50) m away." }
        return String(format: "%.1f km away.", meters / 1000)
    }
}
