import Foundation

/// A fixed 0.02° × 0.02° grid over the globe. Each place stores its cell number; a radius query
/// turns into a few ranges of cell numbers (one or two per grid row), which an ordinary B-tree index
/// answers on SQLite and PostgreSQL alike. Exact distances are checked afterwards.
public enum PlaceGrid {
    /// Degrees per cell side.
    public static let step = 0.02
    static let rows = 9000
    static let columns = 18000
    /// Metres per degree of latitude.
    public static let metresPerDegree = GeoPoint.earthRadius * .pi / 180

    /// The cell containing `point`.
    public static func cell(of point: GeoPoint) -> Int64 {
        Int64(row(point.latitude)) * Int64(columns) + Int64(column(point.longitude))
    }

    /// Inclusive cell-number ranges covering every point within `radius` metres of `center`,
    /// or nil when the circle covers so many rows that a plain latitude band is the better query.
    public static func cellRanges(around center: GeoPoint, radius: Double, maxRows: Int = 40)
        -> [ClosedRange<Int64>]?
    {
        let band = latitudeBand(around: center, radius: radius)
        let firstRow = row(band.lowerBound), lastRow = row(band.upperBound)
        guard lastRow - firstRow + 1 <= maxRows else { return nil }
        let spans = longitudeSpans(around: center, radius: radius, band: band)
        var ranges: [ClosedRange<Int64>] = []
        for r in firstRow...lastRow {
            let base = Int64(r) * Int64(columns)
            for span in spans {
                let range = (base + Int64(column(span.lowerBound)))...(base + Int64(column(span.upperBound)))
                if let last = ranges.last, last.upperBound + 1 == range.lowerBound {
                    ranges[ranges.count - 1] = last.lowerBound...range.upperBound
                } else {
                    ranges.append(range)
                }
            }
        }
        return ranges
    }

    /// The latitudes a circle can reach, clamped to the poles.
    public static func latitudeBand(around center: GeoPoint, radius: Double) -> ClosedRange<Double> {
        let dLat = radius / metresPerDegree
        return max(-90, center.latitude - dLat)...min(90, center.latitude + dLat)
    }

    /// The longitude spans (one, or two across the antimeridian; the whole circle of longitude near
    /// a pole) a circle can reach within `band`.
    public static func longitudeSpans(around center: GeoPoint, radius: Double, band: ClosedRange<Double>)
        -> [ClosedRange<Double>]
    {
        let whole = [-180.0...180.0]
        if band.lowerBound <= -90 || band.upperBound >= 90 { return whole }
        let widest = max(abs(band.lowerBound), abs(band.upperBound))
        let cosine = cos(widest * .pi / 180)
        guard cosine > 1e-9 else { return whole }
        let dLon = radius / (metresPerDegree * cosine)
        guard dLon < 180 else { return whole }
        let low = center.longitude - dLon, high = center.longitude + dLon
        if low < -180 { return [(low + 360)...180, -180...high] }
        if high > 180 { return [low...180, -180...(high - 360)] }
        return [low...high]
    }

    /// The radius of the next circle of a nearest-first search, when one of `radius` held `found`
    /// of the `wanted` places: the circle that should hold half as many again as wanted at the same
    /// density (places grow with the area), at least 1.5 times the radius; 4 times when it held none.
    public static func widened(_ radius: Double, found: Int, wanted: Int) -> Double {
        guard found > 0 else { return radius * 4 }
        return radius * max(1.5, (1.5 * Double(wanted) / Double(found)).squareRoot())
    }

    static func row(_ latitude: Double) -> Int {
        min(rows - 1, max(0, Int(((latitude + 90) / step).rounded(.down))))
    }

    static func column(_ longitude: Double) -> Int {
        min(columns - 1, max(0, Int(((longitude + 180) / step).rounded(.down))))
    }
}

/// A map viewport `minLon,minLat,maxLon,maxLat`; `minLon > maxLon` crosses the antimeridian.
public struct BoundingBox: Sendable, Hashable {
    public var minLatitude: Double
    public var maxLatitude: Double
    public var minLongitude: Double
    public var maxLongitude: Double

    /// Parses `minLon,minLat,maxLon,maxLat` (the order GeoJSON and most map libraries use).
    public static func parse(_ text: String, field: String = "bbox") -> Result<BoundingBox, FieldIssue> {
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == 4, let minLon = numbers[0], let minLat = numbers[1], let maxLon = numbers[2],
            let maxLat = numbers[3]
        else {
            return .failure(FieldIssue(field: field, code: "invalid", message: "Use minLon,minLat,maxLon,maxLat."))
        }
        let issues =
            GeoPoint.issues(latitude: minLat, longitude: minLon) + GeoPoint.issues(latitude: maxLat, longitude: maxLon)
        if !issues.isEmpty {
            return .failure(FieldIssue(field: field, code: "out_of_range", message: "Coordinates are out of range."))
        }
        guard minLat <= maxLat else {
            return .failure(FieldIssue(field: field, code: "invalid", message: "minLat must not exceed maxLat."))
        }
        return .success(
            BoundingBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: minLon, maxLongitude: maxLon))
    }

    /// Whether `point` is inside (edges included).
    public func contains(_ point: GeoPoint) -> Bool {
        guard (minLatitude...maxLatitude).contains(point.latitude) else { return false }
        if minLongitude <= maxLongitude { return (minLongitude...maxLongitude).contains(point.longitude) }
        return point.longitude >= minLongitude || point.longitude <= maxLongitude
    }
}

extension GeoPoint {
    /// Parses `lat,lon`, with field issues naming `field`.
    public static func parse(_ text: String, field: String) -> Result<GeoPoint, FieldIssue> {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, let lat = parts[0], let lon = parts[1] else {
            return .failure(FieldIssue(field: field, code: "invalid", message: "Use lat,lon in degrees."))
        }
        if let issue = issues(latitude: lat, longitude: lon, latitudeField: field, longitudeField: field).first {
            return .failure(issue)
        }
        return .success(GeoPoint(latitude: lat, longitude: lon))
    }
}
