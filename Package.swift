// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "tonight",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "TonightClient", targets: ["TonightClient"]),
        .library(name: "TonightServer", targets: ["TonightServer"]),
        .executable(name: "tonight", targets: ["tonight"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit", from: "2.17.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "TonightAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
            ],
            exclude: ["openapi-generator-config.yaml"],
            resources: [.copy("openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        .target(name: "TonightCore", swiftSettings: swiftSettings),
        .target(
            name: "TonightServer",
            dependencies: [
                "TonightAPI", "TonightCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            resources: [.copy("Resources/gazetteer")],
            swiftSettings: swiftSettings,
            plugins: ["EmbedWeb"]
        ),
        // Builds Web/ into the server (EmbeddedWeb), so the binary serves the app from anywhere.
        .plugin(name: "EmbedWeb", capability: .buildTool(), dependencies: ["WebPacker"]),
        .executableTarget(name: "WebPacker", swiftSettings: swiftSettings),
        // bench/run reach: Web Push encryption and VAPID signing per message, in µs.
        .executableTarget(
            name: "WebPushBench", dependencies: ["TonightServer"], path: "bench/WebPushBench",
            swiftSettings: swiftSettings),
        // bench/run chat: the same relay as bench/relay_server.py on Hummingbird's WebSocket, the
        // floor under Tonight's live sockets.
        .executableTarget(
            name: "LiveFloor",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ],
            path: "bench/LiveFloor", swiftSettings: swiftSettings),
        .target(
            name: "TonightClient",
            dependencies: [
                "TonightAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TonightDemo",
            dependencies: [
                "TonightServer", "TonightClient",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "tonight",
            dependencies: [
                "TonightServer", "TonightDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // TonightServer only for ChildProcess, which runs ffmpeg to make sample files.
        .testTarget(
            name: "TonightCoreTests", dependencies: ["TonightCore", "TonightServer"], swiftSettings: swiftSettings),
        .testTarget(
            name: "TonightServerTests",
            dependencies: [
                "TonightServer",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TonightClientTests",
            dependencies: ["TonightClient", "TonightServer", "TonightDemo"],
            swiftSettings: swiftSettings
        ),
    ]
)
