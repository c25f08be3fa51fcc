import Foundation

// The spec's limits on values (lengths, ranges, item counts), as Swift expressions of the server's
// `SpecLimit`, so the server refuses what the contract does not allow with field errors.

/// Resolves `#/components/<kind>/<name>` references.
struct Components {
    let spec: [String: Any]

    func resolve(_ object: [String: Any]) -> [String: Any] {
        guard let ref = object["$ref"] as? String, ref.hasPrefix("#/components/") else { return object }
        let parts = ref.dropFirst("#/components/".count).split(separator: "/").map(String.init)
        guard parts.count == 2, let kind = (spec["components"] as? [String: Any])?[parts[0]] as? [String: Any],
            let target = kind[parts[1]] as? [String: Any]
        else { fail("cannot resolve \(ref)") }
        return resolve(target)
    }
}

/// A literal for an optional number (`nil`, `100`, `-1.5`).
func literal(_ value: Any?) -> String {
    switch value {
    case let number as Int: return String(number)
    case let number as Double: return String(number)
    default: return "nil"
    }
}

/// The limits of `schema` as a `SpecLimit` expression, or nil when it sets none. `typed` also
/// describes numbers without bounds (a query parameter's text must still be a number).
func limitExpression(_ raw: [String: Any], components: Components, typed: Bool = false, depth: Int = 0) -> String? {
    guard depth < 12 else { return nil }
    let schema = components.resolve(raw)
    switch schema["type"] as? String {
    case "string":
        let minLength = schema["minLength"], maxLength = schema["maxLength"]
        guard minLength != nil || maxLength != nil else { return nil }
        return ".string(minLength: \(literal(minLength)), maxLength: \(literal(maxLength)))"
    case "integer", "number":
        let minimum = schema["minimum"], maximum = schema["maximum"]
        guard typed || minimum != nil || maximum != nil else { return nil }
        let integer = schema["type"] as? String == "integer"
        return ".number(minimum: \(literal(minimum)), maximum: \(literal(maximum)), integer: \(integer))"
    case "array":
        let items = (schema["items"] as? [String: Any]).flatMap {
            limitExpression($0, components: components, depth: depth + 1)
        }
        let minItems = schema["minItems"], maxItems = schema["maxItems"]
        guard items != nil || minItems != nil || maxItems != nil else { return nil }
        return ".array(minItems: \(literal(minItems)), maxItems: \(literal(maxItems)), items: \(items ?? "nil"))"
    case "object", nil:
        guard let properties = schema["properties"] as? [String: Any] else { return nil }
        let fields = properties.keys.sorted().compactMap { name -> String? in
            guard let property = properties[name] as? [String: Any],
                let limit = limitExpression(property, components: components, depth: depth + 1)
            else { return nil }
            return "\"\(name)\": \(limit)"
        }
        return fields.isEmpty ? nil : ".object([\(fields.joined(separator: ", "))])"
    default:
        return nil
    }
}

/// `SpecLimits.swift`: each operation's query-parameter and JSON-body limits.
func limitsFile(operations: [Operation], paths: [String: Any], components: Components, header: String) -> String {
    var queries: [String] = []
    var bodies: [String] = []
    for op in operations.sorted(by: { $0.id < $1.id }) {
        let item = paths[op.path] as? [String: Any] ?? [:]
        let operation = item[op.method] as? [String: Any] ?? [:]
        let parameters = ((item["parameters"] as? [Any] ?? []) + (operation["parameters"] as? [Any] ?? []))
            .compactMap { ($0 as? [String: Any]).map(components.resolve) }
        let limits = parameters.filter { $0["in"] as? String == "query" }.compactMap { parameter -> String? in
            guard let name = parameter["name"] as? String, let schema = parameter["schema"] as? [String: Any],
                let limit = limitExpression(schema, components: components, typed: true)
            else { return nil }
            return "\"\(name)\": \(limit)"
        }
        if !limits.isEmpty { queries.append("        \"\(op.id)\": [\(limits.joined(separator: ", "))],") }
        if op.jsonBody != nil, let body = operation["requestBody"] as? [String: Any],
            let schema = ((body["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"]
                as? [String: Any],
            let limit = limitExpression(schema, components: components)
        {
            bodies.append("        \"\(op.id)\": \(limit),")
        }
    }
    return header + """

        /// The limits openapi.yaml sets on each operation's query parameters and JSON body.
        extension SpecLimits {
            static let query: [String: [String: SpecLimit]] = [
        \(queries.joined(separator: "\n"))
            ]

            static let body: [String: SpecLimit] = [
        \(bodies.joined(separator: "\n"))
            ]
        }

        """
}
