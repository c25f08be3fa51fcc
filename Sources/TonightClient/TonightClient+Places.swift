import Foundation
import OpenAPIRuntime

/// A page of a list and the cursor of the next one (nil on the last page).
public struct Page<Item: Sendable>: Sendable {
    /// The items of this page.
    public var items: [Item]
    /// Pass to the same call to get the next page.
    public var nextCursor: String?
}

extension TonightClient {
    // MARK: Geo

    /// Cities whose name matches `query` (any case or accents), exact matches first, by population.
    public func geocode(_ query: String, country: String? = nil, limit: Int? = nil) async throws -> [City] {
        try await call {
            guard case .ok(let ok) = try await api.geocode(query: .init(q: query, country: country, limit: limit)),
                case .json(let list) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return list.items
        }
    }

    /// The city a point belongs to, with its `city$region$country` key and time zone.
    public func city(latitude: Double, longitude: Double) async throws -> City {
        try await call {
            guard case .ok(let ok) = try await api.reverseGeocode(query: .init(lat: latitude, lon: longitude)),
                case .json(let city) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return city
        }
    }

    // MARK: Places

    /// Places near a point, in a box, or matching text (see ``PlaceSearch``).
    public func places(_ search: PlaceSearch) async throws -> Page<Place> {
        try await call {
            guard case .ok(let ok) = try await api.listPlaces(query: search), case .json(let page) = ok.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// One place.
    public func place(id: String) async throws -> Place {
        try await call {
            guard case .ok(let ok) = try await api.getPlace(path: .init(placeId: id)), case .json(let place) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return place
        }
    }

    /// Adds a place (moderators and admins).
    public func createPlace(_ input: PlaceInput) async throws -> Place {
        try await call {
            guard case .created(let created) = try await api.createPlace(body: .json(input)),
                case .json(let place) = created.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return place
        }
    }

    /// Changes a place (moderators and admins); only the fields set change.
    public func updatePlace(id: String, _ patch: PlacePatch) async throws -> Place {
        try await call {
            guard case .ok(let ok) = try await api.updatePlace(path: .init(placeId: id), body: .json(patch)),
                case .json(let place) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return place
        }
    }

    /// Promotes a place in its city hub (admins): a higher tier comes first, with its tagline.
    public func setPromotion(placeID: String, _ promotion: PromotionInput) async throws -> Promotion {
        try await call {
            guard case .ok(let ok) = try await api.setPromotion(path: .init(placeId: placeID), body: .json(promotion)),
                case .json(let stored) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return stored
        }
    }

    // MARK: Events

    /// The event category tree.
    public func categories() async throws -> [Category] {
        try await call {
            guard case .ok(let ok) = try await api.listCategories(), case .json(let tree) = ok.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return tree.items
        }
    }

    /// Events matching `search` (tonight, this weekend, near a point, by category, artist, budget…).
    public func events(_ search: EventSearch) async throws -> Page<Event> {
        try await call {
            guard case .ok(let ok) = try await api.listEvents(query: search), case .json(let page) = ok.body else {
                throw TonightError.unexpectedResponse(status: 0)
            }
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// One event with its place, performers and change records.
    public func event(id: String) async throws -> Event {
        try await call {
            guard case .ok(let ok) = try await api.getEvent(path: .init(eventId: id)), case .json(let event) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return event
        }
    }

    /// Creates a party organised by the signed-in user.
    public func createEvent(_ input: EventInput) async throws -> Event {
        try await call {
            guard case .created(let created) = try await api.createEvent(body: .json(input)),
                case .json(let event) = created.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return event
        }
    }

    /// Changes an event (its organiser, or a moderator); place, start and status changes are recorded.
    public func updateEvent(id: String, _ patch: EventPatch) async throws -> Event {
        try await call {
            guard case .ok(let ok) = try await api.updateEvent(path: .init(eventId: id), body: .json(patch)),
                case .json(let event) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return event
        }
    }

    /// Cancels an event (its organiser, or a moderator).
    public func cancelEvent(id: String) async throws -> Event {
        try await call {
            guard case .ok(let ok) = try await api.cancelEvent(path: .init(eventId: id)),
                case .json(let event) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return event
        }
    }

    /// Who attends an event (its organiser and moderators only).
    public func attendees(eventID: String, status: AttendanceStatus? = nil, cursor: String? = nil) async throws
        -> Page<Attendee>
    {
        try await call {
            guard
                case .ok(let ok) = try await api.listAttendees(
                    path: .init(eventId: eventID), query: .init(status: status, cursor: cursor)),
                case .json(let page) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Says the signed-in user is going, interested or following; returns the event's counts.
    public func attend(eventID: String, as status: AttendanceStatus) async throws -> Attendance {
        try await call {
            guard
                case .ok(let ok) = try await api.setAttendance(
                    path: .init(eventId: eventID), body: .json(.init(status: status))),
                case .json(let attendance) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return attendance
        }
    }

    /// Stops attending or following.
    public func leave(eventID: String) async throws {
        _ = try await call { try await api.deleteAttendance(path: .init(eventId: eventID)) }
    }

    /// Events the signed-in user attends, follows or organises; only of `kinds` when given (an
    /// events app asks for `[.show, .party]`, a sports app for `[.session]`).
    public func myEvents(status: AttendanceStatus? = nil, kinds: [EventKind]? = nil, cursor: String? = nil)
        async throws -> Page<Event>
    {
        try await call {
            guard
                case .ok(let ok) = try await api.listMyEvents(query: .init(status: status, kind: kinds, cursor: cursor)),
                case .json(let page) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    // MARK: Artists

    /// Search as you type: artists with a word starting with each word typed, most popular first.
    public func suggestArtists(_ text: String, limit: Int? = nil) async throws -> [Artist] {
        try await call {
            guard case .ok(let ok) = try await api.suggestArtists(query: .init(q: text, limit: limit)),
                case .json(let list) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return list.items
        }
    }

    /// An artist with upcoming events and similar artists.
    public func artist(id: String) async throws -> ArtistDetail {
        try await call {
            guard case .ok(let ok) = try await api.getArtist(path: .init(artistId: id)),
                case .json(let detail) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return detail
        }
    }

    /// Artists of a category and its descendants, most popular first.
    public func artists(inCategory category: String, cursor: String? = nil) async throws -> Page<Artist> {
        try await call {
            guard case .ok(let ok) = try await api.listArtists(query: .init(category: category, cursor: cursor)),
                case .json(let page) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// The signed-in user's favourite artists, most recently added first.
    public func favoriteArtists(cursor: String? = nil) async throws -> Page<Artist> {
        try await call {
            guard case .ok(let ok) = try await api.listFavoriteArtists(query: .init(cursor: cursor)),
                case .json(let page) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Adds or removes a favourite artist (both idempotent).
    public func setFavorite(artistID: String, _ favorite: Bool) async throws {
        _ = try await call {
            if favorite {
                _ = try await api.addFavoriteArtist(path: .init(artistId: artistID))
            } else {
                _ = try await api.removeFavoriteArtist(path: .init(artistId: artistID))
            }
        }
    }

    /// Upcoming events of the signed-in user's favourite artists, by date.
    public func favoritesFeed(cursor: String? = nil) async throws -> Page<Event> {
        try await call {
            guard case .ok(let ok) = try await api.favoritesFeed(query: .init(cursor: cursor)),
                case .json(let page) = ok.body
            else { throw TonightError.unexpectedResponse(status: 0) }
            return Page(items: page.items, nextCursor: page.nextCursor)
        }
    }
}
