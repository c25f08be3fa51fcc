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

    static func coordinates(_ point: GeoPoint) -> String {
        String(format: "%.6f,%.6f", point.latitude, point.longitude)
    }

    /// Percent-encodes everything but unreserved characters (RFC 3986), so `&`, `=` and `#` in a
    /// name cannot break the query.
    static func escaped(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
