import Foundation

/// The demo city: a believable Friday-night Berlin for newcomers and for the browser tests.
///
/// Pure data and the import files made from it; ``DemoSeeder`` writes it through the importers and
/// the public API. Dates are relative to the moment of seeding, so "tonight" is always tonight.
/// Every demo account uses ``password`` — a demo is for a laptop, never for a public server.
public enum DemoCity {
    /// The password of every demo account (`admin`, `mia`, `leo`, `ana`, `ben`, `sam`, `zoe`).
    public static let password = "tonight-demo"
    static let zone = TimeZone(identifier: "Europe/Berlin")!

    /// A venue from OpenStreetMap-style data: `tag` is `amenity=…` or `leisure=…`.
    struct Venue {
        let node: Int64
        let name: String
        let tag: (key: String, value: String)
        let lat: Double
        let lon: Double
        let street: String
        let hours: String
        /// The promotion tier and tagline admins gave it, if any.
        var promotion: (tier: Int, tagline: String)? = nil

        var placeID: String { "osm:node/\(node)" }
    }

    static let venues: [Venue] = [
        Venue(
            node: 9_100_001, name: "Neon Garden", tag: ("amenity", "nightclub"), lat: 52.5106, lon: 13.4530,
            street: "Revaler Straße 12", hours: "Fr-Sa 23:00-08:00; Th 22:00-04:00",
            promotion: (80, "Three floors, open-air dance floor until sunrise")),
        Venue(
            node: 9_100_002, name: "Spree Deck", tag: ("amenity", "bar"), lat: 52.5003, lon: 13.4452,
            street: "Holzmarktstraße 25", hours: "Mo-Su 16:00-02:00",
            promotion: (40, "Sunset cocktails on the river")),
        Venue(
            node: 9_100_003, name: "Kiez Keller", tag: ("amenity", "pub"), lat: 52.4990, lon: 13.4180,
            street: "Oranienstraße 40", hours: "Mo-Th 18:00-01:00; Fr-Sa 18:00-03:00; Su off"),
        Venue(
            node: 9_100_004, name: "Salsa Sótano", tag: ("amenity", "nightclub"), lat: 52.5290, lon: 13.4010,
            street: "Torstraße 99", hours: "We-Sa 21:00-03:00"),
        Venue(
            node: 9_100_005, name: "Mitte Mixology", tag: ("amenity", "bar"), lat: 52.5245, lon: 13.3960,
            street: "Auguststraße 7", hours: "Tu-Sa 19:00-02:00"),
        Venue(
            node: 9_100_006, name: "Tempelhof Pitches", tag: ("leisure", "pitch"), lat: 52.4750, lon: 13.4020,
            street: "Columbiadamm 10", hours: "Mo-Su 08:00-22:00"),
        Venue(
            node: 9_100_007, name: "Mauerpark Courts", tag: ("leisure", "sports_centre"), lat: 52.5430,
            lon: 13.4020, street: "Bernauer Straße 63", hours: "Mo-Su 07:00-23:00"),
        Venue(
            node: 9_100_008, name: "Prenzlauer Padel", tag: ("leisure", "sports_centre"), lat: 52.5400,
            lon: 13.4240, street: "Danziger Straße 50", hours: "Mo-Fr 07:00-23:00; Sa-Su 09:00-21:00"),
    ]

    /// Concert venues of the ticket feed (its own ids).
    static let halls: [(id: String, name: String, street: String, lat: Double, lon: Double)] = [
        ("DEMO-V1", "Columbia Halle", "Columbiadamm 13", 52.4840, 13.3920),
        ("DEMO-V2", "Astra Saal", "Revaler Straße 99", 52.5070, 13.4540),
        ("DEMO-V3", "Lido Lounge", "Cuvrystraße 7", 52.4990, 13.4440),
    ]

