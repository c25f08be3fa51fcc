import Foundation
import PackagePlugin

/// Builds the web app (`Web/` at the package root) into the target it is applied to: every file
/// becomes an entry of `EmbeddedWeb.files` in a generated Swift source, so the server binary
/// serves the app whatever its working directory, with nothing installed beside it.
@main
struct EmbedWeb: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let web = context.package.directoryURL.appending(path: "Web")
        let names = (FileManager.default.subpaths(atPath: web.path) ?? []).filter { name in
            var isDirectory: ObjCBool = false
            return !name.split(separator: "/").contains { $0.hasPrefix(".") }
                && FileManager.default.fileExists(atPath: web.appending(path: name).path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }.sorted()
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedWebFiles.swift")
        return [
            .buildCommand(
                displayName: "Building the web app into \(target.name) (\(names.count) files)",
                executable: try context.tool(named: "WebPacker").url,
                arguments: [web.path, output.path] + names,
                inputFiles: names.map { web.appending(path: $0) },
                outputFiles: [output])
        ]
    }
}
