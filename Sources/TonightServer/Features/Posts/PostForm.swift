import Foundation
import OpenAPIRuntime
import TonightAPI
import TonightCore

/// The form of `POST /v1/posts`: its multipart parts read, and its fields checked into a
/// ``NewPost`` (every bad field listed at once; the place gives the city when there is one).
struct PostForm: Sendable {
    let places: PlaceRepository
    let events: EventRepository

    /// Reads the form: the media part into `upload` (one, required) and the small text fields.
    /// A malformed body is a 400 (`invalid_upload`); trouble writing the file is the server's.
    static func read(
        _ form: MultipartBody<Operations.CreatePost.Input.Body.MultipartFormPayload>, into upload: UploadFile
    )
        async throws -> (fields: [String: String], container: MediaContainer)
    {
        var fields: [String: String] = [:]
        var container: MediaContainer?
        do {
            for try await part in form {
                switch part {
                case .media(let media):
                    guard container == nil else { throw APIError.badRequest("Send one media file.") }
                    do {
                        container = try await upload.write(media.payload.body, field: "media")
                    } catch let error as APIError { throw error } catch { throw OwnFailure(error: error) }
                case .placeId(let p): fields["placeId"] = try await text(p.payload.body, "placeId")
                case .city(let p): fields["city"] = try await text(p.payload.body, "city")
                case .eventId(let p): fields["eventId"] = try await text(p.payload.body, "eventId")
                case .caption(let p): fields["caption"] = try await text(p.payload.body, "caption")
                case .tags(let p): fields["tags"] = try await text(p.payload.body, "tags")
                case .songTitle(let p): fields["songTitle"] = try await text(p.payload.body, "songTitle")
                case .songArtist(let p): fields["songArtist"] = try await text(p.payload.body, "songArtist")
                case .songUri(let p): fields["songUri"] = try await text(p.payload.body, "songUri")
                case .undocumented: continue
                }
            }
        } catch let failure as OwnFailure {
            throw failure.error
        } catch let error as APIError {
            throw error
        } catch {
            // The multipart body itself is malformed (or lacks the media part).
            throw APIError.badRequest("The upload could not be read: \(error)", code: .invalidUpload)
        }
        guard let container else {
            throw APIError.validation([.init(field: "media", code: "required", message: "Attach a video or image.")]
            )
        }
        return (fields, container)
    }

    /// The text of a small multipart field (at most 4 KB).
    private static func text(_ body: HTTPBody, _ field: String) async throws -> String {
        do {
            return try await String(collecting: body, upTo: 4096)
        } catch {
            throw APIError.validation([.init(field: field, code: "too_long", message: "This field is too long.")])
        }
    }

    /// The upload's fields, validated; the place gives the city when there is one.
    func validated(_ fields: [String: String]) async throws -> NewPost {
        var issues: [FieldIssue] = []
        func check<T>(_ result: Result<T, FieldIssue>) -> T? {
            switch result {
            case .success(let value): return value
            case .failure(let issue):
                issues.append(issue)
                return nil
            }
        }
        let caption = check(PostRules.caption(fields["caption"])) ?? ""
        let tags = check(PostRules.tags(caption: caption, explicit: fields["tags"])) ?? []
        func optional(_ name: String, limit: Int = 200) -> String? {
            guard let value = fields[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else {
                return nil
            }
            guard value.count <= limit, TextRules.isClean(value) else {
                issues.append(.init(field: name, code: "invalid", message: "Use up to \(limit) plain characters."))
                return nil
            }
            return value
        }
        let songTitle = optional("songTitle")
        let songArtist = optional("songArtist")
        let songURI = optional("songUri", limit: 100)
        if let songURI, !PostRules.isSpotifyTrackURI(songURI) {
            issues.append(
                .init(
                    field: "songUri", code: "invalid",
                    message: "Use a Spotify track URI: spotify:track: and 22 letters and digits."))
        }
        if (songURI != nil || songArtist != nil) && songTitle == nil {
            issues.append(.init(field: "songTitle", code: "required", message: "Give the song's title."))
        }
        var cityKey = optional("city")
        if let key = cityKey, !AreaKey.isCity(key) {
            issues.append(.init(field: "city", code: "invalid", message: "Use a city key: city$region$country."))
            cityKey = nil
        }
        let placeID = optional("placeId", limit: 100)
        let eventID = optional("eventId", limit: 100)
        guard issues.isEmpty else { throw APIError.validation(issues) }
        if let placeID {
            guard let place = try await places.find(id: placeID) else {
                throw APIError.validation([.init(field: "placeId", code: "not_found", message: "No such place.")])
            }
            cityKey = place.cityKey ?? cityKey
        }
        if let eventID {
            guard let event = try await events.find(id: eventID) else {
                throw APIError.validation([.init(field: "eventId", code: "not_found", message: "No such event.")])
            }
            if placeID == nil, cityKey == nil, let place = try await places.find(id: event.placeID) {
                cityKey = place.cityKey
            }
        }
        guard let cityKey else {
            throw APIError.validation([
                .init(field: "city", code: "required", message: "Give a place, or the city key for a pregame post.")
            ])
        }
        return NewPost(
            placeID: placeID, cityKey: cityKey, eventID: eventID, caption: caption, tags: tags, songTitle: songTitle,
            songArtist: songArtist, songURI: songURI)
    }
}

/// A failure of the server's own (writing the upload to disk), told apart from a malformed body.
private struct OwnFailure: Error {
    var error: any Error
}
