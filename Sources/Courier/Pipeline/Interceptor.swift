public import Logging

/// One stage of the pipeline, seeing both directions: it receives the request and a ``InterceptorNext``,
/// may change the request, awaits `next`, and may change the response or the error on the way back. It can
/// answer without calling `next` (a cache) or call `next` more than once (a retry).
///
/// **Order.** A call's chain is built once, as an immutable ``Pipeline``, from one explicit list:
/// the client's global interceptors, then the module's, then the endpoint's — outermost first. Within that
/// list, interceptors are grouped by ``phase`` (stable, so the global → module → endpoint order holds in each
/// phase):
///
/// 1. ``InterceptorPhase/application`` interceptors see the request before encoding (``CourierRequest/payload``
///    is a ``Value``) and the response after decoding (``CourierResponse/value`` is set): common parameters,
///    auth, caching, retry, validation, logging.
/// 2. The codec stage (named `codec`): encodes the payload with the request's format, decodes the response by
///    its `Content-Type` (or the endpoint's expected format).
/// 3. ``InterceptorPhase/network`` interceptors see the encoded bytes: signing, encryption, compression.
/// 4. The transport.
///
/// So on the way out: application (global → module → endpoint) → encoding → network (global → module →
/// endpoint) → transport; on the way back the exact reverse.
///
/// ```swift
/// struct AddVersionHeader: Interceptor {
///     var version: String
///     func intercept(_ request: CourierRequest, context: InterceptorContext,
///                    next: InterceptorNext) async throws -> CourierResponse {
///         var request = request
///         request.head.headerFields[.init("X-App-Version")!] = version
///         return try await next(request)
///     }
/// }
/// ```
public protocol Interceptor: Sendable {
    /// The name shown in chain listings and traces (default: the type's name).
    var name: String { get }
    /// Where the interceptor sits relative to the codec stage (default ``InterceptorPhase/application``).
    var phase: InterceptorPhase { get }
    /// Handles one request.
    func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> CourierResponse
}

extension Interceptor {
    public var name: String { String(describing: Self.self) }
    public var phase: InterceptorPhase { .application }
}

/// Which side of the codec stage an interceptor runs on.
public enum InterceptorPhase: Int, Sendable, Comparable, CaseIterable {
    /// Before encoding and after decoding: sees ``Value``s.
    case application
    /// After encoding and before decoding: sees bytes.
    case network

    public static func < (lhs: InterceptorPhase, rhs: InterceptorPhase) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The rest of the chain, as seen by one interceptor. Call it to pass the request on.
///
/// ```swift
/// let response = try await next(request)
/// ```
public struct InterceptorNext: Sendable {
    private let run: @Sendable (CourierRequest) async throws -> CourierResponse

    /// Wraps a function (for tests of a single interceptor).
    public init(_ run: @escaping @Sendable (CourierRequest) async throws -> CourierResponse) {
        self.run = run
    }

    /// Sends `request` through the rest of the chain.
    public func callAsFunction(_ request: CourierRequest) async throws -> CourierResponse {
        try await run(request)
    }
}

/// What an interceptor knows about the call it handles. Deliberately small: configuration lives in the
/// interceptors themselves.
///
/// ```swift
/// context.logger.info("calling", metadata: ["call": "\(context.callID)", "module": "\(context.module.name)"])
/// ```
public struct InterceptorContext: Sendable {
    /// The call's identifier.
    public var callID: CallID
    /// The endpoint being called.
    public var endpoint: Endpoint
    /// The endpoint's module.
    public var module: APIModule { endpoint.module }
    /// The client's codecs (for interceptors that re-encode bodies).
    public var codecs: CodecSet
    /// The client's logger, with the call id in its metadata.
    public var logger: Logger
    /// The clock interceptors should use for delays and timing (injectable for tests).
    public var clock: any Clock<Duration>
    /// Set by the ``Client`` so work started with ``startBackgroundWork(_:)`` is tracked and cancellable.
    var backgroundStarter: BackgroundStarter?
    /// Set by the ``Client``: where the call's transfer progress is published (``Call/progress``).
    var progress: ProgressChannel?

    /// Publishes `progress` on the call's handle (``Call/progress``); reports that go backwards are dropped.
    /// The pipeline reports streamed bodies itself; a stage that moves bytes of its own can report too.
    public func reportProgress(_ progress: TransferProgress) {
        self.progress?.report(progress)
    }

    /// A context (for tests of a single interceptor).
    public init(
        callID: CallID = .next(), endpoint: Endpoint, codecs: CodecSet = .standard,
        logger: Logger = Logger(label: "courier", factory: { _ in SwiftLogNoOpLogHandler() }),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.callID = callID
        self.endpoint = endpoint
        self.codecs = codecs
        self.logger = logger
        self.clock = clock
    }

    /// Starts `work` in the background, outliving this call, as work of the call's client: while it runs it
    /// is listed in ``Client/runningCalls`` under a new ``CallID`` of the same module (endpoint name suffixed
    /// with ` (background)`), and ``Client/cancel(_:)``, ``Client/cancelAll(module:)`` and
    /// ``Client/cancelAll()`` cancel it. Use it for refreshes and prefetches an interceptor starts on its own
    /// (the cache's stale-while-revalidate does). Outside a client (a context built by hand in a test) it is
    /// a plain unstructured task.
    ///
    /// ```swift
    /// context.startBackgroundWork {
    ///     if let fresh = try? await next(request) { store(fresh) }
    /// }
    /// ```
    ///
    /// - Returns: the task, to await or cancel it directly.
    @discardableResult
    public func startBackgroundWork(_ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if let backgroundStarter { return backgroundStarter.start(module.name, endpoint.name, work) }
        return Task { await work() }
    }

    /// The error context for this call (module, endpoint, call id).
    public var errorContext: CourierError.Context {
        CourierError.Context(module: module.name, endpoint: endpoint.name, callID: callID)
    }

    /// The module's business failure in `response`, if the module has a ``BusinessRule`` and the decoded
    /// value carries a failure code.
    public func businessFailure(in response: CourierResponse) -> BusinessFailure? {
        guard let rule = module.businessRule, let value = response.value else { return nil }
        return rule.failure(in: value)
    }
}

/// How a ``Client`` tracks background work started by its interceptors (see
/// ``InterceptorContext/startBackgroundWork(_:)``).
struct BackgroundStarter: Sendable {
    var start: @Sendable (_ module: String, _ endpoint: String, _ work: @escaping @Sendable () async -> Void)
        -> Task<Void, Never>
}
