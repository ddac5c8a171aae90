public import CoreMetrics
import HTTPTypes

/// Records swift-metrics per module and endpoint: a call counter (`courier_calls_total`, with the outcome
/// `success`/`failure` and the source), a failure counter by error code (`courier_call_failures_total`) and
/// a duration timer (`courier_call_duration`).
///
/// ```swift
/// let metrics = MetricsInterceptor()                       // uses MetricsSystem.factory
/// let client = Client(configuration: .init(interceptors: [metrics]))
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

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let dimensions = [("module", context.module.name), ("endpoint", context.endpoint.name)]
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await next(request)
            record(dimensions, duration: clock.now - start, outcome: response.isSuccessful ? "success" : "failure",
                   source: response.source.name)
            if !response.isSuccessful {
                Counter(label: "\(prefix)_call_failures_total",
                        dimensions: dimensions + [("code", CourierError.Code.http(status: Int(response.head.status.code)).name)],
                        factory: factory).increment()
            }
            return response
        } catch {
            let code = CourierError.wrap(error, as: .transportFailure).code
            record(dimensions, duration: clock.now - start, outcome: "failure", source: "none")
            Counter(label: "\(prefix)_call_failures_total", dimensions: dimensions + [("code", code.name)],
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
