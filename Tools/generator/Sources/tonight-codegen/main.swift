// Generates the server's glue from openapi.yaml, so nothing hand-copies the contract:
//
// - `APIHandlers+Routes.swift`: every operation of the spec forwards to the feature handler struct
//   that implements it: a `func <operationId>(_ input: Operations.<OperationId>.Input)` declared in
//   a `struct XHandlers` (or an extension of one) under Sources/TonightServer/Features, reached as
//   `APIHandlers.x`. A new route is then a spec entry plus that one function. An operation with no
//   handler, or with two, stops the generator with its name.
// - `RequestBodies.swift`: for each operation whose request body is JSON only, a non-throwing
//   `input.body.json` (the generated enum has that one case).
// - `CacheablePages.swift`: the path templates of the GET operations marked
//   `x-tonight-page-cache: true`, the only ones the anonymous page cache may hold.
// - `SpecLimits.swift`: the limits (lengths, ranges, item counts) the spec sets on each
//   operation's query parameters and JSON body, which the server enforces (HTTP/SpecLimit.swift).
//
// Usage: tonight-codegen <openapi.yaml> <features directory> <output directory>
import Foundation
import Yams

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    FileHandle.standardError.write(
        Data("usage: tonight-codegen <openapi.yaml> <features directory> <output directory>\n".utf8))
    exit(2)
}

/// Stops with a message for the person running scripts/generate.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tonight-codegen: \(message)\n".utf8))
    exit(1)
}
let specText = try String(contentsOfFile: arguments[1], encoding: .utf8)
guard let spec = try Yams.load(yaml: specText) as? [String: Any], let paths = spec["paths"] as? [String: Any] else {
    fail("no paths in \(arguments[1])")
}

struct Operation {
    let id: String
    let method: String
    let path: String
    let jsonBody: String?
    let pageCache: Bool

    /// The generated type name (`namingStrategy: idiomatic` capitalises the operation id).
    var typeName: String { id.prefix(1).uppercased() + id.dropFirst() }
}

/// A handler struct's property on `APIHandlers`: `EventsHandlers` → `events`.
func propertyName(_ handlers: String) -> String {
    let name = handlers.dropLast("Handlers".count)
    return name.prefix(1).lowercased() + name.dropFirst()
}

/// The operations implemented under `directory`, by operation id: the handler struct of each.
func handlerStructs(under directory: String) -> [String: [String]] {
    let declaration = try! NSRegularExpression(pattern: #"^(?:struct|extension) (\w+Handlers)\b"#)
    let function = try! NSRegularExpression(
        pattern: #"^    (?:@\w+ )*func (\w+)\(_ \w+: Operations\.(\w+)\.Input\)"#)
    var found: [String: [String]] = [:]
    guard let files = FileManager.default.enumerator(atPath: directory) else { fail("no folder \(directory)") }
    for case let file as String in files where file.hasSuffix(".swift") {
        guard let text = try? String(contentsOfFile: directory + "/" + file, encoding: .utf8) else { continue }
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let range = NSRange(line.startIndex..., in: line)
            if let match = declaration.firstMatch(in: line, range: range) {
                current = String(line[Range(match.range(at: 1), in: line)!])
            } else if line.hasPrefix("}") {
                current = nil
            } else if let current, let match = function.firstMatch(in: line, range: range) {
                found[String(line[Range(match.range(at: 1), in: line)!]), default: []].append(current)
            }
        }
    }
    return found
}

var operations: [Operation] = []
let methods = ["get", "put", "post", "delete", "patch", "head", "options"]
for path in paths.keys.sorted() {
    guard let item = paths[path] as? [String: Any] else { continue }
    for method in methods {
        guard let op = item[method] as? [String: Any], let id = op["operationId"] as? String else { continue }
        var jsonBody: String?
        if let body = op["requestBody"] as? [String: Any], let content = body["content"] as? [String: Any],
            content.keys.sorted() == ["application/json"],
            let schema = (content["application/json"] as? [String: Any])?["schema"] as? [String: Any]
        {
            if let ref = schema["$ref"] as? String, ref.hasPrefix("#/components/schemas/") {
                jsonBody = "Components.Schemas." + ref.dropFirst("#/components/schemas/".count)
            } else {
                jsonBody = "Operations.\(id.prefix(1).uppercased() + id.dropFirst()).Input.Body.JsonPayload"
            }
        }
        let pageCache = op["x-tonight-page-cache"] as? Bool ?? false
        if pageCache && method != "get" {
            fail("\(id): only GET pages can be cached")
        }
        operations.append(
            Operation(id: id, method: method, path: path, jsonBody: jsonBody, pageCache: pageCache))
    }
}

let header = """
    // Generated by scripts/generate from Sources/TonightAPI/openapi.yaml (Tools/generator/tonight-codegen).
    // Do not edit: change the spec and run scripts/generate.

    """

let handlers = handlerStructs(under: arguments[2])
let known = Set(operations.map(\.id))
for (id, structs) in handlers.sorted(by: { $0.key < $1.key }) {
    if !known.contains(id) { fail("\(structs[0]).\(id) handles no operation of the spec") }
    if structs.count > 1 { fail("\(id) is handled twice: \(structs.joined(separator: ", "))") }
}
var routes = header + """
    import TonightAPI

    /// Every operation forwards to the feature handler struct that implements it.
    extension APIHandlers: APIProtocol {

    """
let routed = operations.map { op -> (handlers: String, op: Operation) in
    guard let owner = handlers[op.id]?.first else {
        fail("no handler for \(op.id): add func \(op.id)(_ input: Operations.\(op.typeName).Input) to a Features handler")
    }
    return (owner, op)
}
for (index, route) in routed.sorted(by: { ($0.handlers, $0.op.id) < ($1.handlers, $1.op.id) }).enumerated() {
    let (owner, op) = route
    if index > 0 { routes += "\n" }
    routes += """
            func \(op.id)(_ input: Operations.\(op.typeName).Input) async throws -> Operations.\(op.typeName).Output {
                try await \(propertyName(owner)).\(op.id)(input)
            }

        """
}
routes += "}\n"

var bodies = header + """
    import TonightAPI

    """
for op in operations.sorted(by: { $0.id < $1.id }) {
    guard let type = op.jsonBody else { continue }
    bodies += """

        extension Operations.\(op.typeName).Input.Body {
            /// The JSON body (the only content type this operation accepts).
            var json: \(type) {
                switch self {
                case .json(let body): body
                }
            }
        }

        """
}

var pages = header + """

    /// The anonymous GET pages the page cache may hold: the operations marked
    /// `x-tonight-page-cache: true` in openapi.yaml, as path templates (`{name}` is one segment).
    enum CacheablePages {
        static let templates: [String] = [

    """
for op in operations.filter(\.pageCache).sorted(by: { $0.path < $1.path }) {
    pages += "        \"\(op.path)\",\n"
}
pages += """
        ]
    }

    """

let output = URL(fileURLWithPath: arguments[3], isDirectory: true)
try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
for (name, text) in [
    ("APIHandlers+Routes.swift", routes), ("RequestBodies.swift", bodies), ("CacheablePages.swift", pages),
    ("SpecLimits.swift", limitsFile(operations: operations, paths: paths, components: Components(spec: spec), header: header)),
] {
    try text.write(to: output.appendingPathComponent(name), atomically: true, encoding: .utf8)
}
