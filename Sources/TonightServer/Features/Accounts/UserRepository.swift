import Foundation
import PostgresKit
import SQLKit
import TonightCore

/// A row of `users`.
struct UserRecord: Codable, Sendable, Equatable {
    var id: String
    var isAnonymous: Bool
    var username: String?
    var usernameKey: String?
    var email: String?
    var emailKey: String?
    var passwordHash: String?
    var role: Role
    var displayName: String?
    var showNameOnPosts: Bool
    var gender: String?
    var birthDate: String?
    var bio: String?
    var homeCity: String?
    var avatarUrl: String?
    var preferences: String
    var createdAt: Int64
    var updatedAt: Int64
    /// When the owner showed they read `email` (a mailed link, or a provider vouching for it).
    var emailVerifiedAt: Int64? = nil
    /// The language mail to this account is written in (``MailLanguage``), once known.
    var language: String? = nil
}

/// Storage of accounts and anonymous devices.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL. Writes queue at `database`'s write gate;
/// made over an open transaction (`database` nil), they run in it.
struct UserRepository: Sendable {
    let db: any SQLDatabase
    var database: Database? = nil

    static let columns =
        "id, is_anonymous, username, username_key, email, email_key, password_hash, role, display_name, show_name_on_posts, gender, birth_date, bio, home_city, avatar_url, preferences, created_at, updated_at, email_verified_at, language"

    /// ``columns`` qualified with `alias` for joins.
    static func columns(as alias: String) -> String {
        columns.split(separator: ",").map { "\(alias).\($0.trimmingCharacters(in: .whitespaces))" }
            .joined(separator: ", ")
    }

    /// Inserts an account or device. Not queued at the write gate: a gated write waits for a
    /// pool connection while holding the gate, and a storm of sign-ups (each reading first)
    /// kept the pool busy long enough for queued writes to give up with 503s (the thousand-way
    /// sign-up race). A unique violation, its usual failure, costs SQLite nothing.
    func insert(_ user: UserRecord) async throws {
        try await db.insert(into: "users").model(user, keyEncodingStrategy: .convertToSnakeCase).run()
        if let name = user.displayName { try await Self.setNameKey(user.id, name, on: db) }
    }

    private static func setNameKey(_ id: String, _ displayName: String?, on db: any SQLDatabase) async throws {
        try await db.raw(
            "UPDATE users SET name_key = \(bind: displayName.map { SearchText.fold($0) }) WHERE id = \(bind: id)"
        ).run()
    }

