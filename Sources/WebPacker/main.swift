// The build tool of the EmbedWeb plugin: `WebPacker <folder> <output.swift> <relative names…>`
// writes the named files of the folder as one Swift source, each file base64 in a string literal
// (long string literals compile fast; array literals of bytes do not).
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: WebPacker <folder> <output.swift> <names…>\n".utf8))
    exit(2)
}
let folder = URL(fileURLWithPath: arguments[arguments.startIndex])
let output = URL(fileURLWithPath: arguments[arguments.startIndex + 1])
var source = """
    // Generated at build time by the EmbedWeb plugin from the package's Web/ folder. Do not edit.

    extension EmbeddedWeb {
        /// Every file of `Web/` by its path in the folder, base64.
        static let files: [(name: String, base64: String)] = [

    """
for name in arguments.dropFirst(2) {
    let data = try Data(contentsOf: folder.appendingPathComponent(name))
    let quoted = name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    source += "        (\"\(quoted)\", \"\(data.base64EncodedString())\"),\n"
}
source += "    ]\n}\n"
try Data(source.utf8).write(to: output, options: .atomic)
