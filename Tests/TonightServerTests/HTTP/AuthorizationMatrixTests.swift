import Foundation
import HTTPTypes
import Testing
import TonightAPI

@testable import TonightServer

/// A write operation of the spec.
struct WriteOperation: CustomStringConvertible {
    var method: HTTPRequest.Method
    var path: String
    /// Whether signed-out callers may call it (`security` lists `{}`).
    var open: Bool
    var description: String { "\(method) \(path)" }
}

/// The spec's write operations (POST, PUT, PATCH, DELETE), read from its `paths`.
func writeOperations() throws -> [WriteOperation] {
    var operations: [WriteOperation] = []
    var path = ""
    var inPaths = false
    var inSecurity = false
    for line in try APIDocument.yaml().split(separator: "\n", omittingEmptySubsequences: false) {
        if line == "paths:" { inPaths = true; continue }
        if inPaths, !line.hasPrefix(" "), !line.isEmpty { break }
        if line.hasPrefix("  /"), line.hasSuffix(":") {
            path = String(line.dropFirst(2).dropLast())
            continue
        }
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if line.hasPrefix("    "), !line.hasPrefix("     "), trimmed.hasSuffix(":") {
            let method = HTTPRequest.Method(String(trimmed.dropLast()).uppercased())
            if let method, [.post, .put, .patch, .delete].contains(method) {
                operations.append(WriteOperation(method: method, path: path, open: false))
            }
            inSecurity = false
            continue
        }
        if line.hasPrefix("      "), !line.hasPrefix("       ") { inSecurity = trimmed == "security:" }
        if inSecurity, trimmed == "- {}", operations.last?.path == path { operations[operations.count - 1].open = true }
    }
    return operations
}

/// `METHOD /path` of every write operation of the spec.
func specWriteRoutes() throws -> [String] { try writeOperations().map { "\($0.method) \($0.path)" } }

/// Every write route of the spec, called as nobody, with a forged token, as an anonymous device
/// and as a member on someone else's things (path parameters name the owner's post or id):
/// refused to all but members (never a 2xx), and never a 5xx for anyone. Which member may change
/// what is ``RoleMatrixTests``.
@Suite("Authorization matrix")
struct AuthorizationMatrixTests {
    @Test(
        "every write route refuses callers without a member's token, and nobody gets a 500",
        arguments: Backend.available)
    func matrix(_ backend: Backend) async throws {
        let operations = try writeOperations()
        #expect(operations.count > 60, "\(operations.count) write operations read from the spec")
        try await withApp(backend) { services, client in
            let owner = try await client.member("owner")
            let mallory = try await client.member("mallory")
            let post = try await insertPost(services, author: owner.id)
            let device = try await client.send(.post, "/v1/auth/anonymous").json.accessToken
            let callers: [(name: String, token: String?, member: Bool)] = [
                ("nobody", nil, false), ("forged token", "not-a-token", false), ("anonymous device", device, false),
                ("another member", mallory.token, true),
            ]
            var failures: [String] = []
            for operation in operations {
                // Path parameters name the owner's things (or none that exist).
                let uri = operation.path.replacingOccurrences(
                    of: #"\{[A-Za-z]+\}"#, with: operation.path.contains("/posts/{") ? post : owner.id,
                    options: .regularExpression)
                for caller in callers {
                    let response = try await client.send(operation.method, uri, json: [:], token: caller.token)
                    let status = Int(response.status.code)
                    if status >= 500 { failures.append("\(operation) as \(caller.name): \(status) \(response.text)") }
                    // Ending its own login is the one write any token may make.
                    let ownLogin = operation.path.hasPrefix("/v1/auth/logout") && caller.name == "anonymous device"
                    if !operation.open, !caller.member, !ownLogin, (200..<300).contains(status) {
                        failures.append("\(operation) as \(caller.name): \(status)")
                    }
                }
            }
            #expect(failures.isEmpty, "\(failures.count) failures: \(failures.prefix(10))")
        }
    }
}
