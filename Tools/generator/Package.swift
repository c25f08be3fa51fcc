// swift-tools-version:6.2
// Runs swift-openapi-generator on Sources/TonightAPI/openapi.yaml; used by scripts/generate.
// Kept as its own package so the main build never compiles the generator.
import PackageDescription

let package = Package(
    name: "generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3")
    ]
)