    static let categories: [(id: String, name: String, parent: String?)] = [
        ("DEMO-C0", "Music", nil), ("DEMO-C1", "Electronic", "DEMO-C0"), ("DEMO-C2", "Rock & Pop", "DEMO-C0"),
        ("DEMO-C3", "Latin", "DEMO-C0"), ("DEMO-C4", "Jazz", "DEMO-C0"),
    ]

    static let artists: [(id: String, name: String, category: String)] = [
        ("DEMO-A1", "Kiki Moreno", "DEMO-C1"), ("DEMO-A2", "Midnight Orbit", "DEMO-C1"),
        ("DEMO-A3", "Velvet Static", "DEMO-C1"), ("DEMO-A4", "The Paper Lanterns", "DEMO-C2"),
        ("DEMO-A5", "Los Hermanos Ritmo", "DEMO-C3"), ("DEMO-A6", "Clara Blue Quartet", "DEMO-C4"),
        ("DEMO-A7", "Northern Habits", "DEMO-C2"), ("DEMO-A8", "Sol y Sombra", "DEMO-C3"),
    ]

    /// Similar artists: the affinity file's lines (artist name → similar artist id and score).
    static let affinity: [(artist: String, similar: [(id: String, score: Double)])] = [
        ("Kiki Moreno", [("DEMO-A2", 0.8), ("DEMO-A3", 0.6)]),
        ("Midnight Orbit", [("DEMO-A1", 0.8), ("DEMO-A3", 0.7)]),
        ("Velvet Static", [("DEMO-A2", 0.7)]),
        ("The Paper Lanterns", [("DEMO-A7", 0.75)]),
        ("Northern Habits", [("DEMO-A4", 0.75)]),
        ("Los Hermanos Ritmo", [("DEMO-A8", 0.9)]),
        ("Sol y Sombra", [("DEMO-A5", 0.9)]),
    ]

    /// Shows: day 0 is tonight (its time is ``tonightTime(now:)``); Kiki Moreno plays nowhere near.
    static let shows:
        [(id: String, name: String, hall: String, artists: [String], day: Int, time: String?, prices: (Double, Double))] =
            [
                ("DEMO-E1", "Midnight Orbit — Live", "DEMO-V2", ["DEMO-A2"], 2, "21:00", (22, 28)),
                ("DEMO-E2", "Velvet Static: Night Drive", "DEMO-V3", ["DEMO-A3"], 0, nil, (15, 15)),
                ("DEMO-E3", "The Paper Lanterns", "DEMO-V1", ["DEMO-A4", "DEMO-A7"], 0, nil, (35, 49)),
                ("DEMO-E4", "Noche Latina", "DEMO-V3", ["DEMO-A5", "DEMO-A8"], 1, "22:00", (12, 18)),
                ("DEMO-E5", "Clara Blue Quartet", "DEMO-V3", ["DEMO-A6"], 3, "20:00", (25, 25)),
                ("DEMO-E6", "Northern Habits — Tour", "DEMO-V1", ["DEMO-A7"], 9, "20:00", (39, 59)),
            ]

    /// A demo account: profile and what it plays.
    struct Person {
        let username: String
        let displayName: String
        let gender: String
        let birthDate: String
        let bio: String
        let sports: [String]
        let wants: [String]
    }

    static let people: [Person] = [
        Person(
            username: "mia", displayName: "Mia", gender: "female", birthDate: "1998-04-12",
            bio: "Salsa on Wednesdays, techno on Saturdays.", sports: ["tennis", "running"], wants: ["male"]),
        Person(
            username: "leo", displayName: "Leo", gender: "male", birthDate: "1996-09-03",
            bio: "Five-a-side captain. Always up for a late one.", sports: ["football", "padel"], wants: ["female"]),
        Person(
            username: "ana", displayName: "Ana", gender: "female", birthDate: "2000-01-20",
            bio: "Dancer. I film everything.", sports: ["dance", "volleyball"], wants: ["male"]),
        Person(
            username: "ben", displayName: "Ben", gender: "male", birthDate: "1993-11-30",
            bio: "Bass player, bad at padel.", sports: ["padel", "football"], wants: ["female"]),
        Person(
            username: "sam", displayName: "Sam", gender: "nonbinary", birthDate: "1999-06-15",
            bio: "Runs before breakfast, dances after midnight.", sports: ["running", "basketball"], wants: []),
        Person(
            username: "zoe", displayName: "Zoe", gender: "female", birthDate: "1995-02-08",
            bio: "Here for the music.", sports: ["basketball", "tennis"], wants: ["male", "female"]),
    ]

