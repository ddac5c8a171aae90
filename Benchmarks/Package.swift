// swift-tools-version: 6.1
//
// Courier's benchmarks on ordo-one/benchmark (package-benchmark), a package of their own so that the peers we
// measure against (swift-protobuf, XMLCoder) never become dependencies of Courier. Each group is one benchmark
// executable under Benchmarks/<Group>/; every Courier benchmark has its peer in the same target, so both run in
// the same `swift package benchmark` run. Run from the repository root: `make bench` (it prints the ratio table
// of issue 14 from the run's medians, Scripts/bench-table.py).
import PackageDescription
import Foundation

// The parent directory is Courier; a path dependency's identity is its directory name.
let courierPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let courier = courierPath.lastPathComponent.lowercased()

/// One benchmark executable per group: Benchmarks/<name>/, with package-benchmark's boilerplate plugin.
func group(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            .product(name: "Benchmark", package: "benchmark"),
            "BenchmarkSupport",
        ] + dependencies,
        path: "Benchmarks/\(name)",
        swiftSettings: [.swiftLanguageMode(.v6)],
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The `Macros` trait: the typed protobuf rows read and write `@ProtobufModel` models.
        .package(path: courierPath.path, traits: ["Macros"]),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        .package(url: "https://github.com/CoreOffice/XMLCoder", exact: "0.18.2"),
    ],
    targets: [
        // Shared helpers: fixtures, configurations, peak-memory readings, notes for the table script.
        .target(
            name: "BenchmarkSupport",
            dependencies: [.product(name: "Benchmark", package: "benchmark")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        group("Chain", [
            .product(name: "Courier", package: courier),
            .product(name: "CourierTesting", package: courier),
        ]),
        group("JSON", [.product(name: "Courier", package: courier)]),
        group("Protobuf", [
            .product(name: "Courier", package: courier),
            .product(name: "CourierCodecs", package: courier),
            .product(name: "CourierMacros", package: courier),
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        ]),
        group("XML", [
            .product(name: "Courier", package: courier),
            .product(name: "CourierCodecs", package: courier),
            .product(name: "XMLCoder", package: "XMLCoder"),
        ]),
        group("Schema", [
            .product(name: "Courier", package: courier),
            .product(name: "CourierSchema", package: courier),
        ]),
        group("Hostile", [
            .product(name: "Courier", package: courier),
            .product(name: "CourierCodecs", package: courier),
            .product(name: "CourierSchema", package: courier),
        ]),
    ]
)
