import Foundation
import TonightAPI
import TonightCore

extension APIHandlers {
    func putMyPreferences(_ input: Operations.PutMyPreferences.Input) async throws
        -> Operations.PutMyPreferences.Output
    {
        try await answer {
            let caller = try RequestInfo.requireMember()
            guard case .json(let body) = input.body else { throw APIError.badRequest("Send JSON.") }
            guard var user = try await users.find(id: caller.userID) else { throw Self.accountGone }
            let issues = PreferencesRules.issues(body, sports: Set(try await assembler.sports().keys))
            guard issues.isEmpty else {
                // The field paths read from the preferences document itself here.
                throw APIError.validation(
                    issues.map { .init(field: String($0.field.dropFirst("preferences.".count)), code: $0.code, message: $0.message) })
            }
            user.preferences = PreferencesRules.merge(body, into: "{}")
            user.updatedAt = Clock.millis()
            try await users.updateProfile(user)
            return .ok(.init(body: .json(PreferencesRules.decode(user.preferences))))
        }
    }

    /// How far ahead session recommendations look.
    static let recommendationHorizon: Int64 = 14 * 86_400_000

    func recommendSessions(_ input: Operations.RecommendSessions.Input) async throws
        -> Operations.RecommendSessions.Output
    {
        try await answer {
            let caller = try RequestInfo.requireMember()
            let limit = try Paging.limit(input.query.limit)
            guard let user = try await users.find(id: caller.userID) else { throw Self.accountGone }
            var issues: [FieldIssue] = []
            let (near, _) = Paging.near(input.query.near, radius: nil, issues: &issues)
            guard issues.isEmpty else { throw APIError.validation(issues) }
            guard let center = near ?? geo.homeCity(user.homeCity)?.location else {
                throw APIError.validation([
                    .init(field: "near", code: "required", message: "Give near=lat,lon or set a home city.")
                ])
            }
            let preferences = PreferencesRules.decode(user.preferences)
            let now = Clock.millis()
            let today = CalendarDate(date: Date())
            let filter = CandidateFilter(
                userID: user.id, center: center, radius: Double(preferences.radiusMeters ?? 10_000), from: now,
                until: now + Self.recommendationHorizon, notWanted: preferences.sportsNotWanted ?? [],
                preferredGenders: (preferences.preferredGenders ?? []).map(\.rawValue),
                birthDates: (preferences.preferredAgeGroups ?? []).compactMap { AgeGroup(rawValue: $0.rawValue) }.map {
                    let range = $0.birthDates(today: today)
                    return (range.after?.description, range.through?.description)
                }, avoided: try await sessions.avoidedPlayers(of: user.id))
            let candidates = try await sessions.candidates(filter)
            let taste = SessionTaste(
                quizSports: Set(preferences.sportsPlayed ?? []),
                played: try await sessions.played(by: user.id, before: now).map { ($0.sport, $0.skill, $0.sessions) },
                dismissals: try await sessions.dismissals(of: user.id).map(\.dismissal))
            let ranked = Array(
                SessionRanking.rank(candidates, taste: taste, center: center, weights: config.sessionWeights)
                    .prefix(limit))
            let ids = ranked.map(\.candidate.id)
            let records = try await events.find(ids: ids)
            let assembled = try await assembler.assemble(
                ids.compactMap { records[$0] }, callerID: user.id, distanceFrom: center)
            let byID = Dictionary(assembled.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let friendsIn = try await sessions.friendsGoing(of: user.id, in: ids.filter { id in
                ranked.contains { $0.candidate.id == id && $0.candidate.friends > 0 }
            })
            let names = try await users.find(ids: friendsIn.values.flatMap { $0 })
            let items: [Components.Schemas.SessionRecommendation] = ranked.compactMap { entry in
                guard let event = byID[entry.candidate.id] else { return nil }
                let friendNames = (friendsIn[entry.candidate.id] ?? []).compactMap { names[$0] }.map {
                    $0.displayName ?? $0.username ?? "A friend"
                }
                return .init(
                    event: event, score: (entry.score * 100).rounded() / 100,
                    reasons: SessionRanking.reasons(
                        entry, sportName: event.session?.sport.name ?? entry.candidate.sport, friendNames: friendNames,
                        weights: config.sessionWeights))
            }
            return .ok(.init(body: .json(.init(items: items))))
        }
    }

    func dismissRecommendation(_ input: Operations.DismissRecommendation.Input) async throws
        -> Operations.DismissRecommendation.Output
    {
        try await answer {
            let caller = try RequestInfo.requireMember()
            guard case .json(let body) = input.body else { throw APIError.badRequest("Send JSON.") }
            let event = try await findEvent(body.eventId)
            let place = try await places.find(id: event.placeID)
            let dismissal = SessionDismissal(
                reason: body.reason.flatMap { DismissalReason(rawValue: $0.rawValue) }, sport: event.sport,
                localHour: event.localTime.flatMap { Int($0.prefix(2)) }, location: place?.location)
            try await sessions.dismiss(userID: caller.userID, eventID: event.id, dismissal: dismissal, now: Clock.millis())
            return .noContent(.init())
        }
    }
}
