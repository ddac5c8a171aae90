public import Foundation
import Testing

/// Files of this repository for Courier's own test targets: the checkout's root (found from this file's
/// path, so tests run from any working directory), its `Fixtures/` and `Schemas/`, and the external test
/// suites (JSONTestSuite, JSON-Schema-Test-Suite) read from `COURIER_TEST_SUITES`, else from
/// `<repository root>/../shared/test-suites`. A test of a missing suite is skipped by name, or fails under
/// `CI=true`. Not a product: users get their helpers from `CourierTesting`.
///
/// ```swift
/// let page = try Repository.fixture("users_10.json")
/// @Test(.enabled(if: Repository.runsExternalSuite("JSONTestSuite/test_parsing"), "JSONTestSuite missing"))
/// func parsing() throws {
///     guard let suite = Repository.externalSuite("JSONTestSuite/test_parsing") else { return }
/// }
/// ```
public enum Repository {
    /// The checkout's root folder.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The bytes of `Fixtures/<name>`.
    public static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent("Fixtures").appendingPathComponent(name))
    }

    /// The URL of `Schemas/<name>`.
    public static func schema(_ name: String) -> URL {
        root.appendingPathComponent("Schemas").appendingPathComponent(name)
    }

    /// Whether CI is running (`CI=true`, which `.ci/run` sets): a missing external suite is a failure there.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The folder external suites are read from: `COURIER_TEST_SUITES`, else `<root>/../shared/test-suites`.
    public static var externalSuitesFolder: URL {
        if let configured = ProcessInfo.processInfo.environment["COURIER_TEST_SUITES"], !configured.isEmpty {
            return URL(fileURLWithPath: configured)
        }
        return root.deletingLastPathComponent().appendingPathComponent("shared/test-suites")
    }

    /// The folder of external suite `relativePath` when it exists.
    private static func existingSuite(_ relativePath: String) -> URL? {
        let url = externalSuitesFolder.appendingPathComponent(relativePath)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return url
        }
        return nil
    }

    /// Whether a test of external suite `relativePath` runs: when the suite is there, and always under CI
    /// (where ``externalSuite(_:)`` then fails it). Use it as the test's condition, so that a missing suite
    /// shows as a named skip, never as a pass:
    ///
    /// ```swift
    /// @Test(.enabled(if: Repository.runsExternalSuite("JSONTestSuite/test_parsing"),
    ///                "JSONTestSuite not found: set COURIER_TEST_SUITES (CI=true fails instead)"))
    /// ```
    public static func runsExternalSuite(_ relativePath: String) -> Bool {
        isCI || existingSuite(relativePath) != nil
    }

    /// The folder of an external suite, or `nil` after recording an issue when it is missing: a test that
    /// reads a suite is guarded by ``runsExternalSuite(_:)``, so it runs without the suite only under
    /// `CI=true`, where a missing suite must fail.
    public static func externalSuite(_ relativePath: String) -> URL? {
        if let url = existingSuite(relativePath) { return url }
        let url = externalSuitesFolder.appendingPathComponent(relativePath)
        Issue.record("test suite \(relativePath) not found at \(url.path) (set COURIER_TEST_SUITES)")
        return nil
    }
}
