// swift-tools-version:6.2
// Code generation for scripts/generate, kept as its own package so the main build never compiles it:
// swift-openapi-generator (types, server protocol and client from Sources/TonightAPI/openapi.yaml)
// and tonight-codegen (the server's routing to feature handlers, read from the same spec).
import PackageDescription

let package = Package(
    name: "generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/jpsim/Yams", "5.0.1"..<"7.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "tonight-codegen",
            dependencies: [.product(name: "Yams", package: "Yams")]
        )
    ]
)
