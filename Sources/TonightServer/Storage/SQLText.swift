/// Text helpers for SQL both databases share.
enum SQLText {
    /// `text` with LIKE's wildcards escaped by a backslash (use with `ESCAPE '\'`).
    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}
