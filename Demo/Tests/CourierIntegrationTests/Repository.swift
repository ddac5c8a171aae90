import Foundation

/// Files of this repository for the integration tests: the checkout's root (found from this file's path, two
/// folders above the `Demo` package), its `Fixtures/` and `Schemas/`.
enum Repository {
    /// The checkout's root folder.
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}
