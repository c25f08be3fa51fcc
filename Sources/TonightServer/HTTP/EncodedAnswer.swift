import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// A `200` body a handler has already encoded itself, for the few hot operations where encoding the
/// typed answer cost more than everything else (nearby places: a fifth of a page's CPU). The
/// handler still validates its input and returns its typed output as usual (the contract is
/// unchanged); when it also puts the same answer as JSON bytes here, ``EncodedAnswerMiddleware``
/// sends those bytes instead of encoding the typed output. A handler that puts nothing here is
/// answered as always.
final class EncodedAnswer: Sendable {
    /// The answer being made, inside ``EncodedAnswerMiddleware`` (`nil` elsewhere: tests and
    /// callers that are not a request).
    @TaskLocal static var current: EncodedAnswer?

    private let body = Mutex<[UInt8]?>(nil)

    /// Sends `bytes` (the whole JSON body) instead of the typed output.
    func set(_ bytes: [UInt8]) { body.withLock { $0 = bytes } }

    var bytes: [UInt8]? { body.withLock { $0 } }

    /// How the API encodes JSON (shared with the generated handlers' configuration, so that bytes
    /// encoded here are what the typed path would have written).
    static let configuration = Configuration(
        dateTranscoder: RFC3339Transcoder(), jsonEncodingOptions: [.withoutEscapingSlashes])

    /// A JSON encoder configured as the API's (``configuration``).
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try RFC3339Transcoder().encode(date))
        }
        return encoder
    }
}

/// Sends the bytes a handler put in ``EncodedAnswer/current`` for the operations in ``operations``.
struct EncodedAnswerMiddleware: ServerMiddleware {
    /// The operations whose handlers may encode their own answer.
    static let operations: Set<String> = ["listPlaces"]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard Self.operations.contains(operationID) else { return try await next(request, body, metadata) }
        let answer = EncodedAnswer()
        let (response, typed) = try await EncodedAnswer.$current.withValue(answer) {
            try await next(request, body, metadata)
        }
        guard response.status == .ok, let bytes = answer.bytes else { return (response, typed) }
        var sent = response
        // The typed body's length was set for the typed body.
        sent.headerFields[.contentLength] = String(bytes.count)
        return (sent, HTTPBody(bytes))
    }
}
