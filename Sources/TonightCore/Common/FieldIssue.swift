/// One problem with one field of a request, as reported in problem+json `errors`.
public struct FieldIssue: Error, Sendable, Hashable, Codable {
    /// The field's name or path, e.g. `email` or `preferences.radiusMeters`.
    public var field: String
    /// A stable machine-readable code, e.g. `too_short`.
    public var code: String
    /// A sentence for people.
    public var message: String

    /// Creates a field issue.
    public init(field: String, code: String, message: String) {
        self.field = field
        self.code = code
        self.message = message
    }
}
