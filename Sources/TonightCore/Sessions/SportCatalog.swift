/// A sport sessions can be about.
public struct Sport: Sendable, Hashable, Codable {
    /// Lower-case id: `a`–`z`, `0`–`9` and `-`, 2–40 characters.
    public var slug: String
    public var name: String
    /// An icon name in SF Symbols style; apps map it to their own artwork.
    public var icon: String
    public var builtIn: Bool

    public init(slug: String, name: String, icon: String, builtIn: Bool = false) {
        self.slug = slug
        self.name = name
        self.icon = icon
        self.builtIn = builtIn
    }
}

/// The built-in sports catalogue (Playmate used Decathlon's sports list). Admins add more; a
/// built-in slug cannot be taken by an added sport.
public enum SportCatalog {
    public static let builtIn: [Sport] = [
        ("american-football", "American football", "figure.american.football"),
        ("archery", "Archery", "figure.archery"),
        ("badminton", "Badminton", "figure.badminton"),
        ("baseball", "Baseball", "figure.baseball"),
        ("basketball", "Basketball", "figure.basketball"),
        ("beach-volleyball", "Beach volleyball", "figure.volleyball"),
        ("bouldering", "Bouldering", "figure.climbing"),
        ("bowling", "Bowling", "figure.bowling"),
        ("boxing", "Boxing", "figure.boxing"),
        ("climbing", "Climbing", "figure.climbing"),
        ("cricket", "Cricket", "figure.cricket"),
        ("cross-training", "Cross training", "figure.cross.training"),
        ("curling", "Curling", "figure.curling"),
        ("cycling", "Cycling", "figure.outdoor.cycle"),
        ("dance", "Dance", "figure.dance"),
        ("darts", "Darts", "target"),
        ("disc-golf", "Disc golf", "figure.disc.sports"),
        ("fencing", "Fencing", "figure.fencing"),
        ("field-hockey", "Field hockey", "figure.field.hockey"),
        ("football", "Football (soccer)", "figure.soccer"),
        ("futsal", "Futsal", "figure.indoor.soccer"),
        ("golf", "Golf", "figure.golf"),
        ("gymnastics", "Gymnastics", "figure.gymnastics"),
        ("handball", "Handball", "figure.handball"),
        ("hiking", "Hiking", "figure.hiking"),
        ("ice-hockey", "Ice hockey", "figure.ice.hockey"),
        ("ice-skating", "Ice skating", "figure.skating"),
        ("kayaking", "Kayaking", "figure.outdoor.rowing"),
        ("lacrosse", "Lacrosse", "figure.lacrosse"),
        ("martial-arts", "Martial arts", "figure.martial.arts"),
        ("netball", "Netball", "figure.basketball"),
        ("padel", "Padel", "figure.racquetball"),
        ("pickleball", "Pickleball", "figure.pickleball"),
        ("pilates", "Pilates", "figure.pilates"),
        ("roundnet", "Roundnet", "circle.grid.cross"),
        ("rowing", "Rowing", "figure.rower"),
        ("rugby", "Rugby", "figure.rugby"),
        ("running", "Running", "figure.run"),
        ("sailing", "Sailing", "sailboat"),
        ("skateboarding", "Skateboarding", "figure.skateboarding"),
        ("skiing", "Skiing", "figure.skiing.downhill"),
        ("snowboarding", "Snowboarding", "figure.snowboarding"),
        ("softball", "Softball", "figure.softball"),
        ("squash", "Squash", "figure.squash"),
        ("surfing", "Surfing", "figure.surfing"),
        ("swimming", "Swimming", "figure.pool.swim"),
        ("table-tennis", "Table tennis", "figure.table.tennis"),
        ("tennis", "Tennis", "figure.tennis"),
        ("trail-running", "Trail running", "figure.run"),
        ("triathlon", "Triathlon", "figure.open.water.swim"),
        ("ultimate-frisbee", "Ultimate frisbee", "figure.disc.sports"),
        ("volleyball", "Volleyball", "figure.volleyball"),
        ("walking", "Walking", "figure.walk"),
        ("water-polo", "Water polo", "figure.waterpolo"),
        ("wrestling", "Wrestling", "figure.wrestling"),
        ("yoga", "Yoga", "figure.yoga"),
    ].map { Sport(slug: $0.0, name: $0.1, icon: $0.2, builtIn: true) }

    /// Built-in sports by slug.
    public static let bySlug: [String: Sport] = Dictionary(uniqueKeysWithValues: builtIn.map { ($0.slug, $0) })

    /// Whether `slug` is a well-formed sport id.
    public static func isValidSlug(_ slug: String) -> Bool {
        (2...40).contains(slug.count)
            && slug.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 }
            && !slug.hasPrefix("-") && !slug.hasSuffix("-")
    }
}
