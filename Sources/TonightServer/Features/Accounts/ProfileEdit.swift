import Foundation
import TonightAPI
import TonightCore

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
            emailVerified: user.isAnonymous ? nil : user.emailVerifiedAt != nil,
            role: Components.Schemas.Role(rawValue: user.role.rawValue) ?? .user, isAnonymous: user.isAnonymous,
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
