import Foundation
import HummingbirdTesting
import Testing

@testable import TonightServer

@Suite("Analytics, feedback and the admin report")
struct AnalyticsRouteTests {
    @Test(
        "batched events and feedback are stored; the report counts actives, posts and votes per city and day",
        arguments: Backend.available)
    func report(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let (alice, bob) = (try await client.member("alice"), try await client.member("bob"))
            let now = ISO8601DateFormatter().string(from: Date())
            let batch: JSON = [
                "events": [
                    [
                        "name": "feed.open", "time": now, "city": "Halifax$Nova Scotia$CA",
                        "properties": ["feed": "all"],
                    ],
                    ["name": "clip.view", "time": now],
                ]
            ]
            let stored = try await client.send(.post, "/v1/analytics/events", json: batch, token: alice.token)
            #expect(stored.status == .accepted && stored.json["accepted"] as? Int == 2, "\(stored.text)")
            let bad = try await client.send(
                .post, "/v1/analytics/events", json: ["events": [["name": "no spaces", "time": now]]])
            #expect(bad.json.fieldErrors == ["events[0].name"])
            #expect(try await rowCount("analytics_events", in: services) == 2)
            let post = try await insertPost(services, author: bob.id, city: "Sydney$New South Wales$AU")
            _ = try await client.send(.put, "/v1/posts/\(post)/vote", json: ["value": 1], token: alice.token)
            let feedback = try await client.send(
                .post, "/v1/feedback", json: ["text": "Love it", "email": "a@example.com"])
            #expect(feedback.status == .created)
            #expect(try await client.send(.post, "/v1/feedback", json: ["text": " "]).status == .badRequest)
            #expect(try await rowCount("feedback", in: services) == 1)
            let rows = try await services.report(days: 1)
            let all = try #require(rows.first { $0.city == "all" })
            #expect(all.activeUsers == 2 && all.posts == 1 && all.votes == 1)
            #expect(
                rows.first { $0.city == "Sydney$New South Wales$AU" }.map { ($0.posts, $0.votes) } ?? (0, 0) == (1, 1))
            #expect(rows.first { $0.city == "Halifax$Nova Scotia$CA" }?.activeUsers == 1)
        }
    }

    @Test("feedback and analytics take no more than their budget per address and per member")
    func anonymousWritesAreLimited() async throws {
        try await withApp(
            .sqlite,
            configure: {
                $0.feedbackPerHour = 3; $0.analyticsPerMinute = 2
            }
        ) {
            services, client in
            var statuses: [Int] = []
            for index in 0..<4 {
                statuses.append(
                    Int(try await client.send(.post, "/v1/feedback", json: ["text": "note \(index)"]).status.code))
            }
            #expect(statuses == [201, 201, 201, 429])
            let limited = try await client.send(.post, "/v1/feedback", json: ["text": "again"])
            #expect(limited.headers[.retryAfter] != nil && limited.json["code"] as? String == "rate_limited")
            #expect(try await rowCount("feedback", in: services) == 3)
            let batch: JSON = ["events": [["name": "open", "time": "2026-11-25T20:00:00Z"]]]
            var analytics: [Int] = []
            for _ in 0..<3 {
                analytics.append(Int(try await client.send(.post, "/v1/analytics/events", json: batch).status.code))
            }
            #expect(analytics == [202, 202, 429])
        }
    }
}
