#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Knows where the current thread's stack ends, so that deep recursion (a deeply nested instance under
/// a recursive schema) stops with a violation instead of overflowing the stack, whatever the thread's
/// stack size (tasks of the concurrency pool have smaller stacks than the main thread).
struct StackGuard {
    /// The lowest address the recursion may reach (the stack's end plus a safety margin), or 0 when
    /// the platform does not tell.
    let limit: UInt

    /// Room kept free below the deepest frame for the frames that report and unwind.
    static let margin: UInt = 128 * 1024

    init() {
        limit = Self.stackLowAddress().map { $0 + Self.margin } ?? 0
    }

    /// Whether the stack still has room at the caller's depth.
    @inline(__always)
    func hasRoom() -> Bool {
        guard limit != 0 else { return true }
        var marker: UInt8 = 0
        let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        return here > limit
    }

    private static func stackLowAddress() -> UInt? {
        #if canImport(Glibc) || canImport(Musl)
        // pthread_getattr_np is a GNU extension the Glibc module does not import; look it up instead.
        typealias GetAttr = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_getattr_np") else { return nil }
        let getAttributes = unsafeBitCast(symbol, to: GetAttr.self)
        // Allocated rather than initialised, so no module's zero-initialiser of the C struct is needed.
        let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
        defer { attributes.deallocate() }
        guard getAttributes(pthread_self(), attributes) == 0 else { return nil }
        defer { pthread_attr_destroy(attributes) }
        var address: UnsafeMutableRawPointer? = nil
        var size = 0
        guard pthread_attr_getstack(attributes, &address, &size) == 0, let address else { return nil }
        return UInt(bitPattern: address)
        #elseif canImport(Darwin)
        let top = UInt(bitPattern: pthread_get_stackaddr_np(pthread_self()))
        let size = UInt(pthread_get_stacksize_np(pthread_self()))
        return top - size
        #else
        return nil
        #endif
    }
}
