import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct AnalyticsHandlers: Sendable {
    let analytics: AnalyticsRepository
    let limiter: RateLimiter
    let config: AppConfig

    /// Both are open to signed-out callers: each address, and each member, gets its own budget.
    private func limit(_ kind: String, capacity: Int, period: TimeInterval) async throws {
        guard let info = RequestInfo.current else { return }
        try await limiter.check("\(kind)-ip:\(info.clientAddress)", capacity: capacity, period: period)
        if let user = info.principal?.userID {
            try await limiter.check("\(kind)-user:\(user)", capacity: capacity, period: period)
        }
    }

    func recordAnalytics(_ input: Operations.RecordAnalytics.Input) async throws -> Operations.RecordAnalytics.Output {
        let body = input.body.json
        guard body.events.count <= 100 else {
            throw APIError.validation([
                .init(field: "events", code: "too_many", message: "Send at most 100 events.")
            ])
        }
        try await limit("analytics", capacity: config.analyticsPerMinute, period: 60)
        let user = RequestInfo.current?.principal?.userID
        let now = Clock.millis()
        var issues: [FieldIssue] = []
        var records: [AnalyticsRecord] = []
        for (index, event) in body.events.enumerated() {
            let properties = event.properties?.additionalProperties ?? [:]
            guard Self.isEventName(event.name) else {
                issues.append(
                    .init(
                        field: "events[\(index)].name", code: "invalid",
                        message: "Use 1–100 of letters, digits, _ . : -."))
                continue
            }
            guard properties.count <= 20,
                properties.allSatisfy({
                    TextRules.isClean($0.key) && TextRules.isClean($0.value) && $0.key.count <= 100
                })
            else {
                issues.append(
                    .init(
                        field: "events[\(index)].properties", code: "invalid",
                        message: "Up to 20 plain-text properties."))
                continue
            }
            let json = String(decoding: try JSONEncoder().encode(properties), as: UTF8.self)
            records.append(
                AnalyticsRecord(
                    id: Identifier.make(), userID: user, name: event.name,
                    cityKey: event.city.flatMap { TextRules.isClean($0) ? $0 : nil }, properties: json,
                    occurredAt: Clock.millis(event.time), receivedAt: now))
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
        try await analytics.add(records)
        return .accepted(.init(body: .json(.init(accepted: records.count))))
    }

    func sendFeedback(_ input: Operations.SendFeedback.Input) async throws -> Operations.SendFeedback.Output {
        let body = input.body.json
        let text = body.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, text.count <= 4000, TextRules.isClean(text, multiline: true) else {
            throw APIError.validation([.init(field: "text", code: "invalid", message: "Write 1–4000 characters.")])
        }
        let email = body.email?.trimmingCharacters(in: .whitespaces)
        if let email, !email.isEmpty, (try? AccountRules.email(email).get()) == nil {
            throw APIError.validation([
                .init(field: "email", code: "invalid", message: "Give a valid email or none.")
            ])
        }
        try await limit("feedback", capacity: config.feedbackPerHour, period: 3600)
        try await analytics.addFeedback(
            id: Identifier.make(), userID: RequestInfo.current?.principal?.userID, text: text,
            email: email.flatMap { $0.isEmpty ? nil : $0 },
            appVersion: body.appVersion.flatMap { TextRules.isClean($0) ? $0 : nil }, now: Clock.millis())
        return .created(.init())
    }

    static func isEventName(_ name: String) -> Bool {
        (1...100).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
                    || byte == UInt8(ascii: "-")
            }
    }
}
