// swift-tools-version: 6.1
//
// Courier — an API-client middleware library: one interceptor pipeline for JSON, XML (libxml2) and
// Protocol Buffers (protobuf-c), with schema validation, security, caching and a pluggable transport.
//
// A fast inner loop: COURIER_LIGHT=1 builds only the targets that need no NIO, crypto or SQLite package
// (core, codecs, schema, testing support and their tests); COURIER_ONLY=security,cache adds just those
// groups to the light set. Without either variable everything is built (as `make test` and CI do).
import PackageDescription
import Foundation

let environment = ProcessInfo.processInfo.environment
let only = environment["COURIER_ONLY"].map { Set($0.split(separator: ",").map(String.init)) }
let light = environment["COURIER_LIGHT"] != nil || only != nil
func wants(_ group: String) -> Bool { only?.contains(group) ?? !light }

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

var products: [Product] = [
    .library(name: "Courier", targets: ["Courier"]),
    .library(name: "CourierCodecs", targets: ["CourierCodecs"]),
    .library(name: "CourierSchema", targets: ["CourierSchema"]),
    .library(name: "CourierTesting", targets: ["CourierTesting"]),
    .library(name: "CourierCodecsTesting", targets: ["CourierCodecsTesting"]),
]

var dependencies: [Package.Dependency] = [
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
]

var targets: [Target] = [
    .systemLibrary(
        name: "CLibXML2",
        pkgConfig: "libxml-2.0",
        providers: [.apt(["libxml2-dev"])]
    ),
    .systemLibrary(
        name: "CProtobufC",
        pkgConfig: "libprotobuf-c",
        providers: [.apt(["libprotobuf-c-dev"])]
    ),
    .target(
        name: "Courier",
        dependencies: [
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
        ],
        swiftSettings: strict
    ),
    .target(
        name: "CourierCodecs",
        dependencies: ["Courier", "CLibXML2", "CProtobufC"],
        swiftSettings: strict
    ),
    .target(
        name: "CourierSchema",
        dependencies: ["Courier", .product(name: "HTTPTypes", package: "swift-http-types")],
        swiftSettings: strict
    ),
    // Test support over the core alone (no libxml2, no protobuf-c): transports, generators, round trips, fuzzing.
    .target(
        name: "CourierTesting",
        dependencies: ["Courier", .product(name: "HTTPTypes", package: "swift-http-types")],
        swiftSettings: strict
    ),
    // The codec-specific half: generators for CourierCodecs' formats.
    .target(
        name: "CourierCodecsTesting",
        dependencies: ["CourierTesting", "CourierCodecs"],
        swiftSettings: strict
    ),
    // Repository paths and the external test suites, for Courier's own test targets (not a product).
    .target(
        name: "CourierTestSupport",
        path: "Tests/CourierTestSupport",
        swiftSettings: strict
    ),
    .testTarget(
        name: "CourierCodecsTests",
        dependencies: ["Courier", "CourierCodecs", "CourierTesting", "CourierCodecsTesting", "CourierTestSupport"],
        swiftSettings: strict
    ),
    .testTarget(
        name: "CourierSchemaTests",
        dependencies: ["Courier", "CourierSchema", "CourierCodecs", "CourierTestSupport"],
        swiftSettings: strict
    ),
    .testTarget(
        name: "CourierTests",
        dependencies: [
            "Courier", "CourierTesting", "CourierTestSupport", .product(name: "HTTPTypes", package: "swift-http-types"),
        ],
        swiftSettings: strict
    ),
]

if wants("security") || wants("server") {
    products.append(.library(name: "CourierSecurity", targets: ["CourierSecurity"]))
    dependencies.append(.package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"))
    targets += [
        .target(
            name: "CourierSecurity",
            dependencies: [
                "Courier",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CourierSecurityTests",
            dependencies: [
                "Courier", "CourierSecurity", "CourierTesting", "CourierCodecs",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
    ]
}

if wants("cache") || wants("server") {
    products.append(.library(name: "CourierCache", targets: ["CourierCache"]))
    dependencies += [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ]
    targets += [
        .target(
            name: "CourierCache",
            dependencies: [
                "Courier",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CourierCacheTests",
            dependencies: ["Courier", "CourierCache", "CourierTesting", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict
        ),
    ]
}

if wants("server") {
    products += [
        .library(name: "CourierDemoServer", targets: ["CourierDemoServer"]),
        .library(name: "CourierAsyncHTTPClient", targets: ["CourierAsyncHTTPClient"]),
        .executable(name: "courier", targets: ["courier"]),
    ]
    dependencies += [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    ]
    targets += [
        .target(
            name: "CourierDemoServer",
            dependencies: [
                "Courier", "CourierCodecs", "CourierSchema", "CourierSecurity",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CourierAsyncHTTPClient",
            dependencies: [
                "Courier",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "courier",
            dependencies: [
                "Courier", "CourierCodecs", "CourierSchema", "CourierSecurity", "CourierCache",
                "CourierDemoServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CourierIntegrationTests",
            dependencies: [
                "Courier", "CourierCodecs", "CourierSchema", "CourierSecurity", "CourierCache", "CourierTesting",
                "CourierTestSupport", "CourierDemoServer", "CourierAsyncHTTPClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
    ]
}

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v15)],
    products: products,
    dependencies: dependencies,
    targets: targets
)
