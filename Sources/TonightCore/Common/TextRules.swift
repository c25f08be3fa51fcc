/// Rules for free text people type (names, bios): no control characters, which some databases
/// cannot store (PostgreSQL refuses NUL) and no screen shows sensibly.
public enum TextRules {
    /// Whether `text` has no control characters (newlines and tabs allowed if `multiline`).
    public static func isClean(_ text: String, multiline: Bool = false) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            if multiline && (scalar == "\n" || scalar == "\t" || scalar == "\r") { return true }
            return !scalar.properties.generalCategory.isControlLike
        }
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isControlLike: Bool {
        switch self {
        case .control, .surrogate, .unassigned, .privateUse: true
        default: false
        }
    }
}
