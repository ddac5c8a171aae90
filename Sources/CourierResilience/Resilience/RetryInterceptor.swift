#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import HTTPTypes
import Logging

/// Sends a call again when it fails in a way worth retrying, as its endpoint's ``RetryPolicy`` says
/// (``Courier/Endpoint/retryPolicy``, else the module's, else ``defaultPolicy``). Delays go through the
/// context's `clock`, so tests can measure them with a test clock. Never replays a request whose
/// `CourierRequest.isReplayable` is false, nor a cancelled call.
///
/// ```swift
/// let client = CourierClient(configuration: .init(interceptors: [RetryInterceptor(defaultPolicy: .exponential(attempts: 3))]))
/// ```
public struct RetryInterceptor: Interceptor {
    /// The policy for endpoints and modules that set none.
    public var defaultPolicy: RetryPolicy
    /// The jitter's random source (`0..<1`).
    public var random: @Sendable () -> Double
    /// The current time, for `Retry-After` dates.
    public var now: @Sendable () -> Date

    /// A retry stage.
    public init(
        defaultPolicy: RetryPolicy = RetryPolicy(), random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.defaultPolicy = defaultPolicy
        self.random = random
        self.now = now
    }

    /// `retry`.
    public var name: String { "retry" }
    /// `InterceptorRole.resilience`.
    public var role: InterceptorRole { .resilience }
    /// ``Courier/ChainFeature/retry``: ``Courier/Endpoint/retryPolicy`` takes effect.
    public var provides: Set<ChainFeature> { [.retry] }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let policy = context.endpoint.retryPolicy ?? defaultPolicy
        var state = RetryState(
            policy: policy, method: request.head.method, isReplayable: request.isReplayable, random: random)
        while true {
            let result: Result<CourierResponse, any Error>
            let outcome: RetryState.Outcome
            do {
                let response = try await next(request)
                result = .success(response)
                outcome = .response(
                    status: Int(response.head.status.code),
                    retryAfter: RetryState.retryAfter(in: response.head.headerFields, now: now()))
            } catch {
                result = .failure(error)
                let code = CourierError.wrap(error, as: .transportFailure).code
                outcome = .failure(Task.isCancelled ? .cancelled : code)
            }
            guard case .retry(let delay) = state.record(outcome) else { return try result.get() }
            context.logger.debug(
                "retrying", metadata: ["attempt": "\(state.attempts + 1)", "delay": "\(delay)", "after": "\(outcome)"])
            try await context.clock.sleep(for: delay)
        }
    }
}
