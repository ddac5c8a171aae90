// swift-tools-version: 6.1
//
// Courier's demo server, the `courier` command-line tool and the loopback integration tests: a package of
// their own so that Hummingbird, swift-argument-parser and the server's packages never reach what an app
// depending on Courier resolves. It depends on the repository's root package by path, with every trait on.
// Run from the repository root: `make demo`, `make test` (which runs these tests too).
import PackageDescription
import Foundation

// The parent directory is Courier; a path dependency's identity is its directory name.
let courierPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let courier = courierPath.lastPathComponent.lowercased()

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

func courierProduct(_ name: String) -> Target.Dependency { .product(name: name, package: courier) }

let package = Package(
    name: "CourierDemo",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CourierDemoServer", targets: ["CourierDemoServer"]),
        .executable(name: "courier", targets: ["courier"]),
    ],
    dependencies: [
        .package(path: courierPath.path, traits: ["Security", "Cache", "Metrics", "Tracing", "AsyncHTTPClient", "OpenAPI"]),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
    ],
    targets: [
        .target(
            name: "CourierDemoServer",
            dependencies: [
                courierProduct("Courier"), courierProduct("CourierCodecs"), courierProduct("CourierSchema"),
                courierProduct("CourierSecurity"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "courier",
            dependencies: [
                courierProduct("Courier"), courierProduct("CourierCodecs"), courierProduct("CourierSchema"),
                courierProduct("CourierSecurity"), courierProduct("CourierCache"), courierProduct("CourierResilience"),
                "CourierDemoServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        // The README's snippets, word for word, so that they compile (DocArticleSnippetCheck compares them).
        .executableTarget(
            name: "ReadmeSnippets",
            dependencies: [
                courierProduct("Courier"), courierProduct("CourierResilience"), courierProduct("CourierTesting"),
                courierProduct("CourierAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CourierIntegrationTests",
            dependencies: [
                courierProduct("Courier"), courierProduct("CourierCodecs"), courierProduct("CourierSchema"),
                courierProduct("CourierSecurity"), courierProduct("CourierCache"), courierProduct("CourierResilience"),
                courierProduct("CourierObservability"), courierProduct("CourierTesting"),
                courierProduct("CourierAsyncHTTPClient"), "CourierDemoServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
            // The OpenAPI bridge over loopback, with a client generated from Tests/CourierOpenAPITests/openapi.yaml (see the
        // README there: the generated code is committed, the generator is no dependency).
        .testTarget(
            name: "CourierOpenAPITests",
            dependencies: [
                courierProduct("Courier"), courierProduct("CourierOpenAPI"), courierProduct("CourierSecurity"),
                courierProduct("CourierTesting"), "CourierDemoServer",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml", "README.md"],
            swiftSettings: strict
        ),
    ]
)
