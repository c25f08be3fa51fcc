import Foundation
import Testing
import TonightCore

@Suite("Account rules")
struct AccountRulesTests {
    @Test("usernames: NFKC and case fold to one key; 3–30 of a-z 0-9 _ .")
    func usernames() throws {
        let fullWidth = try AccountRules.username("ＡＬＩＣＥ").get()
        #expect(fullWidth.key == "alice")
        #expect(fullWidth.display == "ALICE")
        #expect(try AccountRules.username("night.owl_42").get().key == "night.owl_42")
        for bad in ["ab", String(repeating: "a", count: 31), "has space", "émile", "dash-name", "emoji🎉"] {
            #expect(throws: FieldIssue.self, "\(bad)") { try AccountRules.username(bad).get() }
        }
        #expect(AccountRules.usernameKey(" Ｂob ") == "bob")
    }

    @Test("emails: practical validation, lower-cased key")
    func emails() throws {
        #expect(try AccountRules.email(" Alice@Example.COM ").get() == "alice@example.com")
        #expect(try AccountRules.email("first.last+tag@sub.example.org").get() == "first.last+tag@sub.example.org")
        for bad in ["", "plain", "a@b", "a@@b.com", ".a@b.com", "a..b@c.com", "a@-b.com", "a b@c.com", "a@b.c"] {
            #expect(throws: FieldIssue.self, "\(bad)") { try AccountRules.email(bad).get() }
        }
    }

    @Test("passwords: length, common list, simplicity, not the username")
    func passwords() {
        #expect(AccountRules.password("correct horse battery") == nil)
        #expect(AccountRules.password("short")?.code == "too_short")
        #expect(AccountRules.password(String(repeating: "ab1!", count: 60))?.code == "too_long")
        #expect(AccountRules.password("Password123")?.code == "too_common")
        #expect(AccountRules.password("aaaaaaaaaaaa")?.code == "too_common")
        #expect(AccountRules.password("nightowl1990", username: "NightOwl1990")?.code == "same_as_username")
    }

    @Test("age groups from birth dates, and calendar dates that exist")
    func ageGroups() throws {
        let today = try #require(CalendarDate("2026-11-22"))
        #expect(AgeGroup(birthDate: try #require(CalendarDate("2008-11-23")), today: today) == .under18)
        #expect(AgeGroup(birthDate: try #require(CalendarDate("2008-11-22")), today: today) == .from18to24)
        #expect(AgeGroup(birthDate: try #require(CalendarDate("1991-01-01")), today: today) == .from35to44)
        #expect(AgeGroup(birthDate: try #require(CalendarDate("1950-05-05")), today: today) == .over55)
        #expect(CalendarDate("2024-02-29") != nil)
        #expect(CalendarDate("2023-02-29") == nil)
        #expect(CalendarDate("2023-13-01") == nil)
        #expect(CalendarDate("23-01-01") == nil)
        #expect(CalendarDate("2023-1-01") == nil)
    }
}

@Suite("Rate limiting, retries and identifiers")
struct MechanicsTests {
    @Test("a token bucket allows its capacity, then says when to retry, then refills")
    func tokenBucket() {
        let start = Date(timeIntervalSince1970: 0)
        var bucket = TokenBucket(capacity: 3, period: 60, now: start)
        for _ in 0..<3 { #expect(bucket.take(now: start) == .allowed) }
        #expect(bucket.take(now: start) == .limited(retryAfter: 20))
        #expect(bucket.take(now: start.addingTimeInterval(20)) == .allowed)
        #expect(!bucket.isFull(now: start.addingTimeInterval(20)))
        #expect(bucket.isFull(now: start.addingTimeInterval(80)))
    }

    @Test("retry delays double up to the cap; the last attempt is dead")
    func retryPolicy() {
        let policy = RetryPolicy(baseDelay: 5, maxDelay: 60)
        #expect([1, 2, 3, 4, 5, 10].map(policy.delay(afterAttempts:)) == [5, 10, 20, 40, 60, 60])
        let now = Date(timeIntervalSince1970: 100)
        #expect(policy.next(afterAttempts: 1, maxAttempts: 3, now: now) == .retry(at: now.addingTimeInterval(5)))
        #expect(policy.next(afterAttempts: 3, maxAttempts: 3, now: now) == .dead)
    }

    @Test("identifiers are UUIDv7: version 7, unique, ordered by time")
    func identifiers() {
        let early = Identifier.make(now: Date(timeIntervalSince1970: 1_000))
        let late = Identifier.make(now: Date(timeIntervalSince1970: 2_000))
        #expect(early < late)
        #expect(UUID(uuidString: early) != nil)
        #expect(Array(early)[14] == "7")
        let many = Set((0..<1000).map { _ in Identifier.make() })
        #expect(many.count == 1000)
    }
}
