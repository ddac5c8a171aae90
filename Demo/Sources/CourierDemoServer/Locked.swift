#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`, for the demo server, the CLI and the integration tests: the root
/// package's own `Locked` is `package` access, which does not reach this package.
///
/// Courier uses this instead of `Synchronization.Mutex` for two measured reasons on Linux: ThreadSanitizer
/// intercepts `pthread_mutex_lock`/`unlock` and so sees the happens-before edge they create, while
/// `Mutex`'s contended path parks on a futex inside the uninstrumented standard library and makes TSan report
/// races between two accesses that were in fact serialised (seen in `make test-tsan`); and `Mutex` is much
/// slower than a pthread mutex under contention on Linux (swiftlang/swift#88440).
///
/// ```swift
/// let counts = Locked<[String: Int]>([:])
/// counts.withLock { $0["user", default: 0] += 1 }
/// let users = counts.withLock { $0["user"] ?? 0 }
/// ```
public final class Locked<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    /// Guards `initialState`.
    public init(_ initialState: State) {
        state = initialState
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state and returns its result.
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
