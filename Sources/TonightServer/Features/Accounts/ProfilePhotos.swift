import Foundation
import OpenAPIRuntime
import Synchronization
import TonightCore

/// Profile photos: a JPEG, PNG or HEIC (with libheif installed, see ``MediaTools``) of at most
/// ``maxBytes`` is converted at once (in the request)
/// into a square JPEG of at most ``side`` pixels with every bit of metadata left out, stored as
/// `avatars/<user id>/<random id>.jpg`, and served by ``MediaRoutes`` from this server alone, so
/// no other host sees who looks at a member's photo.
///
/// Photos are not signed even when media links are: a photo is as public as the profile it
/// belongs to, and its random name cannot be guessed. A new photo replaces the stored one; an
/// account's photos go with the account.
///
/// Conversions share ``MediaProcessor``'s limits with a short deadline, count towards the
/// per-member upload limit, and at most `concurrency` run at once: a photo beyond that is
/// answered 503 `media_busy` at once rather than queued (a queue of uploads would hold their
/// bodies and connections).
struct ProfilePhotos: Sendable {
    /// The largest photo accepted, in bytes.
    static let maxBytes = 10 << 20
    /// The side of the stored square, in pixels.
    static let side = 512
    /// The blob-key folder of every photo.
    static let folder = "avatars/"

    let users: UserRepository
    let blobs: any BlobStore
    let processor: MediaProcessor
    let uploadDirectory: String
    let limiter: RateLimiter
    let uploadsPerHour: Int
    let running: Slots

    init(
        users: UserRepository, blobs: any BlobStore, tools: MediaTools?, uploadDirectory: String,
        limiter: RateLimiter, uploadsPerHour: Int, concurrency: Int
    ) {
        self.users = users
        self.blobs = blobs
        self.processor = MediaProcessor(
            tools: tools, limits: MediaLimits(maxBytes: Int64(Self.maxBytes), timeout: .seconds(20)))
        self.uploadDirectory = uploadDirectory
        self.limiter = limiter
        self.uploadsPerHour = uploadsPerHour
        self.running = Slots(capacity: max(1, concurrency))
    }

    /// Converts and stores the photo in `body` as `userID`'s, and answers the updated account.
    func set(_ userID: String, from body: HTTPBody) async throws -> UserRecord {
        try await limiter.check("upload:\(userID)", capacity: uploadsPerHour, period: 3600)
        guard running.take() else {
            throw APIError(
                status: 503, code: .mediaBusy,
                detail: "Other photos are being converted right now; nothing was stored. Try again shortly.",
                retryAfter: 2)
        }
        defer { running.give() }
        let upload = try UploadFile(
            directory: uploadDirectory, limit: Self.maxBytes, acceptsHEIC: processor.decodesHEIC)
        defer { upload.discard() }
        let container = try await upload.write(body, field: "photo")
        guard [.jpeg, .png, .heic].contains(container) else {
            throw APIError(
                status: 415, code: .unsupportedMedia,
                detail: processor.decodesHEIC ? "Upload a JPEG, PNG or HEIC photo." : "Upload a JPEG or PNG photo.")
        }
        let converted = upload.path + ".jpg"
        defer { try? FileManager.default.removeItem(atPath: converted) }
        let stored: (file: String, type: String, ext: String)
        do {
            stored =
                try await processor.profilePhoto(
                    input: URL(fileURLWithPath: upload.path), container: container, side: Self.side,
                    output: URL(fileURLWithPath: converted))
                ? (converted, "image/jpeg", "jpg") : (upload.path, container.contentType, container.fileExtension)
        } catch let rejection as MediaRejection {
            throw APIError.validation([.init(field: "photo", code: "invalid_image", message: rejection.description)])
        }
        let key = Self.folder + userID + "/" + Identifier.make() + "." + stored.ext
        let old = try await blobs.list(prefix: Self.folder + userID + "/")
        try await blobs.put(key: key, from: stored.file, contentType: stored.type, storageClass: nil)
        guard var user = try await users.find(id: userID) else {
            try? await blobs.delete(key: key)
            throw APIError.accountGone
        }
        user.avatarUrl = MediaURLs.prefix + key
        user.updatedAt = Clock.millis()
        try await users.updateProfile(user)
        for stale in old { try? await blobs.delete(key: stale) }
        return user
    }

    /// Removes `userID`'s photo and answers the updated account.
    func remove(_ userID: String) async throws -> UserRecord {
        guard var user = try await users.find(id: userID) else { throw APIError.accountGone }
        if user.avatarUrl != nil {
            user.avatarUrl = nil
            user.updatedAt = Clock.millis()
            try await users.updateProfile(user)
        }
        await deleteFiles(of: userID)
        return user
    }

    /// Deletes every stored photo of `userID` (a failure leaves files for the orphan sweep).
    func deleteFiles(of userID: String) async {
        for key in (try? await blobs.list(prefix: Self.folder + userID + "/")) ?? [] {
            try? await blobs.delete(key: key)
        }
    }

    /// Whether `link` is `userID`'s own photo as this server stored it (a signed form included).
    static func isOwn(_ link: String, userID: String) -> Bool {
        let path = link.prefix { $0 != "?" }
        let own = MediaURLs.prefix + folder + userID + "/"
        return path.hasPrefix(own) && BlobKey.isValid(String(path.dropFirst(MediaURLs.prefix.count)))
            && !path.dropFirst(own.count).contains("/")
    }

    /// A stored photo link as clients get it: a photo of ours, or nil for anything else (a link to
    /// another host, from before photos were served by this server alone, is never handed out).
    static func published(_ stored: String?) -> String? {
        guard let stored, stored.hasPrefix(MediaURLs.prefix + folder) else { return nil }
        return stored
    }
}

/// A count of things running at once, at most `capacity`; taking a slot never waits.
final class Slots: Sendable {
    private let used = Mutex(0)
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Takes a slot if one is free.
    func take() -> Bool {
        used.withLock { used in
            guard used < capacity else { return false }
            used += 1
            return true
        }
    }

    /// Gives a taken slot back.
    func give() { used.withLock { $0 -= 1 } }
}
