import Foundation

/// Just enough XML for S3's flat answers: element text by name, entities decoded.
enum XMLScan {
    /// Inner texts of every `<name>…</name>` (also `<name attr="…">`), in order.
    static func elements(_ name: String, in text: String) -> [String] {
        var results: [String] = []
        var rest = text[...]
        let close = "</\(name)>"
        while let open = rest.range(of: "<\(name)") {
            let afterName = rest[open.upperBound...]
            guard let first = afterName.first, first == ">" || first == " " || first == "/" else {
                rest = afterName
                continue
            }
            guard let tagEnd = afterName.firstIndex(of: ">") else { break }
            if tagEnd > afterName.startIndex, afterName[afterName.index(before: tagEnd)] == "/" {  // <name/>
                results.append("")
                rest = afterName[afterName.index(after: tagEnd)...]
                continue
            }
            let contentStart = afterName.index(after: tagEnd)
            guard let end = afterName[contentStart...].range(of: close) else { break }
            results.append(String(afterName[contentStart..<end.lowerBound]))
            rest = afterName[end.upperBound...]
        }
        return results
    }

    static func firstValue(of name: String, in text: String) -> String? {
        elements(name, in: text).first.map(decodeEntities)
    }

    static func decodeEntities(_ s: String) -> String {
        guard s.contains("&") else { return s }
        var out = ""
        var i = s.startIndex
        while i < s.endIndex {
            if s[i] == "&", let semi = s[i...].firstIndex(of: ";"), s.distance(from: i, to: semi) <= 10 {
                let entity = s[s.index(after: i)..<semi]
                var replacement: String? = nil
                switch entity {
                case "amp": replacement = "&"
                case "lt": replacement = "<"
                case "gt": replacement = ">"
                case "quot": replacement = "\""
                case "apos": replacement = "'"
                default:
                    if entity.hasPrefix("#x") || entity.hasPrefix("#X"), let v = UInt32(entity.dropFirst(2), radix: 16),
                        let u = Unicode.Scalar(v)
                    {
                        replacement = String(Character(u))
                    } else if entity.hasPrefix("#"), let v = UInt32(entity.dropFirst()), let u = Unicode.Scalar(v) {
                        replacement = String(Character(u))
                    }
                }
                if let replacement {
                    out += replacement
                    i = s.index(after: semi)
                    continue
                }
            }
            out.append(s[i])
            i = s.index(after: i)
        }
        return out
    }
}
