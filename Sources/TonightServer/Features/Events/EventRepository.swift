import Foundation
import SQLKit
import TonightCore

/// A row of `events`.
struct EventRecord: Sendable, Equatable {
    var id: String
    var kind: EventKind
    var name: String
    var description: String?
    var placeID: String
    var startAt: Int64
    var endAt: Int64?
    var localDate: String
    /// `HH:MM:SS`, nil when not announced.
    var localTime: String?
    var timeZone: String
    var status: EventStatus
    var categoryID: String?
    var minPrice: Double?
    var maxPrice: Double?
    var currency: String?
    var ticketURL: String?
    var onSaleAt: Int64?
    var organizerID: String?
    var goingCount: Int64 = 0
    var interestedCount: Int64 = 0
    var followingCount: Int64 = 0
    var source: String?
    var sourceID: String?
    var createdAt: Int64
    var updatedAt: Int64
    /// Sessions only: sport slug, skill level and capacity (`goingCount` is the occupied count).
    var sport: String? = nil
    var skill: String? = nil
    var capacity: Int? = nil

    /// A new scheduled event of `kind` by `organizerID`, before its edit fills in name, place and time.
    static func draft(kind: EventKind, organizerID: String, now: Int64) -> EventRecord {
        EventRecord(
            id: Identifier.make(), kind: kind, name: "", placeID: "", startAt: 0, localDate: "", timeZone: "UTC",
            status: .scheduled, organizerID: organizerID, createdAt: now, updatedAt: now)
    }
}

/// A recorded change of an event's place, start or status.
struct EventChangeRecord: Sendable, Equatable {
    var id: String
    var eventID: String
    var field: String
    var oldValue: String?
    var newValue: String?
    var origin: String
    var changedAt: Int64
}

/// The SQL side of an event search: everything that narrows rows before exact checks in Swift.
struct EventQuery: Sendable {
    /// Events starting in `[from, to)`, or running at `from` (ended after it).
    var from: Int64
    var to: Int64?
    var near: GeoPoint?
    var radius: Double = 2000
    var cityKey: String?
    var categoryIDs: [String]?
    var artistIDs: [String]?
    var text: String?
    var maxPrice: Double?
    var status: EventStatus?
    /// Leaves out cancelled and removed events.
    var notCalledOff = false
    /// Only these kinds (nil: every kind).
    var kinds: Set<EventKind>?
    /// Session filters: sport slugs, skill level, a free spot, a friend of this user playing.
    var sports: [String]?
    var skill: String?
    var openOnly = false
    var friendsOf: String?
    /// Leaves out events this user attends, follows or dismissed (recommendations).
    var newTo: String?
    var bbox: BoundingBox?
    /// Local dates `[first, last]` (inclusive, `YYYY-MM-DD`).
    var localDates: (first: String, last: String)?
    /// Local start times in any of these `[from, to)` ranges (`HH:MM`).
    var localTimes: [(from: String, to: String)]?
    /// Keyset position `(start_at, id)` to continue after.
    var after: (startAt: Int64, id: String)?
    var limit: Int = 100

    /// Reads rows broad enough for `when` in every time zone (and a day earlier, for events whose
    /// time is not announced); callers check each event exactly with ``EventWindows/contains``.
    mutating func within(_ when: When, now: Date) {
        let broad = EventWindows.broad(when, now: now)
        from = Clock.millis(broad.start) - EventWindows.slack
        to = Clock.millis(broad.end)
    }
}

