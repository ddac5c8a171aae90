// swift-tools-version: 6.1
//
// Courier — an API-client middleware library: one interceptor pipeline for JSON, XML (libxml2) and
// Protocol Buffers (protobuf-c), with schema validation, security, caching and a pluggable transport.
//
// Products by concern. The core (`Courier`) needs swift-http-types and swift-log only; `CourierCodecs`,
// `CourierSchema`, `CourierResilience` and `CourierTesting` add no package. The products built on another package
// need its package trait, so that an app resolves only what it uses:
//
//     .package(url: "https://github.com/courier-swift/courier", from: "0.9.0", traits: ["Security", "Cache"])
//
// | trait             | enables                                   | packages it adds                           |
// |-------------------|-------------------------------------------|--------------------------------------------|
// | `Security`        | `CourierSecurity`                         | swift-crypto                               |
// | `Cache`           | `CourierCache`                            | GRDB.swift                                 |
// | `Metrics`         | `MetricsInterceptor` (CourierObservability) | swift-metrics                            |
// | `Tracing`         | `TracingInterceptor` (CourierObservability) | swift-distributed-tracing                |
// | `AsyncHTTPClient` | `CourierAsyncHTTPClient`                  | async-http-client (SwiftNIO)               |
// | `OpenAPI`         | `CourierOpenAPI`                          | swift-openapi-runtime                      |
// | `Macros`          | `CourierMacros` (`@ProtobufModel`)        | swift-syntax                               |
//
// Courier's own tests build with every trait: `swift build --enable-all-traits --build-tests` (`make test`).
// The demo server, the `courier` CLI and the loopback integration tests live in the nested package `Demo/`.
import CompilerPluginSupport
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierCodecs", targets: ["CourierCodecs"]),
        .library(name: "CourierSchema", targets: ["CourierSchema"]),
        .library(name: "CourierSecurity", targets: ["CourierSecurity"]),
        .library(name: "CourierCache", targets: ["CourierCache"]),
        .library(name: "CourierResilience", targets: ["CourierResilience"]),
        .library(name: "CourierObservability", targets: ["CourierObservability"]),
        .library(name: "CourierAsyncHTTPClient", targets: ["CourierAsyncHTTPClient"]),
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .library(name: "CourierCodecsTesting", targets: ["CourierCodecsTesting"]),
        .library(name: "CourierMacros", targets: ["CourierMacros"]),
    ],
    traits: [
        .trait(name: "Security", description: "CourierSecurity: signing, encryption and auth (swift-crypto)."),
        .trait(name: "Cache", description: "CourierCache: the response cache and its SQLite store (GRDB)."),
        .trait(name: "Metrics", description: "MetricsInterceptor in CourierObservability (swift-metrics)."),
        .trait(name: "Tracing", description: "TracingInterceptor in CourierObservability (swift-distributed-tracing)."),
        .trait(name: "AsyncHTTPClient", description: "CourierAsyncHTTPClient: the AsyncHTTPClient transport (SwiftNIO)."),
        .trait(name: "OpenAPI", description: "CourierOpenAPI: swift-openapi-generator clients over Courier (swift-openapi-runtime)."),
        .trait(name: "Macros", description: "CourierMacros: @ProtobufModel, generated protobuf reading and writing (swift-syntax)."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.3.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"604.0.0"),
    ],
    targets: [
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CProtobufC", pkgConfig: "libprotobuf-c", providers: [.apt(["libprotobuf-c-dev"])]),
        .target(
            name: "Courier",
            dependencies: [
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(name: "CourierCodecs", dependencies: ["Courier", "CLibXML2", "CProtobufC"], swiftSettings: strict),
        .target(
            name: "CourierSchema",
            dependencies: ["Courier", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: strict
        ),
        .target(
            name: "CourierSecurity",
            dependencies: [
                "Courier",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Security"])),
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: .when(traits: ["Security"])),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CourierCache",
            dependencies: [
                "Courier",
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Cache"])),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CourierResilience",
            dependencies: ["Courier", .product(name: "HTTPTypes", package: "swift-http-types"),
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(
            name: "CourierObservability",
            dependencies: [
                "Courier",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CourierAsyncHTTPClient",
            dependencies: [
                "Courier",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["AsyncHTTPClient"])),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                "Courier",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
            ],
            swiftSettings: strict
        ),
        // `@ProtobufModel`: the macro's compiler plug-in (swift-syntax, with the `Macros` trait; an empty plug-in
        // without it) and the library that declares it.
        .macro(
            name: "CourierMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftDiagnostics", package: "swift-syntax", condition: .when(traits: ["Macros"])),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "CourierMacros",
            dependencies: [
                "CourierCodecs", .target(name: "CourierMacrosPlugin", condition: .when(traits: ["Macros"])),
            ],
            swiftSettings: strict
        ),
        // Test support over the core alone (no libxml2, no protobuf-c): transports, generators, round trips, fuzzing.
        .target(
            name: "CourierTesting",
            dependencies: ["Courier", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: strict
        ),
        // The codec-specific half: generators for CourierCodecs' formats.
        .target(name: "CourierCodecsTesting", dependencies: ["CourierTesting", "CourierCodecs"], swiftSettings: strict),

        // Repository paths, the external test suites and shared pipeline fixtures, for the test targets below.
        .target(
            name: "CourierTestSupport",
            dependencies: [
                "Courier",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ],
            path: "Tests/CourierTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "CourierTests",
            dependencies: [
                "Courier", "CourierTesting", "CourierTestSupport", .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
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
            name: "CourierSecurityTests",
            dependencies: [
                "Courier", "CourierSecurity", "CourierTesting", "CourierCodecs",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Security"])),
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: .when(traits: ["Security"])),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CourierCacheTests",
            dependencies: [
                "Courier", "CourierCache", "CourierResilience", "CourierObservability", "CourierTesting",
                "CourierTestSupport",
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Cache"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CourierResilienceTests",
            dependencies: ["Courier", "CourierResilience", "CourierTesting", "CourierTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CourierObservabilityTests",
            dependencies: [
                "Courier", "CourierObservability", "CourierTesting", "CourierTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CourierMacrosTests",
            dependencies: [
                "Courier", "CourierCodecs", "CourierCodecsTesting", "CourierMacros", "CourierTesting", "CourierTestSupport",
                .target(name: "CourierMacrosPlugin", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftSyntax", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(
                    name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax",
                    condition: .when(traits: ["Macros"])),
            ],
            swiftSettings: strict
        ),
    ]
)