    /// Members whose username, or a word of whose display name, starts with `query` (folded),
    /// exact usernames first; never anonymous devices, nor users blocked by or blocking `viewer`.
    func search(_ query: String, viewer: String?, limit: Int) async throws -> [UserRecord] {
        let username = SQLText.likeEscaped(AccountRules.usernameKey(query)) + "%"
        let folded = SQLText.likeEscaped(SearchText.fold(query))
        guard !folded.isEmpty || username != "%" else { return [] }
        var blocked: SQLQueryString = ""
        if let viewer {
            blocked = """
                AND id NOT IN (SELECT blocked_id FROM blocks WHERE blocker_id = \(bind: viewer)
                    UNION SELECT blocker_id FROM blocks WHERE blocked_id = \(bind: viewer))
                """
        }
        return try await db.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM users
            WHERE is_anonymous = \(bind: false) AND username IS NOT NULL
                AND (username_key LIKE \(bind: username) ESCAPE '\\'
                    OR (\(bind: folded) <> '' AND (name_key LIKE \(bind: folded + "%") ESCAPE '\\'
                        OR name_key LIKE \(bind: "% " + folded + "%") ESCAPE '\\')))
                \(blocked)
            ORDER BY CASE WHEN username_key = \(bind: AccountRules.usernameKey(query)) THEN 0 ELSE 1 END, username_key
            LIMIT \(bind: limit)
            """
        ).all().map(Self.decode)
    }

    /// Fills `name_key` where it is missing (rows from before it existed); returns how many.
    func backfillNameKeys() async throws -> Int {
        var filled = 0
        while true {
            let rows = try await db.raw(
                "SELECT id, display_name FROM users WHERE display_name IS NOT NULL AND name_key IS NULL LIMIT 500"
            ).all()
            for row in rows {
                let (id, name) = (
                    try row.decode(column: "id", as: String.self),
                    try row.decode(column: "display_name", as: String.self)
                )
                try await Database.write(database, db) { db in try await Self.setNameKey(id, name, on: db) }
            }
            filled += rows.count
            if rows.count < 500 { return filled }
        }
    }

    func find(id: String) async throws -> UserRecord? {
        try await one("SELECT \(unsafeRaw: Self.columns) FROM users WHERE id = \(bind: id)")
    }

    /// The account and the address its newest live change-of-address link was mailed to, in one
    /// query: `GET /v1/me`, the hottest signed-in read, pays no second round trip for it.
    ///
    /// On PostgreSQL it is a prepared statement (``FindWithPendingEmail``): planning it cost
    /// PostgreSQL more than running it.
    func findWithPendingEmail(id: String, now: Int64) async throws -> (UserRecord, String?)? {
        if let database, database.kind == .postgres {
            return try await database.execute(prepared: FindWithPendingEmail(id: id, now: now)).first
        }
        guard
            let row = try await db.raw(
                """
                SELECT \(unsafeRaw: Self.columns), (
                    SELECT email FROM email_tokens
                    WHERE user_id = users.id AND purpose = 'change' AND used_at IS NULL AND expires_at > \(bind: now)
                    ORDER BY created_at DESC LIMIT 1) AS pending_email
                FROM users WHERE id = \(bind: id)
                """
            ).first()
        else { return nil }
        return (try Self.decode(row), try row.decode(column: "pending_email", as: String?.self))
    }

    /// ``findWithPendingEmail(id:now:)``'s query on PostgreSQL, prepared (the same text with
    /// numbered parameters).
    struct FindWithPendingEmail: PostgresPreparedStatement {
        typealias Row = (UserRecord, String?)
        static let sql = """
            SELECT \(UserRepository.columns), (
                SELECT email FROM email_tokens
                WHERE user_id = users.id AND purpose = 'change' AND used_at IS NULL AND expires_at > $2
                ORDER BY created_at DESC LIMIT 1) AS pending_email
            FROM users WHERE id = $1
            """
        let id: String
        let now: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(id)
            bindings.append(now)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let sqlRow = row.sql()
            return (try UserRepository.decode(sqlRow), try sqlRow.decode(column: "pending_email", as: String?.self))
        }
    }

    /// The users with these ids that exist, by id (one query).
    func find(ids: [String]) async throws -> [String: UserRecord] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await db.raw(
            "SELECT \(unsafeRaw: Self.columns) FROM users WHERE id IN (\(binds: Array(Set(ids))))"
        ).all()
        return Dictionary(uniqueKeysWithValues: try rows.map(Self.decode).map { ($0.id, $0) })
    }

    /// The account whose username key or email key is `key`.
    func find(loginKey key: String) async throws -> UserRecord? {
        try await one(
            "SELECT \(unsafeRaw: Self.columns) FROM users WHERE username_key = \(bind: key) OR email_key = \(bind: key)"
        )
    }

    func find(usernameKey: String) async throws -> UserRecord? {
        try await one("SELECT \(unsafeRaw: Self.columns) FROM users WHERE username_key = \(bind: usernameKey)")
    }

    func usernameTaken(_ key: String) async throws -> Bool {
        try await db.raw("SELECT 1 AS one FROM users WHERE username_key = \(bind: key)").first() != nil
    }

    /// The account with this email key (never a username).
    func find(emailKey key: String) async throws -> UserRecord? {
        try await one("SELECT \(unsafeRaw: Self.columns) FROM users WHERE email_key = \(bind: key)")
    }

    /// Sets the language mail to the account is written in, unless it has one.
    func adoptLanguage(userID: String, language: String) async throws {
        try await Database.write(database, db) { db in
            try await db.raw(
                "UPDATE users SET language = \(bind: language) WHERE id = \(bind: userID) AND language IS NULL"
            ).run()
        }
    }

    func emailTaken(_ key: String) async throws -> Bool {
        try await db.raw("SELECT 1 AS one FROM users WHERE email_key = \(bind: key)").first() != nil
    }

    /// Turns an anonymous device into an account; `false` if `user.id` is not an anonymous device.
    func upgrade(_ user: UserRecord) async throws -> Bool {
        let row = try await Database.write(database, db) { db in
            try await db.raw(
                """
                UPDATE users SET is_anonymous = \(bind: false), username = \(bind: user.username),
                    username_key = \(bind: user.usernameKey), email = \(bind: user.email), email_key = \(bind: user.emailKey),
                    password_hash = \(bind: user.passwordHash), display_name = \(bind: user.displayName),
                    email_verified_at = \(bind: user.emailVerifiedAt), name_key = \(bind: user.displayName.map { SearchText.fold($0) }), updated_at = \(bind: user.updatedAt)
                WHERE id = \(bind: user.id) AND is_anonymous = \(bind: true)
                RETURNING id
                """
            ).first()
        }
        return row != nil
    }

    func updateProfile(_ user: UserRecord) async throws {
        try await Database.write(database, db) { db in
            try await db.raw(
                """
                UPDATE users SET display_name = \(bind: user.displayName), show_name_on_posts = \(bind: user.showNameOnPosts),
                    gender = \(bind: user.gender), birth_date = \(bind: user.birthDate), bio = \(bind: user.bio),
                    home_city = \(bind: user.homeCity), avatar_url = \(bind: user.avatarUrl),
                    preferences = \(bind: user.preferences), wall_genders = \(bind: WallRules.gendersKey(user.wallGenders)),
                    name_key = \(bind: user.displayName.map { SearchText.fold($0) }), updated_at = \(bind: user.updatedAt)
                WHERE id = \(bind: user.id)
                """
            ).run()
        }
    }

    /// Sets a new password; links mailed before it (a change of address waiting, a reset) stop working.
    func setPassword(userID: String, hash: String, now: Int64) async throws {
        try await Database.write(database, db, atomic: true) { db in
            try await db.raw(
                "UPDATE users SET password_hash = \(bind: hash), updated_at = \(bind: now) WHERE id = \(bind: userID)"
            ).run()
            try await db.raw("DELETE FROM email_tokens WHERE user_id = \(bind: userID) AND used_at IS NULL").run()
        }
    }

    func delete(id: String) async throws {
        let postgres = database?.kind == .postgres
        try await Database.write(database, db, atomic: true) { db in
            // On PostgreSQL the account's row is held first: a vote group holding it (to add a
            // vote) ends before the votes are counted out below, and a later one leaves the
            // account's votes alone (PostRepository.lockVotable).
            if postgres { try await db.raw("SELECT id FROM users WHERE id = \(bind: id) FOR UPDATE").run() }
            // Its votes, comments and favourites go with it: the counters first let go of them.
            try await PostRepository.withdraw(userID: id, postgres: postgres, on: db)
            try await CatalogRepository.withdrawFavorites(of: id, on: db)
            try await db.raw("DELETE FROM users WHERE id = \(bind: id)").run()
        }
    }

    /// Decodes column by column: the hot path (every `GET /v1/me`) avoids the generic row decoder.
    private func one(_ query: SQLQueryString) async throws -> UserRecord? {
        guard let row = try await db.raw(query).first() else { return nil }
        return try Self.decode(row)
    }

    static func decode(_ row: any SQLRow) throws -> UserRecord {
        UserRecord(
            id: try row.decode(column: "id", as: String.self),
            isAnonymous: try row.decode(column: "is_anonymous", as: Bool.self),
            username: try row.decode(column: "username", as: String?.self),
            usernameKey: try row.decode(column: "username_key", as: String?.self),
            email: try row.decode(column: "email", as: String?.self),
            emailKey: try row.decode(column: "email_key", as: String?.self),
            passwordHash: try row.decode(column: "password_hash", as: String?.self),
            role: try row.decode(column: "role", as: Role.self),
            displayName: try row.decode(column: "display_name", as: String?.self),
            showNameOnPosts: try row.decode(column: "show_name_on_posts", as: Bool.self),
            gender: try row.decode(column: "gender", as: String?.self),
            birthDate: try row.decode(column: "birth_date", as: String?.self),
            bio: try row.decode(column: "bio", as: String?.self),
            homeCity: try row.decode(column: "home_city", as: String?.self),
            avatarUrl: try row.decode(column: "avatar_url", as: String?.self),
            preferences: try row.decode(column: "preferences", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self),
            emailVerifiedAt: try row.decode(column: "email_verified_at", as: Int64?.self),
            language: try row.decode(column: "language", as: String?.self))
    }
}
