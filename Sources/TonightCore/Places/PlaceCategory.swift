/// What kind of place a venue is. Importers map their tags onto these; unknown ones are `other`.
public enum PlaceCategory: String, Sendable, Hashable, CaseIterable, Codable {
    case bar, pub, biergarten, nightclub, club
    case concertHall = "concert_hall"
    case theatre, cinema
    case artsCentre = "arts_centre"
    case eventsVenue = "events_venue"
    case casino, restaurant, stadium
    case sportsCentre = "sports_centre"
    case pitch, park
    case fitnessCentre = "fitness_centre"
    case swimmingPool = "swimming_pool"
    case iceRink = "ice_rink"
    case track, other
}

/// Which app a place belongs to: nightlife and culture venues (PartyUP, Pala, Tickets Tonight) or
/// sports spots (Playmate). `other` places belong to neither.
public enum PlaceGroup: String, Sendable, Hashable, CaseIterable, Codable {
    case nightlife, sports

    /// The categories of the group.
    public var categories: [PlaceCategory] { PlaceCategory.allCases.filter { $0.group == self } }
}

extension PlaceCategory {
    /// The group of the category; nil for `other`.
    public var group: PlaceGroup? {
        switch self {
        case .bar, .pub, .biergarten, .nightclub, .club, .concertHall, .theatre, .cinema, .artsCentre, .eventsVenue,
            .casino, .restaurant:
            .nightlife
        case .stadium, .sportsCentre, .pitch, .park, .fitnessCentre, .swimmingPool, .iceRink, .track:
            .sports
        case .other:
            nil
        }
    }
}
