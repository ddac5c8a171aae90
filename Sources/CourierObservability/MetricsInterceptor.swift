#if Metrics
public import CoreMetrics
import HTTPTypes

/// Records swift-metrics per module and endpoint, for the outcome as the caller gets it (an HTTP error, a
/// business code, a schema violation or a model that does not decode is a failure): a call counter
/// (`courier_calls_total`, with the outcome `success`/`failure` and the source), a failure counter by error code (`courier_call_failures_total`) and
/// a duration timer (`courier_call_duration`). Every metric carries the dimensions `module`, `endpoint` and
/// `tags` (the endpoint's `Endpoint.tags`, sorted and joined with `,`; empty when it has none), so a
/// dashboard can group calls across modules by tag (`checkout`, `screen:profile`).
///
/// ```swift
/// let metrics = MetricsInterceptor()                       // uses MetricsSystem.factory
/// let client = CourierClient(configuration: .init(interceptors: [metrics]))
/// ```
public struct MetricsInterceptor: Interceptor {
    /// The factory metrics are made with.
    public var factory: any MetricsFactory
    /// A prefix for every label.
    public var prefix: String

    /// A metrics stage using `factory` (the bootstrapped system's by default).
    public init(factory: any MetricsFactory = MetricsSystem.factory, prefix: String = "courier") {
        self.factory = factory
        self.prefix = prefix
    }

    /// `metrics`.
    public var name: String { "metrics" }
    /// `InterceptorRole.observation`.
    public var role: InterceptorRole { .observation }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let dimensions = [("module", context.module.name), ("endpoint", context.endpoint.name),
                          ("tags", context.endpoint.tags.sorted().joined(separator: ","))]
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await next(request)
            let failure = response.failure
                ?? (response.isSuccessful ? nil : CourierError(.http(status: Int(response.head.status.code))))
            record(dimensions, duration: clock.now - start, outcome: failure == nil ? "success" : "failure",
                   source: response.source.name)
            if let failure {
                Counter(label: "\(prefix)_call_failures_total", dimensions: dimensions + [("code", failure.code.name)],
                        factory: factory).increment()
            }
            return response
        } catch {
            let failure = CourierError.wrap(error, as: .transportFailure)
            // A failure with a status is one the server answered (an HTTP or business error, a schema or
            // decoding failure of its answer).
            record(dimensions, duration: clock.now - start, outcome: "failure",
                   source: failure.context.status == nil ? "none" : ResponseSource.network.name)
            Counter(label: "\(prefix)_call_failures_total", dimensions: dimensions + [("code", failure.code.name)],
                    factory: factory).increment()
            throw error
        }
    }

    private func record(_ dimensions: [(String, String)], duration: Duration, outcome: String, source: String) {
        Counter(label: "\(prefix)_calls_total", dimensions: dimensions + [("outcome", outcome), ("source", source)],
                factory: factory).increment()
        let (seconds, attoseconds) = duration.components
        CoreMetrics.Timer(label: "\(prefix)_call_duration", dimensions: dimensions, factory: factory)
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
#endif
