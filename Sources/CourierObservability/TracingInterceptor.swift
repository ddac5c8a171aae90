#if Tracing
public import Courier
public import Tracing
public import HTTPTypes

/// Traces every call with swift-distributed-tracing: a client span per call (`<module> <endpoint>`) and, inside
/// it, a span per stage of the chain (`stage <name>`, the transport included), each stage's span the child of
/// the stage around it. The call's span context is injected into the request's header fields with the tracer's
/// propagation format before the later stages run, so a W3C tracer (swift-otel) sends `traceparent` and the
/// server joins the trace; signing and encryption stages see the header like any other.
///
/// Failed calls and stages record the error and an error status. Attributes follow OpenTelemetry's HTTP
/// conventions: `http.request.method`, `url.full` (the query removed, since it may carry secrets),
/// `http.response.status_code`, plus `courier.module`, `courier.endpoint`, `courier.call_id` and the endpoint's
/// `Endpoint.tags` as `courier.tags`.
///
/// ```swift
/// let client = CourierClient(configuration: .init(interceptors: [TracingInterceptor()]))
/// ```
///
/// It sits in the `InterceptorRole.observation` role, so place it first among observation
/// interceptors to have the others' work inside the call's span.
public struct TracingInterceptor: Interceptor {
    /// The tracer spans start on.
    public let tracer: any Tracer
    /// Whether a span is started for each stage as well as for the call.
    public let tracesStages: Bool

    /// A tracing stage on `tracer` (the process's bootstrapped tracer by default).
    public init(tracer: any Tracer = InstrumentationSystem.tracer, tracesStages: Bool = true) {
        self.tracer = tracer
        self.tracesStages = tracesStages
    }

    public var name: String { "Tracing" }
    public var role: InterceptorRole { .observation }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        try await traced(tracer, request, context, next)
    }

    private func traced<T: Tracer>(
        _ tracer: T, _ request: CourierRequest, _ context: InterceptorContext, _ next: InterceptorNext
    ) async throws -> CourierResponse {
        let span = tracer.startSpan("\(context.module.name) \(context.endpoint.name)", context: ServiceContext.current ?? .topLevel, ofKind: .client)
        defer { span.end() }
        Self.describe(request, context, on: span)
        var request = request
        tracer.inject(span.context, into: &request.head.headerFields, using: HTTPFieldsInjector())
        if tracesStages { context.observeStages(with: StageSpans(tracer: tracer)) }
        do {
            let response = try await ServiceContext.withValue(span.context) { try await next(request) }
            Self.record(response, on: span)
            return response
        } catch {
            Self.record(error, on: span)
            throw error
        }
    }

    /// Records a failed call or stage: the error, an error status named by its code, and the HTTP status
    /// when the failure was an answer.
    static func record(_ error: any Error, on span: some Span) {
        span.recordError(error)
        let courierError = error as? CourierError
        span.setStatus(SpanStatus(code: .error, message: courierError?.code.name))
        if let status = courierError?.context.status { span.attributes["http.response.status_code"] = status }
    }

    static func describe(_ request: CourierRequest, _ context: InterceptorContext, on span: some Span) {
        span.attributes["http.request.method"] = request.head.method.rawValue
        let head = request.head
        let path = head.path.map { $0.prefix { $0 != "?" && $0 != "#" } } ?? "/"
        span.attributes["url.full"] = "\(head.scheme ?? "http")://\(head.authority ?? "")\(path)"
        span.attributes["courier.module"] = context.module.name
        span.attributes["courier.endpoint"] = context.endpoint.name
        span.attributes["courier.call_id"] = "\(context.callID)"
        if !context.endpoint.tags.isEmpty {
            span.attributes["courier.tags"] = context.endpoint.tags.sorted().joined(separator: ",")
        }
    }

    static func record(_ response: CourierResponse, on span: some Span) {
        span.attributes["http.response.status_code"] = Int(response.head.status.code)
        if let failure = response.failure {
            span.recordError(failure)
            span.setStatus(SpanStatus(code: .error, message: failure.code.name))
        }
    }
}

/// A span per stage run, the child of the span around it.
struct StageSpans<T: Tracer>: StageObserver {
    let tracer: T

    func observe(
        stage: String, request: CourierRequest, context: InterceptorContext,
        next: (CourierRequest) async throws -> CourierResponse
    ) async throws -> CourierResponse {
        let span = tracer.startSpan(
            "stage \(stage)", context: ServiceContext.current ?? .topLevel, ofKind: stage == "transport" ? .client : .internal)
        defer { span.end() }
        span.attributes["courier.stage"] = stage
        do {
            let response = try await ServiceContext.withValue(span.context) { try await next(request) }
            span.attributes["http.response.status_code"] = Int(response.head.status.code)
            return response
        } catch {
            TracingInterceptor.record(error, on: span)
            throw error
        }
    }
}

/// Writes a tracer's propagation fields (`traceparent`, `tracestate`, …) into HTTP header fields.
public struct HTTPFieldsInjector: Injector {
    /// An injector.
    public init() {}

    public func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        carrier[name] = value
    }
}

/// Reads a tracer's propagation fields from HTTP header fields (for servers joining a caller's trace).
public struct HTTPFieldsExtractor: Extractor {
    /// An extractor.
    public init() {}

    public func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}
#endif
