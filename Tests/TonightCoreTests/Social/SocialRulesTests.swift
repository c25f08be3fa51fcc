import Foundation
import Testing

@testable import TonightCore

@Suite("Social rules: walls, quiet hours, change sentences, usernames from identities")
struct SocialRulesTests {
    @Test func gendersKeyAndAcceptance() {
        #expect(WallRules.gendersKey([]) == "")
        #expect(WallRules.gendersKey(["male", "female", "male"]) == "|female|male|")
        #expect(WallRules.accepts("", gender: nil))
        #expect(WallRules.accepts("|female|", gender: "female"))
        #expect(!WallRules.accepts("|female|", gender: "male"))
        #expect(!WallRules.accepts("|female|", gender: nil))
    }

    @Test func adultsOnly() throws {
        let today = try #require(CalendarDate("2026-11-22"))
        #expect(WallRules.isAdult(birthDate: nil, today: today))
        #expect(WallRules.isAdult(birthDate: "2008-11-22", today: today))
        #expect(!WallRules.isAdult(birthDate: "2008-11-23", today: today))
        // On 29 February the cutoff is the 28th of a non-leap year.
        let leap = try #require(CalendarDate("2028-02-29"))
        #expect(WallRules.adultBirthDateCutoff(today: leap) == "2010-02-28")
        #expect(WallRules.pair("b", "a") == ("a", "b"))
    }

    @Test func quietHoursAcrossMidnightAndInAZone() throws {
        let quiet = try #require(QuietHours(start: "22:00", end: "07:00"))
        let utc = try #require(TimeZone(identifier: "UTC"))
        let paris = try #require(TimeZone(identifier: "Europe/Paris"))
        let lateUTC = try Date("2026-11-22T22:30:00Z", strategy: .iso8601)
        #expect(quiet.contains(lateUTC, timeZone: utc))
        #expect(quiet.contains(lateUTC, timeZone: paris))  // 23:30 in Paris
        let noonUTC = try Date("2026-11-22T12:00:00Z", strategy: .iso8601)
        #expect(!quiet.contains(noonUTC, timeZone: utc))
        let day = try #require(QuietHours(start: "09:00", end: "17:00"))
        #expect(day.contains(noonUTC, timeZone: utc))
        #expect(try #require(QuietHours(start: "08:00", end: "08:00")).contains(noonUTC, timeZone: utc) == false)
        #expect(QuietHours(start: "25:00", end: "07:00") == nil)
        #expect(QuietHours(start: "7:00", end: "08:00") == nil)
    }

    @Test func changeSentences() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        #expect(
            EventChangeText.describe(
                event: "Techno", field: "start", newValue: "2031-01-15T22:15:00Z", timeZone: berlin)
                == "“Techno” now starts Wednesday 2031-01-15 at 23:15")
        #expect(
            EventChangeText.describe(event: "Techno", field: "start", newValue: "2031-01-18", timeZone: berlin)
                == "“Techno” moved to Saturday 2031-01-18")
        #expect(
            EventChangeText.describe(event: "Techno", field: "status", newValue: "cancelled", timeZone: berlin)
                == "“Techno” is cancelled")
        #expect(
            EventChangeText.describe(event: "Techno", field: "place", newValue: "Tresor", timeZone: berlin)
                == "“Techno” moved to Tresor")
    }

    @Test func usernamesFromIdentities() {
        #expect(AccountRules.suggestedUsername(name: "Ann", email: "a@example.com") == "ann")
        #expect(AccountRules.suggestedUsername(name: "Zoë Ørsted", email: nil) == "zoeorsted")
        // Too short once in Latin letters ("li"): the email's local part instead.
        #expect(AccountRules.suggestedUsername(name: "李", email: "li.wei@example.com") == "li.wei")
        #expect(AccountRules.suggestedUsername(name: nil, email: "x@example.com") == "user")
    }
}
