import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct RecommendationsHandlers: Sendable {
    let users: UserRepository
    let geo: GeoService
    let places: PlaceRepository
    let events: EventRepository
    let sessions: SessionRepository
    let config: AppConfig
    let eventService: EventService
    let people: People
    let recommender: EventRecommender
    let sessionRecommender: SessionRecommender
    let sessionCache: RecommendationCache<Components.Schemas.SessionRecommendationList>
    let cardCache: RecommendationCache<Components.Schemas.EventRecommendationList>

    func putMyPreferences(_ input: Operations.PutMyPreferences.Input) async throws
        -> Operations.PutMyPreferences.Output
    {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        guard var user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        let issues = PreferencesRules.issues(body, sports: Set(try await eventService.assembler.sports().keys))
        guard issues.isEmpty else {
            // The field paths read from the preferences document itself here.
            throw APIError.validation(
                issues.map {
                    .init(
                        field: String($0.field.dropFirst("preferences.".count)), code: $0.code, message: $0.message)
                })
        }
        user.preferences = PreferencesRules.merge(body, into: "{}")
        user.updatedAt = Clock.millis()
        try await users.updateProfile(user)
        return .ok(.init(body: .json(PreferencesRules.decode(user.preferences))))
    }

    func recommendSessions(_ input: Operations.RecommendSessions.Input) async throws
        -> Operations.RecommendSessions.Output
    {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        // Read before the first read of data: a change after it makes a different version.
        let version = await sessionCache.version()
        guard let user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        let center = try recommendationCenter(input.query.near, user: user)
        let list = try await sessionCache.answer(for: user.id, around: center, limit: limit, at: version) {
            try await recommendSessions(user: user, center: center, limit: limit)
        }
        return .ok(.init(body: .json(list)))
    }

    /// The ranked sessions for `user` around `center`, with the events, friends and reasons shown.
    private func recommendSessions(user: UserRecord, center: GeoPoint, limit: Int) async throws
        -> Components.Schemas.SessionRecommendationList
    {
        let ranked = try await sessionRecommender.recommend(
            user: user, preferences: PreferencesRules.decode(user.preferences), center: center, limit: limit,
            now: Date())
        let ids = ranked.map(\.candidate.id)
        let records = try await events.find(ids: ids)
        let assembled = try await eventService.assembler.assemble(
            ids.compactMap { records[$0] }, callerID: user.id, distanceFrom: center)
        let byID = Dictionary(assembled.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let friendsIn = try await sessions.friendsGoing(
            of: user.id, in: ranked.filter { $0.candidate.friends > 0 }.map(\.candidate.id))
        let names = try await users.find(ids: friendsIn.values.flatMap { $0 })
        let items: [Components.Schemas.SessionRecommendation] = ranked.compactMap { entry in
            guard let event = byID[entry.candidate.id] else { return nil }
            let friends = (friendsIn[entry.candidate.id] ?? []).compactMap { names[$0] }.filter { $0.username != nil }
            let reasons = SessionRanking.reasons(
                entry, sportName: event.session?.sport.name ?? entry.candidate.sport,
                skillName: entry.candidate.skill,
                friendNames: friends.map { $0.displayName ?? $0.username ?? "A friend" }, weights: config.sessionWeights
            )
            return .init(
                event: event, score: (entry.score * 100).rounded() / 100, reasons: reasons.map(\.text),
                why: reasons.map { reason in
                    let matched = [.sport, .level].contains(reason.kind)
                    return .init(
                        kind: .init(rawValue: reason.kind.rawValue) ?? .distance, text: reason.text,
                        sport: matched ? entry.candidate.sport : nil,
                        skill: reason.kind == .level ? .init(rawValue: entry.candidate.skill) : nil,
                        count: reason.count,
                        fromQuiz: reason.fromQuiz,
                        friends: reason.kind == .friends ? friends.prefix(3).map { .init($0) } : nil,
                        distanceMeters: reason.distanceMeters.map { ($0 * 10).rounded() / 10 }, hour: reason.hour)
                })
        }
        return .init(items: items)
    }

    func dismissRecommendation(_ input: Operations.DismissRecommendation.Input) async throws
        -> Operations.DismissRecommendation.Output
    {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        let event = try await eventService.find(body.eventId)
        let place = try await places.find(id: event.placeID)
        let dismissal = SessionDismissal(
            reason: body.reason.flatMap { DismissalReason(rawValue: $0.rawValue) }, sport: event.sport,
            localHour: event.localTime.flatMap { Int($0.prefix(2)) }, location: place?.location)
        try await sessions.dismiss(
            userID: caller.userID, eventID: event.id, dismissal: dismissal, now: Clock.millis())
        return .noContent(.init())
    }
}

extension RecommendationsHandlers {
    func recommendEvents(_ input: Operations.RecommendEvents.Input) async throws -> Operations.RecommendEvents.Output {
        let caller = try RequestInfo.requireMember()
        let limit = try Paging.limit(input.query.limit)
        // Read before the first read of data (see recommendSessions); a refresh is always made.
        let version = input.query.refresh == true ? nil : await cardCache.version()
        guard let user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        let center = try recommendationCenter(input.query.near, user: user)
        let list = try await cardCache.answer(for: user.id, around: center, limit: limit, at: version) {
            try await recommendEvents(user: user, center: center, limit: limit, refresh: input.query.refresh)
        }
        // A refresh may bring dismissed cards back: a write of the member's own, in a GET.
        if input.query.refresh == true { cardCache.wrote(user.id) }
        return .ok(.init(body: .json(list)))
    }

    /// The explore cards for `user` around `center`; with `refresh`, dismissed events come back
    /// when nothing else is left.
    private func recommendEvents(user: UserRecord, center: GeoPoint, limit: Int, refresh: Bool?) async throws
        -> Components.Schemas.EventRecommendationList
    {
        let preferences = PreferencesRules.decode(user.preferences)
        let now = Date()
        let ask = {
            try await recommender.cards(
                userID: user.id, center: center, radius: Double(preferences.radiusMeters ?? 25_000),
                budget: preferences.budget, favoriteCategories: preferences.favoriteCategories ?? [], limit: limit,
                now: now)
        }
        var (cards, coldStart) = try await ask()
        var refreshed = false
        if cards.isEmpty && refresh == true {
            // Nothing left: dismissed events (not sessions) come back.
            let dismissed = try await sessions.dismissals(of: user.id).map(\.eventID)
            let kinds = try await events.find(ids: dismissed)
            let eventIDs = dismissed.filter { kinds[$0].map { $0.kind != .session } ?? true }
            if !eventIDs.isEmpty {
                try await sessions.forgetDismissals(of: user.id, eventIDs: eventIDs)
                // A write in a GET, which the PostgreSQL middleware does not count.
                cardCache.cluster?.advance()
                (cards, coldStart) = try await ask()
                refreshed = true
            }
        }
        // With the recommender's catalogue, which reads categories afresh (the answer is kept).
        let assembler = EventAssembler(
            events: events, places: places, catalog: recommender.catalog, sessions: sessions)
        let assembled = try await assembler.assemble(cards.map(\.event), callerID: user.id, distanceFrom: center)
        let byID = Dictionary(assembled.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let items: [Components.Schemas.EventRecommendation] = cards.compactMap { card in
            guard let event = byID[card.event.id] else { return nil }
            return .init(
                event: event, score: (card.score * 1000).rounded() / 1000,
                similarTo: card.similarTo.map {
                    .init(id: $0.id, name: $0.name, imageURL: RemoteImages.link($0.imageURL, kind: .artists, id: $0.id))
                },
                reason: card.similarTo.map { "Similar to \($0.name)" } ?? "Popular tonight nearby")
        }
        return .init(items: items, coldStart: coldStart, refreshed: refreshed)
    }

    /// `near` if given, else the centre of the user's home city; a field error without either.
    func recommendationCenter(_ near: String?, user: UserRecord) throws -> GeoPoint {
        var issues: [FieldIssue] = []
        let (point, _) = Paging.near(near, radius: nil, issues: &issues)
        guard issues.isEmpty else { throw APIError.validation(issues) }
        guard let center = point ?? geo.homeCity(user.homeCity)?.location else {
            throw APIError.validation([
                .init(field: "near", code: "required", message: "Give near=lat,lon or set a home city.")
            ])
        }
        return center
    }
}
