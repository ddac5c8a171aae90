// swift-tools-version: 6.1
//
// Courier's benchmarks, a package of their own so that the peers we measure against (swift-protobuf,
// XMLCoder) never become dependencies of Courier. Run from the repository root: `make bench`.
import PackageDescription
import Foundation

// The parent directory is Courier; a path dependency's identity is its directory name.
let courierPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let courier = courierPath.lastPathComponent.lowercased()

let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: courierPath.path),
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        .package(url: "https://github.com/CoreOffice/XMLCoder", exact: "0.18.2"),
    ],
    targets: [
        .executableTarget(
            name: "CourierBenchmarks",
            dependencies: [
                .product(name: "Courier", package: courier),
                .product(name: "CourierCodecs", package: courier),
                .product(name: "CourierSchema", package: courier),
                .product(name: "CourierTesting", package: courier),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "XMLCoder", package: "XMLCoder"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
