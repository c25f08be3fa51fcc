import Foundation
import OpenAPIRuntime
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct MeHandlers: Sendable {
    let accounts: AccountService
    let users: UserRepository
    let sessions: SessionRepository
    let eventService: EventService
    let people: People
    let bans: BanList
    let fanout: any LiveFanout
    let oidc: OIDCVerifier
    let photos: ProfilePhotos

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let caller = try RequestInfo.requireCaller()
        guard let user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        return .ok(.init(body: .json(try .init(user))))
    }

    func updateMe(_ input: Operations.UpdateMe.Input) async throws -> Operations.UpdateMe.Output {
        let caller = try RequestInfo.requireMember()
        let change = input.body.json
        guard var user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        let before = user
        try ProfileEdit.apply(
            change, to: &user, today: CalendarDate(date: Date()),
            sports: Set(try await eventService.assembler.sports().keys))
        user.updatedAt = Clock.millis()
        try await users.updateProfile(user)
        // Sessions keep their players' gender and birth date for recommendations.
        if before.gender != user.gender || before.birthDate != user.birthDate {
            try await sessions.refreshPlayers(ofUser: user.id, from: Clock.millis())
        }
        return .ok(.init(body: .json(try .init(user))))
    }

    func deleteMe(_ input: Operations.DeleteMe.Input) async throws -> Operations.DeleteMe.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        try await confirmOwner(caller, password: body.password, idToken: body.idToken)
        let playing = try await sessions.upcomingSessions(of: caller.userID, from: Clock.millis())
        try await users.delete(id: caller.userID)
        await bans.revoke(caller.userID, .gone, fanout: fanout)
        await photos.deleteFiles(of: caller.userID)
        try await sessions.refreshPlayers(of: playing)
        return .noContent(.init())
    }

    func uploadProfilePhoto(_ input: Operations.UploadProfilePhoto.Input) async throws
        -> Operations.UploadProfilePhoto.Output
    {
        let caller = try RequestInfo.requireMember()
        let body: HTTPBody
        switch input.body {
        case .jpeg(let bytes): body = bytes
        case .png(let bytes): body = bytes
        }
        return .ok(.init(body: .json(try .init(try await photos.set(caller.userID, from: body)))))
    }

    func deleteProfilePhoto(_ input: Operations.DeleteProfilePhoto.Input) async throws
        -> Operations.DeleteProfilePhoto.Output
    {
        let caller = try RequestInfo.requireMember()
        return .ok(.init(body: .json(try .init(try await photos.remove(caller.userID)))))
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        try await accounts.changePassword(
            caller, current: body.currentPassword, new: body.newPassword,
            clientAddress: RequestInfo.current?.clientAddress ?? "unknown")
        return .noContent(.init())
    }

    /// Asks the caller to prove again that the account is theirs, for an action a stolen access
    /// token must not be enough for: the current password (under the sign-in failure limits), or,
    /// for an account without one, a fresh ID token from a provider linked to it.
    private func confirmOwner(_ caller: Principal, password: String?, idToken: String?) async throws {
        guard let user = try await users.find(id: caller.userID) else { throw APIError.accountGone }
        if let hash = user.passwordHash {
            guard let password else {
                throw APIError.validation([
                    FieldIssue(field: "password", code: "required", message: "Confirm with your current password.")
                ])
            }
            let address = RequestInfo.current?.clientAddress ?? "unknown"
            guard try await accounts.checkPassword(password, hash: hash, account: user.id, clientAddress: address)
            else {
                throw APIError.forbidden("The current password is wrong.", code: .wrongPassword)
            }
            return
        }
        guard let idToken else {
            throw APIError.validation([
                FieldIssue(
                    field: "idToken", code: "required",
                    message: "Sign in with your provider again to confirm, and send its ID token.")
            ])
        }
        let identity = try await AuthHandlers.verify(idToken, nonce: nil, with: oidc)
        try await accounts.confirm(identity, owns: user.id)
    }
}

