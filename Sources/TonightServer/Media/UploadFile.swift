import Foundation
import NIOPosix
import OpenAPIRuntime
import TonightCore

/// An upload being written to a temporary file: counts bytes against the limit and identifies the
/// container from the first bytes, so a file that is too large or not a supported format is
/// refused as soon as that is known, before the rest arrives.
///
/// The file lives under `<data dir>/tmp/uploads` and is removed by ``discard()`` (the caller does
/// this on every path; a crash leaves it for the start-up sweep of that folder).
final class UploadFile: @unchecked Sendable {
    /// What went wrong with the bytes.
    enum Problem: Error, Equatable {
        case tooLarge(limit: Int)
        case unsupported
        /// HEIC/HEIF: recognised, but this server's ffmpeg cannot decode it, and bytes that are
        /// not decoded (and stripped of their metadata) are never served.
        case heic
        case empty
    }

    let path: String
    let limit: Int
    private(set) var size = 0
    private(set) var container: MediaContainer?
    private var head: [UInt8] = []
    private let handle: FileHandle
    private var closed = false
    /// Bytes sniffed before deciding (the sniffer wants up to 64).
    private static let sniffLength = 64

    /// Whether HEIC is taken (profile photos, when libheif is installed).
    let acceptsHEIC: Bool

    /// Creates an empty temporary file in `directory`.
    init(directory: String, limit: Int, acceptsHEIC: Bool = false) throws {
        self.acceptsHEIC = acceptsHEIC
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/" + Identifier.make() + ".part"
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw ConfigurationError("cannot create \(path)")
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        self.limit = limit
    }

    /// Appends a chunk; throws ``Problem`` once the upload is known to be unacceptable.
    func append(_ chunk: ArraySlice<UInt8>) async throws {
        size += chunk.count
        guard size <= limit else { throw Problem.tooLarge(limit: limit) }
        if container == nil {
            head.append(contentsOf: chunk.prefix(Self.sniffLength - head.count))
            if head.count >= Self.sniffLength {
                container = try Self.accepted(ContainerSniffer.sniff(head), heic: acceptsHEIC)
            }
        }
        let data = Data(chunk)
        let handle = self.handle
        try await NIOThreadPool.singleton.runIfActive { try handle.write(contentsOf: data) }
    }

    /// Finishes writing; returns the container (a file shorter than 64 bytes is sniffed as is).
    func finish() throws -> MediaContainer {
        closed = true
        try handle.close()
        guard size > 0 else { throw Problem.empty }
        if let container { return container }
        let sniffed = try Self.accepted(ContainerSniffer.sniff(head), heic: acceptsHEIC)
        container = sniffed
        return sniffed
    }

    /// The container if uploads of it are accepted (HEIC only with `heic`).
    static func accepted(_ container: MediaContainer?, heic: Bool = false) throws -> MediaContainer {
        guard let container else { throw Problem.unsupported }
        guard container != .heic || heic else { throw Problem.heic }
        return container
    }

    /// Writes all of `body` and finishes the file. Throws the answer for the client when the
    /// bytes are refused (413, 415, or 422 about `field`) or the body cannot be read (400
    /// `invalid_upload`); a failure to write the file is ours and rethrown as it is.
    func write(_ body: HTTPBody, field: String) async throws -> MediaContainer {
        struct WriteFailure: Error { var error: any Error }
        do {
            for try await chunk in body {
                do { try await append(chunk) } catch let problem as Problem { throw problem } catch {
                    throw WriteFailure(error: error)
                }
            }
            return try finish()
        } catch let problem as Problem {
            throw problem.apiError(field: field)
        } catch let failure as WriteFailure {
            throw failure.error
        } catch {
            throw APIError.badRequest("The upload could not be read.", code: .invalidUpload)
        }
    }

    /// Removes the file.
    func discard() {
        if !closed { try? handle.close() }
        closed = true
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension UploadFile.Problem {
    /// The answer for an upload refused for this problem (413, 415, or 422 about `field`).
    func apiError(field: String = "media") -> APIError {
        switch self {
        case .tooLarge(let limit):
            APIError(
                status: 413, code: .mediaTooLarge,
                detail: "The file is larger than \(limit / 1_048_576) MB.")
        case .unsupported:
            APIError(
                status: 415, code: .unsupportedMedia,
                detail: "This is not a supported file. Upload an MP4, MOV or WebM video, or a JPEG or PNG image.")
        case .heic:
            APIError(
                status: 415, code: .unsupportedMedia,
                detail: "HEIC photos are not accepted. Upload a JPEG or PNG (on an iPhone, share the photo, "
                    + "or set Camera › Formats to Most Compatible).")
        case .empty:
            APIError.validation([.init(field: field, code: "empty", message: "The file is empty.")])
        }
    }
}

extension MediaContainer {
    /// The MIME type of files in this container.
    var contentType: String {
        switch self {
        case .mp4: "video/mp4"
        case .mov: "video/quicktime"
        case .webm: "video/webm"
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .heic: "image/heic"
        }
    }

    /// The file extension blobs of this container get.
    var fileExtension: String {
        switch self {
        case .mp4: "mp4"
        case .mov: "mov"
        case .webm: "webm"
        case .jpeg: "jpg"
        case .png: "png"
        case .heic: "heic"
        }
    }
}
