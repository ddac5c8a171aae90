import Foundation

/// How this test run was built, for the tests that size their work to it.
///
/// ```swift
/// let depth = TestRun.underThreadSanitizer ? 80 : 300
/// ```
public enum TestRun {
    /// Whether the tests run under ThreadSanitizer: `make test-tsan` sets `COURIER_TSAN`. There, frames are
    /// several times larger (a stack guard rightly gives up sooner on a concurrency-pool thread) and code runs
    /// several times slower (a long single-threaded loop would starve the suites beside it).
    public static let underThreadSanitizer = ProcessInfo.processInfo.environment["COURIER_TSAN"] != nil
}
