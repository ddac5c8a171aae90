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
/// let client = CourierClient(transport: LoopbackTransport())
/// ```
public protocol Transport: Sendable {
    /// Sends `request` with `body` and returns the response head and the whole body.
    func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data)

    /// Sends `request` with a streamed `body` (its ``BodyStream/length`` as `Content-Length` when known, else
    /// chunked) and hands the response body to `sink` as it arrives, returning the head once the body has
    /// ended. ``TransportOptions/maximumResponseSize`` does not apply: the sink sets its own limits (a
    /// ``CollectingSink`` for ordinary calls, a file for downloads). Timeouts, cancellation and error mapping
    /// are those of ``send(_:body:options:)``; an error the sink or the body throws ends the call with that
    /// error.
    ///
    /// A default implementation buffers both bodies through ``send(_:body:options:)``, so transports written
    /// before streaming keep working.
    func stream(
        _ request: HTTPRequest, body: BodyStream?, options: TransportOptions, into sink: any ResponseBodySink
    ) async throws -> HTTPResponse
}

/// Per-request options for a transport.
public struct TransportOptions: Sendable {
    /// The longest the exchange may take (nil: the transport's default).
    public var timeout: Duration?
    /// The largest response body accepted; a larger one fails with ``CourierError/Code/responseTooLarge``.
    public var maximumResponseSize: Int
    /// The call's identifier, for logs.
    public var callID: CallID?
    /// The call's ``Endpoint/priority``, for transports that schedule by priority (URLSession's task
    /// priority; AsyncHTTPClient has none).
    public var priority: Priority

    /// Default options: no timeout override, 64 MiB response limit, normal priority.
    public init(
        timeout: Duration? = nil, maximumResponseSize: Int = 64 << 20, callID: CallID? = nil,
        priority: Priority = .normal
    ) {
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
        self.callID = callID
        self.priority = priority
    }
}

/// The enumerated transport failures, and helpers for transports to produce them.
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
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
/// (the operation is cancelled). Courier's transports without their own timers use it (package access:
/// not part of the public API).
///
/// ```swift
/// let data = try await withTimeout(.seconds(2)) { try await fetch() }
/// ```
package func withTimeout<T: Sendable>(
    _ timeout: Duration?, clock: any Clock<Duration> = ContinuousClock(),
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    guard let timeout else { return try await operation() }
    if clock is ContinuousClock { return try await withDeadlineTimeout(timeout, operation) }
    // Other clocks (a test's manual clock) sleep in a racing child task.
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

/// ``withTimeout(_:clock:_:)`` on the wall clock: the operation runs as one task (started immediately), and the shared
/// ``DeadlineTimer`` cancels it when the time is up (no sleeping timer task, no task group to tear down and no
/// Dispatch timer to register per call).
private func withDeadlineTimeout<T: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    // The operation starts on this thread and runs until it first waits (an in-memory or cached answer never
    // does, and then costs no thread hop); the deadline counts from there.
    let task = immediateTask { try await operation() }
    let deadline = DeadlineTimer.shared.schedule(after: timeout) { task.cancel() }
    let result: T
    do {
        result = try await withTaskCancellationHandler {
            // The task returns `operation`'s result: the cast always succeeds.
            try await task.value as! T
        } onCancel: {
            task.cancel()
        }
    } catch {
        // The deadline fired when cancelling it finds it no longer pending.
        if !DeadlineTimer.shared.cancel(deadline) {
            throw TransportFailure.timedOut.error(detail: "no answer within \(timeout)")
        }
        throw error
    }
    DeadlineTimer.shared.cancel(deadline)
    return result
}
