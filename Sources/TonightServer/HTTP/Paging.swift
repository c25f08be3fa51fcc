import Foundation
import TonightCore

/// Page sizes, opaque cursors and the other query parameters lists share.
///
/// A cursor is base64url text the client passes back unchanged: either an offset into a ranked
/// list (`o:<n>`) or a keyset position (`k:<number>:<id>`) for lists ordered by time.
enum Paging {
    /// `limit` validated to 1–100, 20 when absent.
    static func limit(_ value: Int?) throws -> Int {
        guard let value else { return 20 }
        guard (1...100).contains(value) else {
            throw APIError.validation([
                .init(field: "limit", code: "out_of_range", message: "Use a limit from 1 to 100.")
            ])
        }
        return value
    }

    static func encode(_ text: String) -> String {
        Base64URL.encode(Data(text.utf8))
    }

    static func decode(_ cursor: String) throws -> String {
        guard let data = Base64URL.decode(cursor), let text = String(data: data, encoding: .utf8) else {
            throw badCursor
        }
        return text
    }

    static let badCursor = APIError.validation([
        .init(field: "cursor", code: "invalid", message: "This cursor was not made by this list.")
    ])

    /// The offset a cursor stands for (0 without one).
    static func offset(_ cursor: String?) throws -> Int {
        guard let cursor else { return 0 }
        let text = try decode(cursor)
        guard text.hasPrefix("o:"), let offset = Int(text.dropFirst(2)), offset >= 0, offset < 1_000_000 else {
            throw badCursor
        }
        return offset
    }

    static func offsetCursor(_ offset: Int) -> String { encode("o:\(offset)") }

    /// The keyset position a cursor stands for.
    static func keyset(_ cursor: String?) throws -> (Int64, String)? {
        guard let cursor else { return nil }
        let parts = try decode(cursor).split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "k", let number = Int64(parts[1]) else { throw badCursor }
        return (number, String(parts[2]))
    }

    static func keysetCursor(_ number: Int64, _ id: String) -> String { encode("k:\(number):\(id)") }

    /// A page of `items` starting at `offset`, with the next cursor when more remain.
    static func page<T>(_ items: [T], offset: Int, limit: Int) -> (items: [T], next: String?) {
        guard offset < items.count else { return ([], nil) }
        let end = min(items.count, offset + limit)
        return (Array(items[offset..<end]), end < items.count ? offsetCursor(end) : nil)
    }

    /// The `near=lat,lon` and `radius` (metres, default 2000, 1–100000) query parameters; problems go
    /// to `issues`.
    static func near(_ near: String?, radius: Int?, issues: inout [FieldIssue]) -> (GeoPoint?, Double) {
        var point: GeoPoint?
        if let near {
            switch GeoPoint.parse(near, field: "near") {
            case .success(let parsed): point = parsed
            case .failure(let issue): issues.append(issue)
            }
        }
        guard let radius else { return (point, 2000) }
        guard (1...100_000).contains(radius) else {
            issues.append(.init(field: "radius", code: "out_of_range", message: "Use 1 to 100000 metres."))
            return (point, 2000)
        }
        return (point, Double(radius))
    }
}

extension Paging {
    /// A feed cursor: the next page's number and the last item's keyset position.
    static func feedCursor(page: Int, _ number: Int64, _ id: String) -> String { encode("f:\(page):\(number):\(id)") }

    /// The page number (1 without a cursor) and keyset position a feed cursor stands for.
    static func feedPosition(_ cursor: String?) throws -> (page: Int, position: (Int64, String)?) {
        guard let cursor else { return (1, nil) }
        let parts = try decode(cursor).split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "f", let page = Int(parts[1]), page >= 2, page < 1_000_000,
            let number = Int64(parts[2])
        else { throw badCursor }
        return (page, (number, String(parts[3])))
    }
}

extension Paging {
    /// The `q` of a search: trimmed, not empty, plain text; else a field error saying `hint`.
    static func searchText(_ q: String, hint: String) throws -> String {
        let query = q.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !query.isEmpty, TextRules.isClean(query) else {
            throw APIError.validation([.init(field: "q", code: "required", message: hint)])
        }
        return query
    }
}