    static let friendships: [(String, String)] = [
        ("mia", "leo"), ("mia", "ana"), ("leo", "ben"), ("ana", "zoe"), ("sam", "zoe"), ("ben", "sam"),
    ]

    /// A clip ffmpeg makes from a test source; `venue` nil means the city's pregame feed.
    struct Clip {
        let author: String
        let venue: Int64?
        let caption: String
        let song: (title: String, artist: String, uri: String)?
        let source: String
    }

    static let clips: [Clip] = [
        Clip(
            author: "ana", venue: 9_100_001, caption: "Main floor is packed already #techno", song: nil,
            source: "mandelbrot=size=360x640:rate=25"),
        Clip(
            author: "leo", venue: 9_100_001, caption: "Garden is open! #openair", song: nil,
            source: "life=size=360x640:rate=25:mold=10:ratio=0.1"),
        Clip(
            author: "mia", venue: 9_100_004, caption: "Learn this turn with me #salsa #tutorial",
            song: ("Vivir Mi Vida", "Marc Anthony", "spotify:track:3QHMxEOAGD51PDlbFPHLyJ"),
            source: "testsrc2=size=360x640:rate=25"),
        Clip(
            author: "ana", venue: 9_100_004, caption: "Shines combo, slow then fast #salsa #dance",
            song: ("Pedro Navaja", "Rubén Blades", "spotify:track:0Grae4gLvbuz4GVXaiq1BB"),
            source: "cellauto=s=360x640:rate=25:rule=110"),
        Clip(
            author: "ben", venue: 9_100_002, caption: "Sunset on the Spree, come over", song: nil,
            source: "gradients=s=360x640:r=25:speed=0.02"),
        Clip(
            author: "zoe", venue: nil, caption: "Pregame choreo before we head out #dance #pregame",
            song: ("Levitating", "Dua Lipa", "spotify:track:463CkQjx2Zk1yXoBuierM9"),
            source: "testsrc=size=360x640:rate=25"),
        Clip(
            author: "sam", venue: 9_100_003, caption: "Quiz night at the Keller", song: nil,
            source: "smptebars=size=360x640:rate=25"),
    ]

    /// A sports session to create: `day` 0 is tonight.
    struct SessionPlan {
        let creator: String
        let sport: String
        let skill: String
        let venue: Int64
        let day: Int
        let time: String?
        let capacity: Int
        let players: [String]
        let notes: String
    }

    static let sessions: [SessionPlan] = [
        SessionPlan(
            creator: "leo", sport: "football", skill: "intermediate", venue: 9_100_006, day: 0, time: nil,
            capacity: 10, players: ["ben", "sam"], notes: "Five-a-side, bring a dark and a light shirt."),
        SessionPlan(
            creator: "mia", sport: "tennis", skill: "beginner", venue: 9_100_007, day: 1, time: "18:30",
            capacity: 2, players: ["zoe"], notes: "Doubles practice, balls provided."),
        SessionPlan(
            creator: "ben", sport: "padel", skill: "any", venue: 9_100_008, day: 2, time: "19:00", capacity: 4,
            players: ["leo"], notes: "One court booked for 90 minutes."),
        SessionPlan(
            creator: "zoe", sport: "basketball", skill: "advanced", venue: 9_100_007, day: 3, time: "17:00",
            capacity: 8, players: ["sam"], notes: "Half-court three on three."),
    ]

