// swift-tools-version: 6.1
//
// Courier's libFuzzer targets, a package of their own so the sanitizer flags never touch the main build.
// Build and run one target for a bounded time from the repository root:
//
//     Fuzz/run.sh FuzzJSON 60
//
// To add a target: create Sources/<Name>/<Name>.swift exporting
// `@_cdecl("LLVMFuzzerTestOneInput") public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt`
// (no main.swift: libFuzzer supplies `main`), list it in `fuzzTargets` below with the Courier products it
// needs, and put a few small seed inputs in Fixtures/fuzz/<Name>/.
import PackageDescription
import Foundation

// The parent directory is Courier; a path dependency's identity is its directory name.
let courierPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let courier = courierPath.lastPathComponent.lowercased()

/// Each fuzz target and the Courier products it links.
let fuzzTargets: [(name: String, products: [String])] = [
    ("FuzzJSON", ["Courier", "CourierTesting"]),
    ("FuzzJSONTyped", ["Courier"]),
    ("FuzzJSONShortLong", ["Courier"]),
    ("FuzzXML", ["CourierCodecs", "CourierTesting"]),
    ("FuzzXMLTyped", ["CourierCodecs"]),
    ("FuzzProtobuf", ["CourierCodecs", "CourierTesting"]),
    ("FuzzProtobufTyped", ["CourierCodecs"]),
    ("FuzzProtobufModel", ["CourierCodecs"]),
    ("FuzzSchema", ["CourierSchema"]),
    ("FuzzRegex", ["CourierSchema"]),
]

let package = Package(
    name: "CourierFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: courierPath.path)
    ],
    targets: fuzzTargets.map { target in
        .executableTarget(
            name: target.name,
            dependencies: target.products.map { .product(name: $0, package: courier) },
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    }
)
