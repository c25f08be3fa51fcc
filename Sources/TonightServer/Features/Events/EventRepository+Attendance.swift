import Foundation
import SQLKit
import TonightAPI
import TonightCore

/// A member's relation to an event or session, as the contract names it.
typealias AttendanceStatus = Components.Schemas.AttendanceStatus

/// Attendance: who is going to, interested in or following an event, with the event's counters
/// kept in the same transaction (a session's capacity is checked there too).
extension EventRepository {
    /// Inserts a session with its creator as its first player, in one transaction.
    func insertSession(_ event: EventRecord, creator: String) async throws {
        try await database.transaction { db in
            var stored = event
            stored.goingCount = 1
            try await Self.insert(stored, on: db)
            try await db.raw(
                """
                INSERT INTO attendance (event_id, user_id, status, created_at, updated_at)
                VALUES (\(bind: event.id), \(bind: creator), 'going', \(bind: event.createdAt), \(bind: event.createdAt))
                """
            ).run()
            try await Self.refreshPlayers(of: [event.id], on: db, kind: database.kind)
        }
    }

    /// Rewrites the `players` list (`id,gender,birthDate;…`) of these sessions from attendance.
    static func refreshPlayers(of eventIDs: [String], on db: any SQLDatabase, kind: DatabaseKind) async throws {
        guard !eventIDs.isEmpty else { return }
        let entry = "u.id || ',' || COALESCE(u.gender, '') || ',' || COALESCE(u.birth_date, '')"
        let list = kind == .postgres ? "string_agg(\(entry), ';')" : "group_concat(\(entry), ';')"
        try await db.raw(
            """
            UPDATE events SET players = (
                SELECT \(unsafeRaw: list) FROM attendance a JOIN users u ON u.id = a.user_id
                WHERE a.event_id = events.id AND a.status = 'going')
            WHERE id IN (\(binds: eventIDs)) AND kind = 'session'
            """
        ).run()
    }

    /// The caller's attendance status for each of `eventIDs` that has one.
    func attendance(of userID: String, in eventIDs: [String]) async throws -> [String: AttendanceStatus] {
        guard !eventIDs.isEmpty else { return [:] }
        let rows = try await db.raw(
            "SELECT event_id, status FROM attendance WHERE user_id = \(bind: userID) AND event_id IN (\(binds: eventIDs))"
        ).all()
        var result: [String: AttendanceStatus] = [:]
        for row in rows {
            result[try row.decode(column: "event_id", as: String.self)] = try row.decode(
                column: "status", as: AttendanceStatus.self)
        }
        return result
    }

    /// The counter column of a status (a fixed set, never user text).
    static func counter(_ status: AttendanceStatus) -> String {
        switch status {
        case .going: "going_count"
        case .interested: "interested_count"
        case .following: "following_count"
        }
    }

    /// Sets the caller's status and the event's counters in one transaction; returns the counters.
    /// Going to a full session throws a conflict (`session_full`) and changes nothing.
    func setAttendance(eventID: String, userID: String, status: AttendanceStatus?, now: Int64) async throws
        -> EventRecord?
    {
        try await database.transaction { db in
            // Lock the event row first so concurrent changes to its counters queue up.
            let lock: SQLQueryString =
                database.kind == .postgres
                ? "SELECT kind FROM events WHERE id = \(bind: eventID) FOR UPDATE"
                : "SELECT kind FROM events WHERE id = \(bind: eventID)"
            guard let kind = try await db.raw(lock).first()?.decode(column: "kind", as: EventKind.self) else {
                return nil
            }
            let previous = try await db.raw(
                "SELECT status FROM attendance WHERE event_id = \(bind: eventID) AND user_id = \(bind: userID)"
            ).first().map { try $0.decode(column: "status", as: AttendanceStatus.self) }
            if previous != status {
                if let previous {
                    try await db.raw(
                        "UPDATE events SET \(unsafeRaw: Self.counter(previous)) = \(unsafeRaw: Self.counter(previous)) - 1 WHERE id = \(bind: eventID)"
                    ).run()
                }
                if let status {
                    // A session's capacity is checked by the increment itself: the row is locked, so
                    // of racers for the last seat exactly one passes the condition.
                    let limit = status == .going ? "capacity IS NULL OR going_count < capacity" : "1 = 1"
                    let counted = try await db.raw(
                        """
                        UPDATE events SET \(unsafeRaw: Self.counter(status)) = \(unsafeRaw: Self.counter(status)) + 1
                        WHERE id = \(bind: eventID) AND (\(unsafeRaw: limit)) RETURNING id
                        """
                    ).first()
                    guard counted != nil else {
                        throw APIError.conflict(
                            "This session is full: every spot is taken. Follow it to hear if one frees up.",
                            code: .sessionFull)
                    }
                    if previous == nil {
                        try await db.raw(
                            """
                            INSERT INTO attendance (event_id, user_id, status, created_at, updated_at)
                            VALUES (\(bind: eventID), \(bind: userID), \(bind: status), \(bind: now), \(bind: now))
                            """
                        ).run()
                    } else {
                        try await db.raw(
                            """
                            UPDATE attendance SET status = \(bind: status), updated_at = \(bind: now)
                            WHERE event_id = \(bind: eventID) AND user_id = \(bind: userID)
                            """
                        ).run()
                    }
                } else {
                    try await db.raw(
                        "DELETE FROM attendance WHERE event_id = \(bind: eventID) AND user_id = \(bind: userID)"
                    ).run()
                }
                if kind == .session && (previous == .going || status == .going) {
                    try await Self.refreshPlayers(of: [eventID], on: db, kind: database.kind)
                }
            }
            return try await db.raw("SELECT \(unsafeRaw: Self.selectList) FROM events e WHERE e.id = \(bind: eventID)")
                .first().map(Self.decode)
        }
    }

