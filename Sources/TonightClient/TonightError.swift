import Foundation

/// Errors from the Tonight SDK. Server errors arrive as ``problem(_:)`` with the server's stable
/// code and per-field messages, ready to show next to form fields.
public enum TonightError: Error, Sendable, Equatable {
    /// The server answered with a problem document (RFC 9457).
    case problem(Problem)
    /// The call needs a signed-in user (no tokens are stored).
    case notSignedIn
    /// The server answered something the SDK does not understand.
    case unexpectedResponse(status: Int)

    /// A decoded problem+json body.
    public struct Problem: Sendable, Equatable, Codable {
        /// HTTP status.
        public var status: Int
        /// Stable machine-readable code, e.g. `validation_failed`, `invalid_credentials`, `taken`.
        public var code: String
        /// A sentence for people.
        public var detail: String?
        /// Field errors for validation failures.
        public var errors: [FieldError]?
        /// Server request id, for support.
        public var requestId: String?

        /// One field's problem.
        public struct FieldError: Sendable, Equatable, Codable {
            public var field: String
            public var code: String
            public var message: String
        }

        /// Messages by field name.
        public var fieldMessages: [String: String] {
            Dictionary((errors ?? []).map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// The server's code, if this is a problem.
    public var code: String? {
        if case .problem(let problem) = self { return problem.code }
        return nil
    }

    /// The server's code as one of the documented ``ErrorCode``s, to switch on; `nil` when this is
    /// not a problem, or for a code newer than this SDK (then go by ``status``).
    public var errorCode: ErrorCode? { code.flatMap(ErrorCode.init(rawValue:)) }

    /// The HTTP status, if the server answered.
    public var status: Int? {
        switch self {
        case .problem(let problem): problem.status
        case .unexpectedResponse(let status): status
        case .notSignedIn: nil
        }
    }
}
