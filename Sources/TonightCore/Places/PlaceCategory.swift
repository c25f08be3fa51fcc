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
