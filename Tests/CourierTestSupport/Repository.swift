public import Foundation
import Testing

/// Files of this repository for Courier's own test targets: the checkout's root (found from this file's
/// path, so tests run from any working directory), its `Fixtures/` and `Schemas/`, and the external test
/// suites (JSONTestSuite, JSON-Schema-Test-Suite) read from `COURIER_TEST_SUITES`, else from
/// `<repository root>/../shared/test-suites`. Not a product: users get their helpers from `CourierTesting`.
///
/// ```swift
/// let page = try Repository.fixture("users_10.json")
/// guard let suite = Repository.externalSuite("JSONTestSuite/test_parsing") else { return }
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

    /// The folder of an external suite, or `nil` when it is missing: then the calling test fails under
    /// `CI=true` (a missing suite must not pass CI silently) and notes the skip otherwise.
    public static func externalSuite(_ relativePath: String) -> URL? {
        let base: URL
        if let configured = ProcessInfo.processInfo.environment["COURIER_TEST_SUITES"], !configured.isEmpty {
            base = URL(fileURLWithPath: configured)
        } else {
            base = root.deletingLastPathComponent().appendingPathComponent("shared/test-suites")
        }
        let url = base.appendingPathComponent(relativePath)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return url
        }
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("test suite \(relativePath) not found at \(url.path)")
        } else {
            print("skipping: test suite \(relativePath) not found at \(url.path) (set COURIER_TEST_SUITES)")
        }
        return nil
    }
}