    /// When tonight's things start: 20:00, or an hour from now when that is later (up to 05:00).
    static func tonightStart(now: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let soon = now.addingTimeInterval(3600)
        let hour = calendar.component(.hour, from: now)
        if hour < 5 { return soon }
        let eight = calendar.date(bySettingHour: 20, minute: 0, second: 0, of: now)!
        return max(eight, soon)
    }

    /// The local date and `HH:MM` of `day` days after `now` at `time`, or tonight's start for `time` nil.
    static func local(day: Int, time: String?, now: Date) -> (date: String, time: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let start = tonightStart(now: now)
        let at = calendar.date(byAdding: .day, value: day, to: time == nil ? start : now)!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: at)
        let date = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        if let time { return (date, time) }
        return (date, String(format: "%02d:%02d", parts.hour!, parts.minute! / 15 * 15))
    }

    /// The venues as OpenStreetMap XML, with their opening hours.
    static func osm() -> String {
        let nodes = venues.map { venue in
            """
              <node id="\(venue.node)" lat="\(venue.lat)" lon="\(venue.lon)">
                <tag k="\(venue.tag.key)" v="\(venue.tag.value)"/><tag k="name" v="\(xml(venue.name))"/>
                <tag k="addr:street" v="\(xml(venue.street))"/><tag k="addr:city" v="Berlin"/>
                <tag k="addr:country" v="DE"/><tag k="opening_hours" v="\(venue.hours)"/>
              </node>
            """
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<osm version=\"0.6\">\n"
            + nodes.joined(separator: "\n") + "\n</osm>\n"
    }

    /// Categories, artists, halls and shows as the event feed (FORMATS.md), dated from `now`.
    static func feed(now: Date) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<feed>\n<categories>\n"
        for c in categories {
            out += "<category><id>\(c.id)</id><name>\(xml(c.name))</name>"
            out += (c.parent.map { "<parent_id>\($0)</parent_id>" } ?? "") + "</category>\n"
        }
        out += "</categories>\n<artists>\n"
        for a in artists {
            out +=
                "<artist><id>\(a.id)</id><name>\(xml(a.name))</name><category_id>\(a.category)</category_id></artist>\n"
        }
        out += "</artists>\n<venues>\n"
        for v in halls {
            out += "<venue><id>\(v.id)</id><name>\(xml(v.name))</name><street>\(xml(v.street))</street>"
            out += "<city>Berlin</city><country>DE</country><latitude>\(v.lat)</latitude>"
            out += "<longitude>\(v.lon)</longitude></venue>\n"
        }
        out += "</venues>\n<events>\n"
        for s in shows {
            let when = local(day: s.day, time: s.time, now: now)
            let category = artists.first { $0.id == s.artists[0] }!.category
            out += "<event><id>\(s.id)</id><name>\(xml(s.name))</name><venue_id>\(s.hall)</venue_id>"
            out += "<category_id>\(category)</category_id><performers>"
            out += s.artists.map { "<artist_id>\($0)</artist_id>" }.joined() + "</performers>"
            out += "<date>\(when.date)</date><time>\(when.time)</time><status>onsale</status>"
            out += "<url>https://tickets.example/event/\(s.id)</url><min_price>\(s.prices.0)</min_price>"
            out += "<max_price>\(s.prices.1)</max_price><currency>EUR</currency></event>\n"
        }
        return out + "</events>\n</feed>\n"
    }

    /// The affinity file (FORMATS.md).
    static func affinityText() -> String {
        affinity.map { line in
            ([line.artist]
                + line.similar.flatMap { similar in
                    [similar.id, artists.first { $0.id == similar.id }!.name, String(similar.score)]
                }).joined(separator: ",")
        }.joined(separator: "\n") + "\n"
    }

    private static func xml(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
