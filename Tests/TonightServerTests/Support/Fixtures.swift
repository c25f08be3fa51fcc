import Foundation
import HummingbirdTesting
import NIOCore
import Testing
import TonightCore

@testable import TonightServer

/// A busy machine (the whole suite at once) can take longer than the default trust window between
/// two requests: these tests trust a version for 3 s so that the loop answers.
func patient(_ config: inout AppConfig) { config.feedCacheTrustMilliseconds = 3000 }

/// A moderator's access token.
func moderatorToken(_ services: AppServices, _ client: any TestClientProtocol, name: String = "mod") async throws
    -> String
{
    try await staffToken(services, client, name: name, role: .moderator)
}

/// An administrator's access token.
func adminToken(_ services: AppServices, _ client: any TestClientProtocol, name: String = "boss") async throws
    -> String
{
    try await staffToken(services, client, name: name, role: .admin)
}

/// The access token of a new account `name` with `role`.
func staffToken(_ services: AppServices, _ client: any TestClientProtocol, name: String, role: Role) async throws
    -> String
{
    _ = try await services.createUser(
        username: name, email: "\(name)@example.com", password: "a long enough passphrase", role: role)
    return try await client.logIn(name).json.accessToken
}

/// A `multipart/form-data` body with text fields and an optional file part named `media`.
func multipartBody(
    _ fields: [String: String], file: [UInt8]?, filename: String = "clip.mp4", type: String = "video/mp4"
)
    -> (body: ByteBuffer, contentType: String)
{
    let boundary = "tonight-\(UUID().uuidString)"
    var buffer = ByteBuffer()
    for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
        buffer.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n")
    }
    if let file {
        buffer.writeString(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"media\"; filename=\"\(filename)\"\r\nContent-Type: \(type)\r\n\r\n"
        )
        buffer.writeBytes(file)
        buffer.writeString("\r\n")
    }
    buffer.writeString("--\(boundary)--\r\n")
    return (buffer, "multipart/form-data; boundary=\(boundary)")
}

/// Inserts a ready post straight into storage (for feed and vote tests that need many).
@discardableResult
func insertPost(
    _ services: AppServices, author: String?, city: String = "Halifax$Nova Scotia$CA", place: String? = nil,
    tags: [String] = [], createdAt: Int64 = Clock.millis(), caption: String = ""
) async throws -> String {
    let id = Identifier.make()
    try await services.posts.posts.create(
        PostRecord(
            id: id, authorID: author, placeID: place, cityKey: city, caption: caption, status: .ready,
            mediaKind: .image, originalKey: "posts/\(id)/original.jpg", originalType: "image/jpeg",
            createdAt: createdAt, updatedAt: createdAt, tags: tags),
        job: nil)
    return id
}

extension TestClientProtocol {
    /// Makes `a` and `b` friends.
    func befriend(_ a: TestUser, _ b: TestUser) async throws {
        _ = try await send(.post, "/v1/me/friend-requests", json: ["userId": b.id], token: a.token)
        let accepted = try await send(.post, "/v1/me/friend-requests/\(a.id)/accept", token: b.token)
        #expect(accepted.status == .ok)
    }

    /// Opens the conversation of `a` with `b` and returns its id.
    func conversation(_ a: TestUser, with b: TestUser) async throws -> String {
        let opened = try await send(.post, "/v1/conversations", json: ["userId": b.id], token: a.token)
        #expect(opened.status == .ok, "\(opened.text)")
        return opened.json["id"] as? String ?? ""
    }

    @discardableResult
    func say(_ text: String, in conversation: String, as user: TestUser, clientId: String? = nil) async throws
        -> TestResponse
    {
        var body: JSON = ["text": text]
        if let clientId { body["clientId"] = clientId }
        return try await send(.post, "/v1/conversations/\(conversation)/messages", json: body, token: user.token)
    }