    /// Events the user attends (by status) or organises, of `kinds` (nil: every kind), ordered by start.
    func events(
        of userID: String, status: AttendanceStatus?, kinds: Set<EventKind>? = nil, from: Int64?, until: Int64?,
        after: (Int64, String)?, limit: Int
    )
        async throws -> [EventRecord]
    {
        var conditions: [SQLQueryString] = []
        if let kinds { conditions.append("e.kind IN (\(binds: kinds.map(\.rawValue).sorted()))") }
        if let status {
            conditions.append(
                "e.id IN (SELECT event_id FROM attendance WHERE user_id = \(bind: userID) AND status = \(bind: status))"
            )
        } else {
            conditions.append(
                "(e.organizer_id = \(bind: userID) OR e.id IN (SELECT event_id FROM attendance WHERE user_id = \(bind: userID)))"
            )
        }
        if let from { conditions.append("e.start_at >= \(bind: from)") }
        if let until { conditions.append("e.start_at < \(bind: until)") }
        if let after { conditions.append(Keyset.after(after, "e.start_at", "e.id")) }
        let sql: SQLQueryString =
            "SELECT \(unsafeRaw: Self.selectList) FROM events e WHERE " + conditions.joined(separator: " AND ")
            + " ORDER BY e.start_at, e.id LIMIT \(literal: limit)"
        return try await db.raw(sql).all().map(Self.decode)
    }

    /// Which of `users` are going to `eventID` (one query).
    func going(in eventID: String, among users: [String]) async throws -> Set<String> {
        guard !users.isEmpty else { return [] }
        let rows = try await db.raw(
            """
            SELECT user_id FROM attendance
            WHERE event_id = \(bind: eventID) AND status = 'going' AND user_id IN (\(binds: users))
            """
        ).all()
        return Set(try rows.map { try $0.decode(column: "user_id", as: String.self) })
    }

    /// Who attends `eventID`, without anyone blocked either way by `viewer`.
    func attendees(of eventID: String, status: AttendanceStatus?, viewer: String, after: (Int64, String)?, limit: Int)
        async throws -> [(userID: String, status: AttendanceStatus, since: Int64)]
    {
        var conditions: [SQLQueryString] = [
            "event_id = \(bind: eventID)", SocialRepository.notBlocked(viewer, other: "user_id"),
        ]
        if let status { conditions.append("status = \(bind: status)") }
        if let after { conditions.append(Keyset.after(after, "created_at", "user_id")) }
        let sql: SQLQueryString =
            "SELECT user_id, status, created_at FROM attendance WHERE " + conditions.joined(separator: " AND ")
            + " ORDER BY created_at, user_id LIMIT \(literal: limit)"
        return try await db.raw(sql).all().map { row in
            (
                try row.decode(column: "user_id", as: String.self),
                try row.decode(column: "status", as: AttendanceStatus.self),
                try row.decode(column: "created_at", as: Int64.self)
            )
        }
    }
}