/// Validation and application of `PATCH /v1/me`, kept apart from I/O.
enum ProfileEdit {
    /// Applies `change` to `user`, or throws a 400 listing every invalid field.
    static func apply(
        _ change: Components.Schemas.UpdateMeRequest, to user: inout UserRecord, today: CalendarDate,
        sports: Set<String>
    )
        throws
    {
        var issues: [FieldIssue] = []
        let cleared = Set((change.clear ?? []).map(\.rawValue))
        func both(_ field: String, _ isSet: Bool) {
            if isSet && cleared.contains(field) {
                issues.append(.init(field: field, code: "set_and_cleared", message: "Set or clear \(field), not both."))
            }
        }
        both("displayName", change.displayName != nil)
        both("gender", change.gender != nil)
        both("birthDate", change.birthDate != nil)
        both("bio", change.bio != nil)
        both("homeCity", change.homeCity != nil)
        both("avatarUrl", change.avatarUrl != nil)

        if let name = change.displayName?.trimmingCharacters(in: .whitespacesAndNewlines) {
            if name.isEmpty || name.count > 100 || !TextRules.isClean(name) {
                issues.append(
                    .init(
                        field: "displayName", code: "invalid", message: "Use 1–100 characters, no control characters."))
            } else {
                user.displayName = name
            }
        }
        if let bio = change.bio {
            if bio.count > 500 || !TextRules.isClean(bio, multiline: true) {
                issues.append(
                    .init(field: "bio", code: "invalid", message: "At most 500 characters, no control characters."))
            } else {
                user.bio = bio.isEmpty ? nil : bio
            }
        }
        if let city = change.homeCity?.trimmingCharacters(in: .whitespacesAndNewlines) {
            if city.isEmpty || city.count > 200 || !TextRules.isClean(city) {
                issues.append(
                    .init(field: "homeCity", code: "invalid", message: "Use 1–200 characters, no control characters."))
            } else {
                user.homeCity = city
            }
        }
        if let avatar = change.avatarUrl {
            if ProfilePhotos.isOwn(avatar, userID: user.id) {
                user.avatarUrl = String(avatar.prefix { $0 != "?" })
            } else {
                issues.append(
                    .init(
                        field: "avatarUrl", code: "not_own_photo",
                        message: "Upload a photo instead (POST /v1/me/photo); photos are served by this server only."))
            }
        }
        if let text = change.birthDate {
            if let date = CalendarDate(text), date <= today, today.year - date.year <= 120 {
                user.birthDate = date.description
            } else {
                issues.append(
                    .init(
                        field: "birthDate", code: "invalid_date",
                        message: "Use a real past date as YYYY-MM-DD."))
            }
        }
        if let gender = change.gender { user.gender = gender.rawValue }
        if let show = change.showNameOnPosts { user.showNameOnPosts = show }
        if let preferences = change.preferences {
            issues += PreferencesRules.issues(preferences, sports: sports)
            user.preferences = PreferencesRules.merge(preferences, into: user.preferences)
        }
        if cleared.contains("displayName") { user.displayName = nil }
        if cleared.contains("gender") { user.gender = nil }
        if cleared.contains("birthDate") { user.birthDate = nil }
        if cleared.contains("bio") { user.bio = nil }
        if cleared.contains("homeCity") { user.homeCity = nil }
        if cleared.contains("avatarUrl") { user.avatarUrl = nil }
        if !issues.isEmpty { throw APIError.validation(issues) }
    }
}

/// The preferences document as stored (JSON text on the user).
typealias PreferencesDocument = Components.Schemas.Preferences

