#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// Sends one HTTP request and returns the response: the chain's last link. Exactly one per client; anything
/// else (retry, cache, logging) is an interceptor.
///
/// A transport throws only ``CourierError``s of the transport category (or ``CourierError/Code/cancelled``),
/// mapping its own failures with ``TransportFailure``; it must stop its work when the Swift task is cancelled.
///
/// ```swift
/// struct LoopbackTransport: Transport {
///     func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
///         (HTTPResponse(status: .ok), body ?? Data())
///     }
/// }
/// let client = Client(transport: LoopbackTransport())
/// ```
public protocol Transport: Sendable {
    /// Sends `request` with `body` and returns the response head and the whole body.
    func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data)
}

/// Per-request options for a transport.
public struct TransportOptions: Sendable {
    /// The longest the exchange may take (nil: the transport's default).
    public var timeout: Duration?
    /// The largest response body accepted; a larger one fails with ``CourierError/Code/responseTooLarge``.
    public var maximumResponseSize: Int
    /// The call's identifier, for logs.
    public var callID: CallID?

    /// Default options: no timeout override, 64 MiB response limit.
    public init(timeout: Duration? = nil, maximumResponseSize: Int = 64 << 20, callID: CallID? = nil) {
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
        self.callID = callID
    }
}

/// The enumerated transport failures, and helpers for transports to produce them.
///
/// ```swift
/// throw TransportFailure.timedOut.error(underlying: someError)
/// ```
public enum TransportFailure: Sendable, CaseIterable {
    /// The exchange took longer than its timeout.
    case timedOut
    /// The connection was refused (nothing listening).
    case cannotConnect
    /// The host name did not resolve.
    case hostNotFound
    /// There is no network.
    case notConnected
    /// The connection dropped mid-exchange.
    case connectionLost
    /// The call was cancelled.
    case cancelled
    /// TLS failed.
    case tlsFailure
    /// Anything else.
    case other

    /// The ``CourierError`` code for this failure.
    public var code: CourierError.Code {
        switch self {
        case .timedOut: return .timedOut
        case .cannotConnect: return .cannotConnect
        case .hostNotFound: return .hostNotFound
        case .notConnected: return .notConnected
        case .connectionLost: return .connectionLost
        case .cancelled: return .cancelled
        case .tlsFailure: return .tlsFailure
        case .other: return .transportFailure
        }
    }

    /// A ``CourierError`` for this failure.
    public func error(detail: String? = nil, underlying: (any Error)? = nil) -> CourierError {
        var error = CourierError(code, detail: detail, underlying: underlying)
        error.context.stage = "transport"
        return error
    }
}

/// Runs `operation`, failing with ``CourierError/Code/timedOut`` when it takes longer than `timeout`
/// (the operation is cancelled). Transports without their own timers use it.
///
/// ```swift
/// let data = try await withTimeout(.seconds(2)) { try await fetch() }
/// ```
public func withTimeout<T: Sendable>(
    _ timeout: Duration?, clock: any Clock<Duration> = ContinuousClock(),
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    guard let timeout else { return try await operation() }
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await clock.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TransportFailure.timedOut.error() }
        guard let value = first else {
            throw TransportFailure.timedOut.error(detail: "no answer within \(timeout)")
        }
        return value
    }
}
