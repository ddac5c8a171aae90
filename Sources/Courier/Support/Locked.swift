#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`, shared by Courier's modules and tests (package access).
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
package struct Locked<State>: @unchecked Sendable {
    /// The state with the mutex allocated in the same block (one allocation per lock, where a class with a
    /// separately allocated mutex took two: per-call locks are made on every call).
    private final class Storage: ManagedBuffer<State, pthread_mutex_t> {
        deinit {
            _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
        }
    }

    private let storage: Storage

    /// Guards `initialState`.
    package init(_ initialState: State) {
        storage = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in initialState }, to: Storage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let status = pthread_mutex_init(mutex, nil)
            precondition(status == 0, "pthread_mutex_init failed with \(status)")
        }
    }

    /// Runs `body` with exclusive access to the state and returns its result.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { state, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }
}
