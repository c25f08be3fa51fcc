import Foundation

/// Validation and normalisation of what people write on posts: captions, tags, songs, comments.
public enum PostRules {
    /// Longest caption, in characters.
    public static let captionLimit = 500
    /// Longest comment, in characters.
    public static let commentLimit = 1000
    /// Most tags on one post.
    public static let tagLimit = 20
    /// Longest tag, in characters.
    public static let tagLength = 50

    /// A caption: trimmed, at most ``captionLimit`` characters, no control characters but newlines.
    public static func caption(_ text: String?, field: String = "caption") -> Result<String, FieldIssue> {
        let trimmed = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= captionLimit else {
            return .failure(
                .init(field: field, code: "too_long", message: "Use at most \(captionLimit) characters."))
        }
        guard TextRules.isClean(trimmed, multiline: true) else {
            return .failure(.init(field: field, code: "invalid_characters", message: "Remove control characters."))
        }
        return .success(trimmed)
    }

    /// A comment: trimmed, 1–``commentLimit`` characters.
    public static func comment(_ text: String) -> Result<String, FieldIssue> {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            return .failure(.init(field: "text", code: "required", message: "Write something."))
        }
        guard trimmed.count <= commentLimit else {
            return .failure(.init(field: "text", code: "too_long", message: "Use at most \(commentLimit) characters."))
        }
        guard TextRules.isClean(trimmed, multiline: true) else {
            return .failure(.init(field: "text", code: "invalid_characters", message: "Remove control characters."))
        }
        return .success(trimmed)
    }

    /// A tag as stored and looked up: without `#`, lowercased, diacritics kept (so `#café` and
    /// `#cafe` stay different words); letters, digits and `_` only. Nil when nothing is left.
    public static func normalizedTag(_ raw: some StringProtocol) -> String? {
        var text = Substring(raw)
        while text.first == "#" { text = text.dropFirst() }
        let tag = String(text).lowercased()
        guard !tag.isEmpty, tag.count <= tagLength, tag.unicodeScalars.allSatisfy(isTagScalar) else { return nil }
        return tag
    }

    /// The `#hashtags` in a caption, normalised, in order of first appearance.
    public static func hashtags(in caption: String) -> [String] {
        var tags: [String] = []
        var current: String?
        func flush() {
            if let word = current, let tag = normalizedTag(word), !tags.contains(tag) { tags.append(tag) }
            current = nil
        }
        for scalar in caption.unicodeScalars {
            if scalar == "#" {
                flush()
                current = ""
            } else if current != nil, isTagScalar(scalar) {
                current?.unicodeScalars.append(scalar)
            } else {
                flush()
            }
        }
        flush()
        return tags
    }

    /// Hashtags from the caption plus explicit tags (separated by commas, spaces or `#`),
    /// deduplicated, at most ``tagLimit``.
    public static func tags(caption: String, explicit: String?) -> Result<[String], FieldIssue> {
        var tags = hashtags(in: caption)
        for word in (explicit ?? "").split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" }) {
            for part in word.split(separator: "#") where !part.isEmpty {
                guard let tag = normalizedTag(part) else {
                    return .failure(
                        .init(
                            field: "tags", code: "invalid",
                            message: "Tags use letters, digits and _ (up to \(tagLength) characters): \(part)"))
                }
                if !tags.contains(tag) { tags.append(tag) }
            }
        }
        guard tags.count <= tagLimit else {
            return .failure(.init(field: "tags", code: "too_many", message: "Use at most \(tagLimit) tags."))
        }
        return .success(tags)
    }

    /// Whether `uri` is a Spotify track URI: `spotify:track:` and 22 base-62 characters.
    public static func isSpotifyTrackURI(_ uri: String) -> Bool {
        let prefix = "spotify:track:"
        guard uri.hasPrefix(prefix) else { return false }
        let id = uri.utf8.dropFirst(prefix.utf8.count)
        return id.count == 22 && id.allSatisfy { Digits.isBase62($0) }
    }

    /// The open.spotify.com page of a track URI (nil when it is not one).
    public static func spotifyURL(_ uri: String) -> String? {
        guard isSpotifyTrackURI(uri) else { return nil }
        return "https://open.spotify.com/track/" + uri.dropFirst("spotify:track:".count)
    }

    private static func isTagScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic || scalar.properties.numericType == .decimal
    }
}
