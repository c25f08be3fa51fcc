import Foundation
import TonightCore

/// Playmate's recommendations: filters in SQL (``SessionRepository/candidates(_:)``), the
/// weighted formula and the dismissal penalties in ``SessionRanking``. Computed per request.
struct SessionRecommender: Sendable {
    let sessions: SessionRepository
    let weights: SessionWeights

    /// How far ahead recommendations look.
    static let horizon: Int64 = 14 * 86_400_000
    /// The radius when the preferences give none.
    static let defaultRadius = 10_000

    /// The best `limit` sessions for `user` around `center`.
    func recommend(
        user: UserRecord, preferences: PreferencesDocument, center: GeoPoint, limit: Int, now: Date
    ) async throws -> [RankedSession] {
        let millis = Clock.millis(now)
        let today = CalendarDate(date: now)
        let filter = CandidateFilter(
            userID: user.id, center: center, radius: Double(preferences.radiusMeters ?? Self.defaultRadius),
            from: millis, until: millis + Self.horizon, notWanted: preferences.sportsNotWanted ?? [],
            preferredGenders: (preferences.preferredGenders ?? []).map(\.rawValue),
            birthDates: (preferences.preferredAgeGroups ?? []).compactMap { AgeGroup(rawValue: $0.rawValue) }.map {
                let range = $0.birthDates(today: today)
                return (range.after?.description, range.through?.description)
            }, avoided: try await sessions.avoidedPlayers(of: user.id))
        let candidates = try await sessions.candidates(filter)
        let taste = SessionTaste(
            quizSports: Set(preferences.sportsPlayed ?? []),
            played: try await sessions.played(by: user.id, before: millis).map { ($0.sport, $0.skill, $0.sessions) },
            hours: try await sessions.playedHours(by: user.id, before: millis),
            dismissals: try await sessions.dismissals(of: user.id).map(\.dismissal))
        return Array(SessionRanking.rank(candidates, taste: taste, center: center, weights: weights).prefix(limit))
    }
}