    /// The texts of a messages page.
    func texts(_ path: String, as user: TestUser) async throws -> [String] {
        let response = try await send(.get, path, token: user.token)
        #expect(response.status == .ok, "\(path): \(response.text)")
        return (response.json["items"] as? [JSON] ?? []).compactMap { $0["text"] as? String }
    }
}

extension Data {
    init?(base64URL: String) {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        self.init(base64Encoded: text)
    }

    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Creates a place as a moderator and returns its JSON.
@discardableResult
func createPlace(
    _ client: any TestClientProtocol, token: String, name: String, lat: Double, lon: Double, category: String = "bar",
    hours: String? = nil
) async throws -> JSON {
    var body: JSON = ["name": name, "category": category, "location": ["lat": lat, "lon": lon]]
    if let hours { body["openingHours"] = hours }
    let response = try await client.send(.post, "/v1/places", json: body, token: token)
    #expect(response.status == .created, "\(response.text)")
    return response.json
}

/// A local date `days` from today in `zone`, as `YYYY-MM-DD`.
func localDate(daysFromNow days: Int, zone: String) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: zone)!
    let date = calendar.date(byAdding: .day, value: days, to: Date())!
    let parts = calendar.dateComponents([.year, .month, .day], from: date)
    return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
}

/// Writes `text` to a temporary file and returns its path.
func temporaryFile(_ text: String, suffix: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tonight-\(UUID().uuidString)\(suffix)")
        .path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// A small event feed in the FORMATS.md layout. The event comes before its venue (a forward
/// reference), one event has no time (TBA), one refers to a venue that never appears.
func sampleFeed(date: String = "2031-03-14", time: String = "20:00", venue: String = "V1") -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <feed generated="2031-03-01T06:00:00Z">
      <categories>
        <category><id>10000</id><name>Music</name></category>
        <category><id>10001</id><name>Rock &amp; Pop</name><parent_id>10000</parent_id></category>
      </categories>
      <events>
        <event>
          <id>E1</id><name>Sigur Rós — Live</name><venue_id>\(venue)</venue_id><category_id>10001</category_id>
          <performers><artist_id>735647</artist_id><artist_id>1011</artist_id><artist_id>735647</artist_id></performers>
          <date>\(date)</date><time>\(time)</time><status>onsale</status>
          <url>https://tickets.example/event/E1</url><min_price>45.00</min_price><max_price>125.50</max_price>
        </event>
        <event>
          <id>E2</id><name>Rosalía</name><venue_id>V2</venue_id><category_id>10001</category_id>
          <performers><artist_id>2231</artist_id></performers><date>2031-03-15</date><status>onsale</status>
        </event>
        <event><id>E3</id><name>Ghost show</name><venue_id>NOPE</venue_id><date>2031-03-15</date></event>
        <event><id>E4</id><name>No venue</name><date>2031-03-15</date></event>
      </events>
      <artists>
        <artist><id>735647</id><name>Sigur Rós</name><category_id>10001</category_id></artist>
        <artist><id>1011</id><name>Jónsi</name><category_id>10001</category_id></artist>
        <artist><id>2231</id><name>Rosalía</name><category_id>10001</category_id></artist>
        <artist><id>4410</id><name>Rosa Quiet</name></artist>
      </artists>
      <venues>
        <venue><id>V1</id><name>The Wiltern</name><street>3790 Wilshire Blvd</street><city>Los Angeles</city>
          <state>CA</state><zip>90010</zip><country>US</country><latitude>34.0617</latitude><longitude>-118.3085</longitude></venue>
        <venue><id>V2</id><name>Palau Sant Jordi</name><city>Barcelona</city><country>ES</country></venue>
        <venue><id>V3</id><name>Hollywood Bowl</name><city>Los Angeles</city><country>US</country>
          <latitude>34.1122</latitude><longitude>-118.3391</longitude></venue>
      </venues>
    </feed>
    """
}
