/// The keys geocoding gives places: a city is `city$region$country`, a region `region$country`.
public enum AreaKey {
    /// Whether `key` names a city: three non-empty parts.
    public static func isCity(_ key: String) -> Bool { parts(key, count: 3) != nil }

    /// Whether `key` names a region: two non-empty parts.
    public static func isRegion(_ key: String) -> Bool { parts(key, count: 2) != nil }

    /// The region key of a city key (`Halifax$Nova Scotia$CA` → `Nova Scotia$CA`).
    public static func region(ofCity key: String) -> String? {
        parts(key, count: 3).map { "\($0[1])$\($0[2])" }
    }

    /// The city's own name in a city key.
    public static func cityName(_ key: String) -> String? { parts(key, count: 3).map { String($0[0]) } }

    private static func parts(_ key: String, count: Int) -> [Substring]? {
        let parts = key.split(separator: "$", omittingEmptySubsequences: false)
        return parts.count == count && parts.allSatisfy({ !$0.isEmpty }) ? parts : nil
    }
}