/// Storage of events, performers, attendance and change records.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct EventRepository: Sendable {
    let db: any SQLDatabase
    let database: Database

    static let columns = [
        "id", "kind", "name", "description", "place_id", "start_at", "end_at", "local_date", "local_time", "time_zone",
        "status", "category_id", "min_price", "max_price", "currency", "ticket_url", "onsale_at", "organizer_id",
        "going_count", "interested_count", "following_count", "source", "source_id", "created_at", "updated_at",
        "sport", "skill", "capacity",
    ]
    static let selectList = columns.map { "e." + $0 }.joined(separator: ", ")

    func insert(_ event: EventRecord, performers: [String]) async throws {
        try await database.transaction { db in
            try await Self.insert(event, on: db)
            try await Self.replacePerformers(event.id, performers, on: db)
            // (Migration 0035: no insert trigger, so that imports pay once per batch.)
            try await database.moveRecommendationVersion(on: db)
        }
    }

    static func insert(_ event: EventRecord, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            INSERT INTO events (\(unsafeRaw: Self.columns.joined(separator: ", ")), name_folded) VALUES (
                \(bind: event.id), \(bind: event.kind), \(bind: event.name), \(bind: event.description),
                \(bind: event.placeID), \(bind: event.startAt), \(bind: event.endAt), \(bind: event.localDate),
                \(bind: event.localTime), \(bind: event.timeZone), \(bind: event.status), \(bind: event.categoryID),
                \(bind: event.minPrice), \(bind: event.maxPrice), \(bind: event.currency), \(bind: event.ticketURL),
                \(bind: event.onSaleAt), \(bind: event.organizerID), \(bind: event.goingCount),
                \(bind: event.interestedCount), \(bind: event.followingCount), \(bind: event.source),
                \(bind: event.sourceID), \(bind: event.createdAt), \(bind: event.updatedAt),
                \(bind: event.sport), \(bind: event.skill), \(bind: event.capacity),
                \(bind: SearchText.fold(event.name)))
            """
        ).run()
    }

    /// Writes an edit. An imported row keeps its fingerprint (a refresh that did not change the
    /// record leaves the edit as it is) but loses its bytes' hash: the row is no longer what those
    /// bytes made, so the next refresh parses the record and compares it (migration 0038).
    func update(_ event: EventRecord, performers: [String]?, changes: [EventChangeRecord]) async throws {
        try await database.transaction { db in
            try await db.raw(
                """
                UPDATE events SET name = \(bind: event.name), name_folded = \(bind: SearchText.fold(event.name)),
                    description = \(bind: event.description), place_id = \(bind: event.placeID),
                    start_at = \(bind: event.startAt), end_at = \(bind: event.endAt), local_date = \(bind: event.localDate),
                    local_time = \(bind: event.localTime), time_zone = \(bind: event.timeZone),
                    status = \(bind: event.status), category_id = \(bind: event.categoryID),
                    min_price = \(bind: event.minPrice), max_price = \(bind: event.maxPrice),
                    currency = \(bind: event.currency), ticket_url = \(bind: event.ticketURL),
                    onsale_at = \(bind: event.onSaleAt), updated_at = \(bind: event.updatedAt),
                    sport = \(bind: event.sport), skill = \(bind: event.skill), capacity = \(bind: event.capacity),
                    reminded_at = CASE WHEN start_at = \(bind: event.startAt) THEN reminded_at END,
                    import_raw_hash = NULL
                WHERE id = \(bind: event.id)
                """
            ).run()
            if let performers { try await Self.replacePerformers(event.id, performers, on: db) }
            try await Self.insert(changes, on: db)
        }
    }

    static func replacePerformers(_ eventID: String, _ performers: [String], on db: any SQLDatabase) async throws {
        try await db.raw("DELETE FROM event_performers WHERE event_id = \(bind: eventID)").run()
        var seen = Set<String>()
        for (position, artist) in performers.enumerated() where seen.insert(artist).inserted {
            try await db.raw(
                """
                INSERT INTO event_performers (event_id, artist_id, position)
                VALUES (\(bind: eventID), \(bind: artist), \(bind: position))
                """
            ).run()
        }
    }

    func find(id: String) async throws -> EventRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.selectList) FROM events e WHERE e.id = \(bind: id)").first()
            .map(Self.decode)
    }

    /// The events with these ids that exist, by id (one query).
    func find(ids: [String]) async throws -> [String: EventRecord] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await db.raw(
            "SELECT \(unsafeRaw: Self.selectList) FROM events e WHERE e.id IN (\(binds: Array(Set(ids))))"
        ).all()
        return Dictionary(uniqueKeysWithValues: try rows.map(Self.decode).map { ($0.id, $0) })
    }

    /// Events lasting longer than this are found through `events_long` (migration 0036) when they
    /// started before the window; a shorter one still running at its start began at most this long
    /// before it.
    static let longEvent = LongEventIndex.longer

    /// The two disjoint parts of a window `[from, to)` with the events running at `from`: `recent`
    /// starts at most ``longEvent`` before `from` (an index range, however long the history behind
    /// it), `long` are the events running at `from` that started earlier (few, from `events_long`).
    enum WindowPart: CaseIterable {
        case long, recent
    }

    /// Events matching `query`, ordered by `(start_at, id)`.
    func search(_ query: EventQuery) async throws -> [EventRecord] {
        // Every `long` event starts before every `recent` one: its rows come first, and a page
        // that continues after a `recent` one has none.
        var found: [EventRecord] = []
        if (query.after?.startAt ?? .min) < query.from - Self.longEvent {
            found = try await db.raw(Self.searchSQL(query, .long, on: database.kind)).all().map(Self.decode)
            guard found.count < query.limit else { return found }
        }
        var rest = query
        rest.limit -= found.count
        found += try await db.raw(Self.searchSQL(rest, .recent, on: database.kind)).all().map(Self.decode)
        return found
    }

    /// The statement of ``search(_:)`` for one part of its window.
    static func searchSQL(_ query: EventQuery, _ part: WindowPart, on kind: DatabaseKind) -> SQLQueryString {
        "SELECT \(unsafeRaw: Self.selectList) FROM " + eventsTable(part, on: kind)
            + " JOIN places p ON p.id = e.place_id WHERE " + Self.conditions(query, part).joined(separator: " AND ")
            + " ORDER BY e.start_at, e.id LIMIT \(literal: query.limit)"
    }

    /// `events e`, read through `events_long` for the `long` part on SQLite: its planner, without
    /// statistics, would rather walk `events_start` (or a place's or category's events) through
    /// the whole history than sort the few long events.
    private static func eventsTable(_ part: WindowPart, on kind: DatabaseKind) -> SQLQueryString {
        part == .long && kind == .sqlite ? "events e INDEXED BY events_long" : "events e"
    }

    /// The ids of the events matching `query`, most attended first (going and interested), those in
    /// `favored` categories before all others, then by `(start_at, id)`: ranked by the database
    /// on a narrow projection, so a page of the most popular costs no more than reading its rows.
    func popular(_ query: EventQuery, favoring favored: Set<String>) async throws -> [String] {
        let liked: SQLQueryString =
            favored.isEmpty ? "0" : "CASE WHEN e.category_id IN (\(binds: favored.sorted())) THEN 1 ELSE 0 END"
        typealias Ranked = (liked: Int, popularity: Int64, startAt: Int64, id: String)
        var ranked: [Ranked] = []
        for part in WindowPart.allCases {
            // `recent` goes from the places in the circle to their events: SQLite otherwise walks
            // `events_start` over the window in every time zone (13,289 rows for 2,531 in the
            // circle, measured: 96 ms against 16 ms). `CROSS JOIN` keeps that order in SQLite;
            // PostgreSQL plans it freely. `long` starts from `events_long`.
            let from: SQLQueryString =
                part == .recent
                ? "places p CROSS JOIN events e WHERE e.place_id = p.id AND "
                : Self.eventsTable(part, on: database.kind) + " JOIN places p ON p.id = e.place_id WHERE "
            let sql: SQLQueryString =
                "SELECT e.id, " + liked
                + " AS liked, e.going_count + e.interested_count AS popularity, e.start_at FROM "
                + from + Self.conditions(query, part).joined(separator: " AND ")
                + " ORDER BY liked DESC, popularity DESC, e.start_at, e.id LIMIT \(literal: query.limit)"
            ranked += try await db.raw(sql).all().map { row in
                (
                    try row.decode(column: "liked", as: Int.self), try row.decode(column: "popularity", as: Int64.self),
                    try row.decode(column: "start_at", as: Int64.self), try row.decode(column: "id", as: String.self)
                )
            }
        }
        ranked.sort { ($1.liked, $1.popularity, $0.startAt, $0.id) < ($0.liked, $0.popularity, $1.startAt, $1.id) }
        return ranked.prefix(query.limit).map(\.id)
    }

    /// The SQL conditions of `query` on `e` (events) and `p` (its place), for one part of its window.
    private static func conditions(_ query: EventQuery, _ part: WindowPart) -> [SQLQueryString] {
        let from = query.from
        let earliest = from - longEvent
        var conditions: [SQLQueryString] =
            switch part {
            case .recent:
                [
                    "e.start_at >= \(bind: earliest)",
                    "(e.start_at >= \(bind: from) OR (e.end_at IS NOT NULL AND e.end_at > \(bind: from)))",
                ]
            case .long:
                // The literal term of the partial index's condition, so that the index serves it.
                [
                    "e.end_at - e.start_at > \(unsafeRaw: String(longEvent))", "e.end_at > \(bind: from)",
                    "e.start_at < \(bind: earliest)",
                ]
            }
        if let to = query.to { conditions.append("e.start_at < \(bind: to)") }
        if let near = query.near {
            conditions.append(PlaceRepository.nearCondition(near, radius: query.radius, table: "p"))
        }
        if let city = query.cityKey { conditions.append("p.city_key = \(bind: city)") }
        if let categories = query.categoryIDs { conditions.append("e.category_id IN (\(binds: categories))") }
        if let artists = query.artistIDs {
            conditions.append("e.id IN (SELECT event_id FROM event_performers WHERE artist_id IN (\(binds: artists)))")
        }
        if let text = query.text, !text.isEmpty {
            let like = "%" + SQLText.likeEscaped(text) + "%"
            conditions.append(
                """
                (e.name_folded LIKE \(bind: like) ESCAPE '\\' OR p.name_folded LIKE \(bind: like) ESCAPE '\\'
                 OR e.id IN (SELECT ep.event_id FROM event_performers ep JOIN artists a ON a.id = ep.artist_id
                             WHERE a.name_folded LIKE \(bind: like) ESCAPE '\\'))
                """)
        }
        if let budget = query.maxPrice { conditions.append("(e.min_price IS NULL OR e.min_price <= \(bind: budget))") }
        if let status = query.status { conditions.append("e.status = \(bind: status)") }
        if query.notCalledOff {
            conditions.append("e.status NOT IN (\(binds: EventStatus.allCases.filter(\.isCalledOff).map(\.rawValue)))")
        }
        if let kinds = query.kinds { conditions.append("e.kind IN (\(binds: kinds.map(\.rawValue).sorted()))") }
        conditions += Self.filterConditions(query)
        if let after = query.after { conditions.append(Keyset.after((after.startAt, after.id), "e.start_at", "e.id")) }
        return conditions
    }

    /// The session, personal and map filters of `query` as SQL conditions on `e` (events) and `p` (places).
    static func filterConditions(_ query: EventQuery) -> [SQLQueryString] {
        var conditions: [SQLQueryString] = []
        if let sports = query.sports, !sports.isEmpty { conditions.append("e.sport IN (\(binds: sports))") }
        if let skill = query.skill { conditions.append("e.skill = \(bind: skill)") }
        if query.openOnly { conditions.append("e.going_count < e.capacity") }
        if let user = query.friendsOf {
            conditions.append(
                """
                e.id IN (SELECT a.event_id FROM attendance a JOIN friends f ON f.friend_id = a.user_id
                         WHERE f.user_id = \(bind: user) AND a.status = 'going')
                """)
        }
        if let user = query.newTo {
            conditions.append(
                "NOT EXISTS (SELECT 1 FROM attendance m WHERE m.event_id = e.id AND m.user_id = \(bind: user))")
            conditions.append(
                "NOT EXISTS (SELECT 1 FROM dismissals d WHERE d.event_id = e.id AND d.user_id = \(bind: user))")
        }
        if let box = query.bbox { conditions.append(PlaceRepository.boxCondition(box, table: "p")) }
        if let dates = query.localDates {
            conditions.append("e.local_date BETWEEN \(bind: dates.first) AND \(bind: dates.last)")
        }
        if let ranges = query.localTimes, !ranges.isEmpty {
            conditions.append(
                "("
                    + ranges.map {
                        "(e.local_time >= \(bind: $0.from) AND e.local_time < \(bind: $0.to))" as SQLQueryString
                    }
                    .joined(separator: " OR ") + ")")
        }
        return conditions
    }

    /// Performer ids of each event, in billing order.
    func performers(of eventIDs: [String]) async throws -> [String: [String]] {
        guard !eventIDs.isEmpty else { return [:] }
        let rows = try await db.raw(
            """
            SELECT event_id, artist_id FROM event_performers WHERE event_id IN (\(binds: eventIDs))
            ORDER BY event_id, position
            """
        ).all()
        var result: [String: [String]] = [:]
        for row in rows {
            result[try row.decode(column: "event_id", as: String.self), default: []]
                .append(try row.decode(column: "artist_id", as: String.self))
        }
        return result
    }

    /// An `events` row read with ``selectList``.
    static func decode(_ row: any SQLRow) throws -> EventRecord {
        EventRecord(
            id: try row.decode(column: "id", as: String.self),
            kind: try row.decode(column: "kind", as: EventKind.self),
            name: try row.decode(column: "name", as: String.self),
            description: try row.decode(column: "description", as: String?.self),
            placeID: try row.decode(column: "place_id", as: String.self),
            startAt: try row.decode(column: "start_at", as: Int64.self),
            endAt: try row.decode(column: "end_at", as: Int64?.self),
            localDate: try row.decode(column: "local_date", as: String.self),
            localTime: try row.decode(column: "local_time", as: String?.self),
            timeZone: try row.decode(column: "time_zone", as: String.self),
            status: try row.decode(column: "status", as: EventStatus.self),
            categoryID: try row.decode(column: "category_id", as: String?.self),
            minPrice: try row.decode(column: "min_price", as: Double?.self),
            maxPrice: try row.decode(column: "max_price", as: Double?.self),
            currency: try row.decode(column: "currency", as: String?.self),
            ticketURL: try row.decode(column: "ticket_url", as: String?.self),
            onSaleAt: try row.decode(column: "onsale_at", as: Int64?.self),
            organizerID: try row.decode(column: "organizer_id", as: String?.self),
            goingCount: try row.decode(column: "going_count", as: Int64.self),
            interestedCount: try row.decode(column: "interested_count", as: Int64.self),
            followingCount: try row.decode(column: "following_count", as: Int64.self),
            source: try row.decode(column: "source", as: String?.self),
            sourceID: try row.decode(column: "source_id", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self),
            sport: try row.decode(column: "sport", as: String?.self),
            skill: try row.decode(column: "skill", as: String?.self),
            capacity: try row.decode(column: "capacity", as: Int?.self))
    }
}
