import Foundation

/// A WGS 84 position in degrees.
public struct GeoPoint: Sendable, Hashable, Codable {
    /// Latitude, −90…90.
    public var latitude: Double
    /// Longitude, −180…180.
    public var longitude: Double

    /// A point without checks; use ``validated(latitude:longitude:)`` for input from outside.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Mean Earth radius in metres (IUGG), used for every distance in Tonight.
    public static let earthRadius = 6_371_008.8

    /// The field issues of a coordinate pair: finite, latitude −90…90, longitude −180…180.
    /// `latitudeField`/`longitudeField` name the fields in the error.
    public static func issues(
        latitude: Double, longitude: Double, latitudeField: String = "lat", longitudeField: String = "lon"
    ) -> [FieldIssue] {
        var issues: [FieldIssue] = []
        if !latitude.isFinite || !(-90...90).contains(latitude) {
            issues.append(
                FieldIssue(field: latitudeField, code: "out_of_range", message: "Latitude must be between -90 and 90."))
        }
        if !longitude.isFinite || !(-180...180).contains(longitude) {
            issues.append(
                FieldIssue(
                    field: longitudeField, code: "out_of_range", message: "Longitude must be between -180 and 180."))
        }
        return issues
    }

    /// Great-circle distance in metres (haversine).
    public func distance(to other: GeoPoint) -> Double {
        let φ1 = latitude * .pi / 180, φ2 = other.latitude * .pi / 180
        let Δφ = φ2 - φ1
        let Δλ = (other.longitude - longitude) * .pi / 180
        let a = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * GeoPoint.earthRadius * asin(min(1, sqrt(a)))
    }
}
