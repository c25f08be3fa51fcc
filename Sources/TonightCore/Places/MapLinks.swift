import Foundation

/// Links that open a place in the phone's map apps (Playmate's "open in maps").
///
/// Both use documented URL forms: Apple Maps' `ll` + `q` parameters, and Google Maps' search URL
/// (`api=1`), which opens the app on phones and the website elsewhere. The name is a label; the
/// coordinates decide where the pin goes.
public enum MapLinks {
    /// `https://maps.apple.com/?ll=<lat>,<lon>&q=<name>`.
    public static func apple(_ point: GeoPoint, name: String) -> String {
        "https://maps.apple.com/?ll=\(coordinates(point))&q=\(escaped(name))"
    }

    /// `https://www.google.com/maps/search/?api=1&query=<lat>,<lon>`.
    public static func google(_ point: GeoPoint, name: String) -> String {
        "https://www.google.com/maps/search/?api=1&query=\(coordinates(point))"
    }

    /// `lat,lon` with six decimals (about 0.1 m), as `%.6f,%.6f` writes them, built by hand:
    /// `String(format:)` was a tenth of a nearby-places page.
    static func coordinates(_ point: GeoPoint) -> String {
        decimal(point.latitude) + "," + decimal(point.longitude)
    }

    static func decimal(_ value: Double) -> String {
        let magnitude = value.magnitude
        let scaled = magnitude * 1_000_000
        guard scaled < 1e15 else { return String(format: "%.6f", value) }
        // Round the exact product, as printf does: the residual comes from a fused multiply-add,
        // and a tie (an exact half) goes to the even neighbour.
        var lower = scaled.rounded(.down)
        var residual = (-lower).addingProduct(magnitude, 1_000_000)
        if residual < 0 {
            lower -= 1
            residual += 1
        } else if residual >= 1 {
            lower += 1
            residual -= 1
        }
        var micros = UInt64(lower)
        if residual > 0.5 {
            micros += 1
        } else if residual == 0.5 {
            guard (-scaled).addingProduct(magnitude, 1_000_000) == 0 else { return String(format: "%.6f", value) }
            if micros % 2 == 1 { micros += 1 }
        }
        let fraction = String(micros % 1_000_000)
        return (value.sign == .minus ? "-" : "") + String(micros / 1_000_000) + "."
            + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Percent-encodes everything but unreserved characters (RFC 3986: ASCII letters, digits and
    /// `-._~`), so `&`, `=` and `#` in a name cannot break the query.
    static func escaped(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 15)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
