import Foundation

/// The OpenAPI document this module was generated from, as shipped with the build.
public enum APIDocument {
    /// The YAML text of `openapi.yaml`.
    public static func yaml() throws -> String {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try String(contentsOf: url, encoding: .utf8)
    }
}
