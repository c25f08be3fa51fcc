import Foundation
import HTTPTypes
import OpenAPIRuntime
import TonightCore

/// A limit openapi.yaml sets on a value: a string's length, a number's range, an array's size,
/// an object's fields. `scripts/generate` writes each operation's limits (`SpecLimits.query`,
/// `SpecLimits.body`) from the spec; ``SpecLimitMiddleware`` enforces them before any handler runs.
indirect enum SpecLimit: Sendable {
    case string(minLength: Int?, maxLength: Int?)
    case number(minimum: Double?, maximum: Double?, integer: Bool)
    case array(minItems: Int?, maxItems: Int?, items: SpecLimit?)
    case object([String: SpecLimit])

    /// What is wrong with a decoded JSON `value` at `field` (types are the decoder's business:
    /// only values of the limit's type are checked). With `sizesOnly`, only maximum lengths and
    /// item counts.
    func issues(_ value: Any, at field: String, sizesOnly: Bool = false) -> [FieldIssue] {
        switch (self, value) {
        case (.string(let minLength, let maxLength), let text as String):
            return Self.length(text.unicodeScalars.count, min: sizesOnly ? nil : minLength, max: maxLength, at: field)
        case (.number(let minimum, let maximum, _), let number as NSNumber) where !(value is Bool) && !sizesOnly:
            return Self.range(number.doubleValue, min: minimum, max: maximum, at: field)
        case (.array(let minItems, let maxItems, let items), let array as [Any]):
            if let maxItems, array.count > maxItems {
                return [.init(field: field, code: "too_many", message: "At most \(maxItems) items.")]
            }
            if let minItems, array.count < minItems, !sizesOnly {
                return [.init(field: field, code: "too_few", message: "At least \(minItems) items.")]
            }
            guard let items else { return [] }
            return array.enumerated().flatMap {
                items.issues($0.element, at: "\(field)[\($0.offset)]", sizesOnly: sizesOnly)
            }
        case (.object(let fields), let object as [String: Any]):
            return fields.sorted { $0.key < $1.key }.flatMap { name, limit in
                object[name].map {
                    limit.issues($0, at: field.isEmpty ? name : "\(field).\(name)", sizesOnly: sizesOnly)
                } ?? []
            }
        default:
            return []
        }
    }

    /// Whether it sets a maximum length or item count anywhere (else a body is not even parsed).
    var hasSizes: Bool {
        switch self {
        case .string(_, let maxLength): maxLength != nil
        case .number: false
        case .array(_, let maxItems, let items): maxItems != nil || items?.hasSizes == true
        case .object(let fields): fields.values.contains { $0.hasSizes }
        }
    }

    /// What is wrong with a query parameter: its texts in order (an array parameter is repeated,
    /// `kind=show&kind=party`; any other parameter is checked at each occurrence).
    func issues(query texts: [String], at field: String) -> [FieldIssue] {
        guard case .array(let minItems, let maxItems, let items) = self else {
            return texts.flatMap { issues(query: $0, at: field) }
        }
        if let maxItems, texts.count > maxItems {
            return [.init(field: field, code: "too_many", message: "At most \(maxItems) items.")]
        }
        if let minItems, texts.count < minItems {
            return [.init(field: field, code: "too_few", message: "At least \(minItems) items.")]
        }
        return items.map { items in texts.flatMap { items.issues(query: $0, at: field) } } ?? []
    }

    /// What is wrong with one text of a query parameter.
    private func issues(query text: String, at field: String) -> [FieldIssue] {
        switch self {
        case .string(let minLength, let maxLength):
            return Self.length(text.unicodeScalars.count, min: minLength, max: maxLength, at: field)
        case .number(let minimum, let maximum, let integer):
            guard let number = integer ? Int(text).map(Double.init) : Double(text), number.isFinite else {
                let kind = integer ? "a whole number" : "a number"
                return [.init(field: field, code: "invalid", message: "The \(field) parameter must be \(kind).")]
            }
            return Self.range(number, min: minimum, max: maximum, at: field)
        case .array, .object:
            return []
        }
    }

    private static func length(_ count: Int, min: Int?, max: Int?, at field: String) -> [FieldIssue] {
        if let max, count > max {
            return [.init(field: field, code: "too_long", message: "At most \(max) characters.")]
        }
        if let min, count < min {
            return [.init(field: field, code: "too_short", message: "At least \(min) character\(min == 1 ? "" : "s").")]
        }
        return []
    }

    private static func range(_ number: Double, min: Double?, max: Double?, at field: String) -> [FieldIssue] {
        if let min, number < min {
            return [.init(field: field, code: "out_of_range", message: "At least \(Self.text(min)).")]
        }
        if let max, number > max {
            return [.init(field: field, code: "out_of_range", message: "At most \(Self.text(max)).")]
        }
        return []
    }

    private static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}

/// Each operation's limits, written from the spec by `scripts/generate` (Generated/SpecLimits.swift).
enum SpecLimits {}

/// Refuses, with a 400 naming every field, what breaks the spec's limits before the runtime decodes
/// it and before any handler runs (the generated decoding checks types and required fields only):
///
/// - every limit on query parameters (lengths, ranges, numbers that are not numbers);
/// - the sizes in JSON bodies (`maxLength`, `maxItems`): what could make a handler do unbounded
///   work. A body's ranges and minimums are left to the handler's validation, which lists every
///   bad field of a form at once (the edge would answer only its own part of the list).
struct SpecLimitMiddleware: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var issues: [FieldIssue] = []
        if let limits = SpecLimits.query[operationID],
            let query = request.path?.split(separator: "?", maxSplits: 1).dropFirst().first
        {
            var texts: [String: [String]] = [:]
            var order: [String] = []
            for item in query.split(separator: "&") {
                let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                guard limits[name] != nil else { continue }
                let raw = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ") : ""
                if texts[name] == nil { order.append(name) }
                texts[name, default: []].append(raw.removingPercentEncoding ?? raw)
            }
            for name in order {
                issues += limits[name]?.issues(query: texts[name] ?? [], at: name) ?? []
            }
        }
        var body = body
        if let limit = SpecLimits.body[operationID], limit.hasSizes, let received = body,
            request.headerFields[.contentType]?.lowercased().hasPrefix("application/json") == true
        {
            // The body is already in memory (BodyLimitMiddleware read it, within the limit).
            let data = try await Data(collecting: received, upTo: .max)
            body = HTTPBody(data)
            if let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) {
                issues += limit.issues(object, at: "", sizesOnly: true)
            }
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
        return try await next(request, body, metadata)
    }
}
