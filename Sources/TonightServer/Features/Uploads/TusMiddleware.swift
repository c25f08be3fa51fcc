import Foundation
import HTTPTypes
import Hummingbird
import TonightCore

/// What tus 1.0 asks of every exchange on `/v1/uploads`: a request (other than `OPTIONS`) must
/// say `Tus-Resumable: 1.0.0` (412 with `Tus-Version` otherwise, before anything else is read), and
/// every answer, refusals included, says `Tus-Resumable` too.
///
/// The generated server writes header values in OpenAPI's `simple` style, percent-encoding commas,
/// spaces and slashes (`Location: %2Fv1%2Fuploads…`); tus clients read these headers as plain text,
/// so the few that carry such characters are decoded here (none of their values has a `%` of its own).
struct TusMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    static let prefix = "/v1/uploads"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let path = request.uri.path
        guard path == Self.prefix || path.hasPrefix(Self.prefix + "/") else { return try await next(request, context) }
        var response: Response
        if request.method != .options, request.headers[Self.resumable] != Tus.version {
            response = render(
                APIError(
                    status: .preconditionFailed, code: .unsupportedVersion,
                    detail: "Send Tus-Resumable: \(Tus.version); this server speaks tus \(Tus.version)."),
                context: context)
            response.headers[Self.versionField] = Tus.version
        } else {
            do { response = try await next(request, context) } catch { response = render(error, context: context) }
        }
        response.headers[Self.resumable] = Tus.version
        for name in Self.plainText {
            if let value = response.headers[name], value.contains("%"), let plain = value.removingPercentEncoding {
                response.headers[name] = plain
            }
        }
        return response
    }

    private func render(_ error: any Error, context: Context) -> Response {
        ProblemRenderer.response(
            for: error, requestID: RequestInfo.current?.requestID ?? Identifier.make(), logger: context.logger)
    }

    private static let resumable = HTTPField.Name("Tus-Resumable")!
    private static let plainText: [HTTPField.Name] = [
        .location, HTTPField.Name("Upload-Expires")!, HTTPField.Name("Tus-Extension")!,
        HTTPField.Name("Tus-Checksum-Algorithm")!,
    ]
    private static let versionField = HTTPField.Name("Tus-Version")!
}
