/// Where a post is in media processing.
public enum PostStatus: String, Sendable, Hashable, CaseIterable, Codable {
    /// Uploaded; the media job has not finished.
    case processing
    /// Served in feeds.
    case ready
    /// Processing refused or failed the file (the post keeps its reason).
    case failed
}

/// What moderation decided about a post.
public enum ModerationState: String, Sendable, Hashable, CaseIterable, Codable {
    /// Shown as usual.
    case visible
    /// Hidden by flags until a moderator restores or removes it.
    case hidden
    /// Removed by a moderator; answered as not found.
    case removed
}

/// The kind of a post's media.
public enum MediaKind: String, Sendable, Hashable, CaseIterable, Codable {
    case video
    case image
}
