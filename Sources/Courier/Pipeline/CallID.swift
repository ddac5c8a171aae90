import Synchronization

/// The identifier of one dispatched call, unique within a process. Use it to cancel the call
/// (``CourierClient/cancel(_:)``) and to find it in logs and traces.
///
/// ```swift
/// let call = client.dispatch(.user(7, in: users))
/// print(call.id)          // "#12"
/// client.cancel(call.id)
/// ```
public struct CallID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number.
    public let rawValue: UInt64

    /// An identifier with a given number (tests, logs).
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    private static let counter = Atomic<UInt64>(0)

    /// A fresh identifier.
    public static func next() -> CallID {
        CallID(rawValue: counter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    public var description: String { "#\(rawValue)" }

    public static func < (lhs: CallID, rhs: CallID) -> Bool { lhs.rawValue < rhs.rawValue }
}
