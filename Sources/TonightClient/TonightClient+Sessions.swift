import Foundation
import OpenAPIRuntime

extension TonightClient {
    // MARK: Sports sessions

    /// The sports catalogue.
    public func sports() async throws -> [SportInfo] {
        try await call {
            guard case .ok(let ok) = try await api.listSports(), case .json(let list) = ok.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return list.items
        }
    }

    /// Adds a sport to the catalogue (admins); a taken slug throws code `sport_exists`.
    public func createSport(slug: String, name: String, icon: String? = nil) async throws -> SportInfo {
        try await call {
            guard
                case .created(let created) = try await api.createSport(
                    body: .json(.init(slug: slug, name: name, icon: icon))),
                case .json(let sport) = created.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return sport
        }
    }

    /// Creates a session; the signed-in user is its first player.
    public func createSession(_ input: SessionInput) async throws -> Event {
        try await call {
            guard case .created(let created) = try await api.createSession(body: .json(input)),
                case .json(let event) = created.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return event
        }
    }

    /// Changes a session (its creator).
    public func updateSession(id: String, _ patch: SessionPatch) async throws -> Event {
        try await call {
            guard case .ok(let ok) = try await api.updateSession(path: .init(eventId: id), body: .json(patch)),
                case .json(let event) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return event
        }
    }

    /// Deletes a session (its creator); the other players are told.
    public func deleteSession(id: String) async throws {
        try await call {
            guard case .noContent = try await api.deleteSession(path: .init(eventId: id)) else {
                throw TonightError.unexpectedResponse(status: 0)
            }
        }
    }

    /// Takes a seat: a full session throws a ``TonightError`` with code `session_full`.
    public func joinSession(id: String) async throws -> Attendance {
        try await attend(eventID: id, as: .going)
    }

    /// Gives the seat back.
    public func leaveSession(id: String) async throws {
        try await leave(eventID: id)
    }

    /// Sessions matching the filters (see ``SessionSearch``).
    public func sessions(_ search: SessionSearch) async throws -> Page<Event> {
        try await call {
            guard case .ok(let ok) = try await api.searchSessions(query: search), case .json(let page) = ok.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Who plays in a session.
    public func players(sessionID: String) async throws -> [PublicProfile] {
        try await call {
            guard case .ok(let ok) = try await api.listSessionPlayers(path: .init(eventId: sessionID)),
                case .json(let list) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return list.items
        }
    }

    /// The signed-in user's sessions and events by day (`from`/`to` as `YYYY-MM-DD`).
    public func calendar(from: String? = nil, to: String? = nil, timeZone: String? = nil) async throws
        -> TonightCalendar
    {
        try await call {
            guard case .ok(let ok) = try await api.getMyCalendar(query: .init(from: from, to: to, timeZone: timeZone)),
                case .json(let calendar) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return calendar
        }
    }

    /// A secret iCalendar feed URL for phones to subscribe to (replaces the previous one).
    public func calendarSubscriptionURL() async throws -> URL {
        try await call {
            guard case .ok(let ok) = try await api.createCalendarSubscription(), case .json(let body) = ok.body,
                let url = URL(string: body.url, relativeTo: serverURL)?.absoluteURL
            else { throw TonightError.unexpectedResponse(status: 0) }
            return url
        }
    }

    /// A user's sports statistics.
    public func stats(username: String) async throws -> PlayerStats {
        try await call {
            guard case .ok(let ok) = try await api.getPlayerStats(path: .init(username: username)),
                case .json(let stats) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return stats
        }
    }

    /// Replaces the preferences quiz answers.
    public func setPreferences(_ preferences: Preferences) async throws -> Preferences {
        try await call {
            guard case .ok(let ok) = try await api.putMyPreferences(body: .json(preferences)),
                case .json(let stored) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return stored
        }
    }

    // MARK: Recommendations

    /// Sessions for the signed-in user, best first, each with its reasons.
    public func recommendedSessions(near: String? = nil, limit: Int? = nil) async throws -> [SessionRecommendation] {
        try await call {
            guard case .ok(let ok) = try await api.recommendSessions(query: .init(near: near, limit: limit)),
                case .json(let list) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return list.items
        }
    }

    /// Explore cards; `refresh` brings dismissed ones back when nothing else is left.
    public func exploreCards(near: String? = nil, limit: Int? = nil, refresh: Bool = false) async throws
        -> EventRecommendations
    {
        try await call {
            guard
                case .ok(let ok) = try await api.recommendEvents(
                    query: .init(near: near, limit: limit, refresh: refresh ? true : nil)),
                case .json(let list) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return list
        }
    }

    /// Swipes a recommended session or event away, optionally saying why.
    public func dismiss(eventID: String, reason: DismissalReason? = nil) async throws {
        try await call {
            guard
                case .noContent = try await api.dismissRecommendation(
                    body: .json(.init(eventId: eventID, reason: reason)))
            else { throw TonightError.unexpectedResponse(status: 0) }
        }
    }
}