/// Rules for the preferences document, stored as JSON text on the user.
enum PreferencesRules {
    /// Range and list checks, and sports that are not in the catalogue (`sports`: known slugs).
    static func issues(_ p: Components.Schemas.Preferences, sports: Set<String>) -> [FieldIssue] {
        var issues: [FieldIssue] = []
        for (name, list) in [("sportsPlayed", p.sportsPlayed), ("sportsNotWanted", p.sportsNotWanted)] {
            if let unknown = list?.first(where: { !sports.contains($0) }) {
                issues.append(
                    .init(
                        field: "preferences.\(name)", code: "unknown_sport",
                        message: "“\(unknown.prefix(60))” is not a sport slug; see GET /v1/sports."))
            }
        }
        if let radius = p.radiusMeters, !(100...500_000).contains(radius) {
            issues.append(
                .init(field: "preferences.radiusMeters", code: "out_of_range", message: "Use 100–500000 metres."))
        }
        if let budget = p.budget, !budget.isFinite || budget < 0 || budget > 1_000_000 {
            issues.append(.init(field: "preferences.budget", code: "out_of_range", message: "Use 0–1000000."))
        }
        let lists: [(String, [String]?, Int)] = [
            ("sportsPlayed", p.sportsPlayed, 100), ("sportsNotWanted", p.sportsNotWanted, 100),
            ("favoriteCategories", p.favoriteCategories, 100),
        ]
        for (name, list, max) in lists {
            guard let list else { continue }
            if list.count > max {
                issues.append(.init(field: "preferences.\(name)", code: "too_many", message: "At most \(max) items."))
            }
            if list.contains(where: {
                $0.trimmingCharacters(in: .whitespaces).isEmpty || $0.count > 60 || !TextRules.isClean($0)
            }) {
                issues.append(
                    .init(field: "preferences.\(name)", code: "invalid_item", message: "Items have 1–60 characters."))
            }
        }
        if (p.genderPreference?.count ?? 0) > 4 || (p.preferredGenders?.count ?? 0) > 4
            || (p.preferredAgeGroups?.count ?? 0) > 6
        {
            issues.append(.init(field: "preferences", code: "too_many", message: "Too many items in a list."))
        }
        return issues
    }

    /// The stored document with every field `change` sets replaced.
    static func merge(_ change: Components.Schemas.Preferences, into stored: String) -> String {
        var current = decode(stored)
        if let v = change.genderPreference { current.genderPreference = unique(v) }
        if let v = change.sportsPlayed { current.sportsPlayed = unique(v) }
        if let v = change.sportsNotWanted { current.sportsNotWanted = unique(v) }
        if let v = change.preferredGenders { current.preferredGenders = unique(v) }
        if let v = change.preferredAgeGroups { current.preferredAgeGroups = unique(v) }
        if let v = change.radiusMeters { current.radiusMeters = v }
        if let v = change.budget { current.budget = v }
        if let v = change.favoriteCategories { current.favoriteCategories = unique(v) }
        let data = (try? JSONEncoder().encode(current)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ stored: String) -> Components.Schemas.Preferences {
        if stored == "{}" { return .init() }
        return (try? JSONDecoder().decode(Components.Schemas.Preferences.self, from: Data(stored.utf8))) ?? .init()
    }

    private static func unique<T: Hashable>(_ values: [T]) -> [T] {
        var seen = Set<T>()
        return values.filter { seen.insert($0).inserted }
    }
}

extension Components.Schemas.Me {
    init(_ user: UserRecord, today: CalendarDate = CalendarDate(date: Date())) throws {
        self.init(
            id: user.id, username: user.username, email: user.email,
            role: Components.Schemas.Role(rawValue: user.role) ?? .user, isAnonymous: user.isAnonymous,
            displayName: user.displayName, showNameOnPosts: user.showNameOnPosts,
            gender: user.gender.flatMap(Components.Schemas.Gender.init(rawValue:)), birthDate: user.birthDate,
            ageGroup: user.ageGroup(today: today),
            bio: user.bio, homeCity: user.homeCity, avatarUrl: ProfilePhotos.published(user.avatarUrl),
            preferences: PreferencesRules.decode(user.preferences),
            createdAt: Clock.date(user.createdAt))
    }
}

extension UserRecord {
    /// The genders this user wants to see on event walls (empty: everyone).
    var wallGenders: [String] {
        (PreferencesRules.decode(preferences).genderPreference ?? []).map(\.rawValue)
    }

    /// The age bracket from the stored birth date, if any.
    func ageGroup(today: CalendarDate = CalendarDate(date: Date())) -> Components.Schemas.AgeGroup? {
        birthDate.flatMap(CalendarDate.init).flatMap {
            Components.Schemas.AgeGroup(rawValue: AgeGroup(birthDate: $0, today: today).rawValue)
        }
    }
}
