import Foundation
import OpenAPIRuntime
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`): the tus 1.0
/// protocol on `/v1/uploads`. ``TusMiddleware`` checks `Tus-Resumable` and answers it on every
/// response; ``ResumableUploads`` does the work.
struct UploadsHandlers: Sendable {
    let uploads: ResumableUploads

    func describeUploads(_ input: Operations.DescribeUploads.Input) async throws -> Operations.DescribeUploads.Output {
        .noContent(
            .init(
                headers: .init(
                    tusResumable: Tus.version, tusVersion: Tus.version, tusExtension: Tus.extensions,
                    tusMaxSize: Int64(uploads.maxBytes), tusChecksumAlgorithm: Tus.checksumAlgorithms)))
    }

    func createUpload(_ input: Operations.CreateUpload.Input) async throws -> Operations.CreateUpload.Output {
        let caller = try RequestInfo.requireMember()
        let upload = try await uploads.create(
            userID: caller.userID, length: input.headers.uploadLength, metadata: input.headers.uploadMetadata)
        return .created(
            .init(
                headers: .init(
                    tusResumable: Tus.version, location: "/v1/uploads/\(upload.id)",
                    uploadExpires: Self.date(upload.expiresAt))))
    }

    func getUploadOffset(_ input: Operations.GetUploadOffset.Input) async throws -> Operations.GetUploadOffset.Output {
        let caller = try RequestInfo.requireMember()
        let (upload, offset) = try await uploads.state(id: input.path.uploadId, userID: caller.userID)
        return .ok(
            .init(
                headers: .init(
                    tusResumable: Tus.version, uploadOffset: offset, uploadLength: upload.length,
                    uploadExpires: upload.postID == nil ? Self.date(upload.expiresAt) : nil, cacheControl: "no-store",
                    tonightPostId: upload.postID)))
    }

    func appendUpload(_ input: Operations.AppendUpload.Input) async throws -> Operations.AppendUpload.Output {
        let caller = try RequestInfo.requireMember()
        guard case .applicationOffsetOctetStream(let body) = input.body else {
            throw APIError(
                status: .unsupportedMediaType, code: .unsupportedMediaType,
                detail: "Send the bytes as application/offset+octet-stream.")
        }
        let result = try await uploads.append(
            id: input.path.uploadId, userID: caller.userID, offset: input.headers.uploadOffset,
            checksum: input.headers.uploadChecksum, body: body)
        return .noContent(
            .init(
                headers: .init(
                    tusResumable: Tus.version, uploadOffset: result.offset,
                    uploadExpires: result.postID == nil ? Self.date(result.expiresAt) : nil,
                    tonightPostId: result.postID)))
    }

    func deleteUpload(_ input: Operations.DeleteUpload.Input) async throws -> Operations.DeleteUpload.Output {
        let caller = try RequestInfo.requireMember()
        try await uploads.terminate(id: input.path.uploadId, userID: caller.userID)
        return .noContent(.init(headers: .init(tusResumable: Tus.version)))
    }

    /// `Upload-Expires`: an HTTP date.
    private static func date(_ millis: Int64) -> String {
        HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(millis) / 1000))
    }
}
