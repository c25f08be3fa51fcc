import Crypto
import Foundation
import TonightAPI
import TonightCore

/// Validation and application of session creation and edits. Session fields are checked here;
/// name, notes, place, date, time and duration go through ``EventEdit`` so sessions follow the
/// same rules as other events. Every invalid field is reported at once.
struct SessionEdit {
    let places: PlaceRepository
    let catalog: CatalogRepository
    let geo: GeoService
    let sports: [String: Sport]

    /// Applies `patch` to `event`; returns a spot place to store first when the session moves to
    /// coordinates and a label that no stored spot has yet.
    func apply(_ patch: Components.Schemas.SessionPatch, to event: inout EventRecord, creating: Bool) async throws
        -> PlaceRecord?
    {
        var issues: [FieldIssue] = []
        var sport = event.sport.flatMap { sports[$0] }
        if let slug = patch.sport {
            if let found = sports[slug.lowercased()] {
                sport = found
                event.sport = found.slug
            } else {
                issues.append(.init(field: "sport", code: "not_found", message: "No such sport; see GET /v1/sports."))
            }
        }
        if let skill = patch.skill { event.skill = skill.rawValue }
        if let capacity = patch.capacity {
            if !(2...1000).contains(capacity) {
                issues.append(.init(field: "capacity", code: "out_of_range", message: "Use 2 to 1000 players."))
            } else if !creating && Int64(capacity) < event.goingCount {
                issues.append(
                    .init(
                        field: "capacity", code: "below_players",
                        message: "\(event.goingCount) players are going; the capacity cannot be lower."))
            } else {
                event.capacity = capacity
            }
        }
        if let minutes = patch.durationMinutes, !(15...1440).contains(minutes) {
            issues.append(.init(field: "durationMinutes", code: "out_of_range", message: "Use 15 to 1440 minutes."))
        }
        if patch.placeId != nil && patch.spot != nil {
            issues.append(.init(field: "spot", code: "conflict", message: "Give a placeId or a spot, not both."))
        } else if creating && patch.placeId == nil && patch.spot == nil {
            issues.append(.init(field: "placeId", code: "required", message: "Give a placeId or a spot."))
        }
        var spot: PlaceRecord?
        var newSpot: PlaceRecord?
        if let input = patch.spot, patch.placeId == nil {
            do {
                (spot, newSpot) = try await self.spot(input, creator: event.organizerID)
            } catch let error as APIError {
                issues += error.fields
            }
        }
        var name = patch.name
        if creating && name == nil, let sport {
            name = "\(sport.name) (\(event.skill ?? "any"))"
        }
        let eventPatch = Components.Schemas.EventPatch(
            name: name, description: patch.notes, placeId: patch.placeId, localDate: patch.localDate,
            localTime: patch.localTime, durationMinutes: patch.durationMinutes)
        try await EventEdit(places: places, catalog: catalog).apply(
            eventPatch, to: &event, creating: creating, knownPlace: spot, earlier: issues)
        return newSpot
    }

    /// The stored spot with these coordinates (to 5 decimals, about a metre) and label (folded), or
    /// a new one to store.
    private func spot(_ input: Components.Schemas.Spot, creator: String?) async throws -> (PlaceRecord, PlaceRecord?) {
        let now = Clock.millis()
        var place = PlaceRecord(
            id: Identifier.make(), name: "", category: PlaceCategory.other.rawValue, latitude: 0, longitude: 0,
            timeZone: "UTC", source: PlaceRepository.spotSource, createdBy: creator, createdAt: now, updatedAt: now)
        do {
            try PlaceEdit.apply(
                Components.Schemas.PlacePatch(name: input.label, location: input.location), to: &place, geo: geo)
        } catch let error as APIError {
            throw APIError.validation(
                error.fields.map {
                    .init(
                        field: "spot." + ($0.field == "name" ? "label" : $0.field), code: $0.code, message: $0.message)
                })
        }
        // Keyed like imported rows (`source:id`), so the primary key finds and dedupes spots.
        let key = String(format: "%.5f,%.5f ", place.latitude, place.longitude) + SearchText.fold(place.name)
        place.sourceID = SHA256.hash(data: Data(key.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
        place.id = "spot:" + place.sourceID!
        if let stored = try await places.find(id: place.id) { return (stored, nil) }
        return (place, place)
    }
}
