import Foundation
import TonightAPI
import TonightCore

/// Nearby-places pages written from bytes kept per place (``NearbyIndex``): a place's JSON is
/// encoded once, by the API's own encoder, without the two fields that change with each request —
/// `openState` (the hour) and `distanceMeters` (the caller's position) — and a page is those bytes
/// with the two fields written in front. Encoding twenty typed places was a fifth of a page's CPU.
/// The answer is the typed path's in all but the order of an object's keys (which JSON leaves free,
/// and the typed path does not keep either).
enum PlaceJSON {
    /// `place` as the API writes it, less `openState` and `distanceMeters`: the bytes after its
    /// opening `{` (at least one field, then `}`); `nil` if it cannot be encoded.
    static func fragment(_ place: PlaceRecord, encoder: JSONEncoder) -> [UInt8]? {
        let value = Components.Schemas.Place(place, distance: nil, state: .unknown)
        guard let data = try? encoder.encode(value) else { return nil }
        var bytes = [UInt8](data)
        guard bytes.first == UInt8(ascii: "{"), let pair = topLevelPair(named: "openState", in: bytes) else {
            return nil
        }
        bytes.removeSubrange(pair)
        bytes.removeFirst()
        return bytes.first == UInt8(ascii: "\"") ? bytes : nil
    }

    /// A page: `{"items":[…],"nextCursor":…}` from each item's fragment, distance and state.
    static func page(
        _ items: [(fragment: [UInt8], distance: Double?, state: Components.Schemas.OpenState)], next: String?
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(items.reduce(64) { $0 + $1.fragment.count + 64 })
        out.append(contentsOf: #"{"items":["#.utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"openState":""#.utf8)
            out.append(contentsOf: item.state.rawValue.utf8)
            out.append(contentsOf: #"","#.utf8)
            if let distance = item.distance {
                out.append(contentsOf: #""distanceMeters":"#.utf8)
                out.append(contentsOf: number(Components.Schemas.Place.shown(distance)).utf8)
                out.append(UInt8(ascii: ","))
            }
            out.append(contentsOf: item.fragment)
        }
        out.append(UInt8(ascii: "]"))
        if let next {
            // A cursor is base64url: nothing in it needs escaping.
            out.append(contentsOf: #","nextCursor":""#.utf8)
            out.append(contentsOf: next.utf8)
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A distance as the API's encoder writes a `Double`: its shortest form, without a trailing
    /// `.0` (metres to the decimetre never reach the exponent form; that falls back to the encoder).
    static func number(_ value: Double) -> String {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        guard text.contains(where: { $0 == "e" || $0 == "n" || $0 == "i" }) else { return text }
        return (try? String(decoding: JSONEncoder().encode(value), as: UTF8.self)) ?? "0"
    }

    /// The byte range of the `"name":value` pair of the outermost object in `json`, with the comma
    /// that joins it to a neighbour (a string value only; keys and strings inside nested objects
    /// or strings do not count).
    static func topLevelPair(named name: String, in json: [UInt8]) -> Range<Int>? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        let key = Array("\"\(name)\":\"".utf8)
        var depth = 0
        var index = 0
        while index < json.count {
            let byte = json[index]
            if byte == quote {
                if depth == 1, json[index...].starts(with: key) {
                    // The value: a string; find its closing quote.
                    var end = index + key.count
                    while end < json.count, json[end] != quote {
                        end += json[end] == backslash ? 2 : 1
                    }
                    end += 1
                    if end < json.count, json[end] == UInt8(ascii: ",") { return index..<(end + 1) }
                    if index > 0, json[index - 1] == UInt8(ascii: ",") { return (index - 1)..<end }
                    return index..<end
                }
                // Skip the string (a key or a value).
                index += 1
                while index < json.count, json[index] != quote {
                    index += json[index] == backslash ? 2 : 1
                }
            } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                depth -= 1
            }
            index += 1
        }
        return nil
    }
}
