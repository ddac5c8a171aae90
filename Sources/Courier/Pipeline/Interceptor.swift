public import Logging
import Synchronization

/// One stage of the pipeline, seeing both directions: it receives the request and a ``InterceptorNext``,
/// may change the request, awaits `next`, and may change the response or the error on the way back. It can
/// answer without calling `next` (a cache) or call `next` more than once (a retry).
///
/// ## The order of a call: by role, then by scope
///
/// Every call passes the same fixed sequence of roles, whatever scope an interceptor was registered in. An
/// interceptor declares its ``role``; within one role, the client's (global) interceptors come first, then
/// the module's, then the endpoint's, each list in its own order. The built-in stages (in *italics* below)
/// are always there, at fixed places:
///
/// ```text
///  caller ─▶ observation ─▶ result ─▶ shaping ─▶ cache ─▶ validation ─▶ resilience ─▶ routing ─▶ routing*
///                                                                                                  │
///  transport ◀─ network ◀─ codec* ◀─ errorMapping* ◀──────────────────────────────────────────────────┘
/// ```
///
/// | Role | Sees | Built-in interceptors |
/// |---|---|---|
/// | ``InterceptorRole/observation`` | the call as the caller gets it (outcome after error mapping and typed decoding) and, through ``InterceptorContext/onSend(_:)``, every request as it is sent | `LoggingInterceptor`, `MetricsInterceptor`, `LifecycleInterceptor` |
/// | *`result`* | throws the outcome's error, decodes the typed model (so observers count decoding failures) | built in |
/// | ``InterceptorRole/shaping`` | the payload as a ``Value``: what the request says and who sends it | `CommonParameters`, `BearerAuth`, `ParameterSigning`, ``SetHeaders``, ``RequestID`` |
/// | ``InterceptorRole/cache`` | the request as shaped (parameters and credentials included in its key) | `CacheInterceptor` |
/// | ``InterceptorRole/validation`` | the decoded response of a successful outcome | `SchemaValidation` |
/// | ``InterceptorRole/resilience`` | each attempt's outcome | `RetryInterceptor`, `ConcurrencyLimiter` |
/// | ``InterceptorRole/routing`` | each attempt, before its host is chosen | `FailoverInterceptor` |
/// | *`routing`* | picks the host of every attempt at send time (built in) | built in |
/// | *`errorMapping`* | evaluates each response once: status and business code → ``CourierResponse/failure`` | built in |
/// | *`codec`* | encodes the payload, decodes the body | built in |
/// | ``InterceptorRole/network`` | the bytes as sent and received | the client's `redirects` stage (built in, first, so each hop passes the others again), ``CookieJar``, `Envelope` encryption, `RequestSigning` |
///
/// So a cache registered globally still keys on a module's common parameters and credentials, a global
/// logger logs the request with its auth and signature, and retry and failover move the failing call
/// itself to another host. Stages above `errorMapping` read the mapped outcome
/// (``CourierResponse/failure``) instead of deciding again what counts as a failure.
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
    /// The interceptor's place in the chain (default ``InterceptorRole/shaping``).
    var role: InterceptorRole { get }
    /// What this interceptor does that endpoint and module options may depend on (default: nothing).
    /// `RetryInterceptor` provides `ChainFeature.retry`, so `endpoint.retryPolicy` has an effect only in a
    /// chain that holds one; see ``FeatureOptionKey``.
    var provides: Set<ChainFeature> { get }
    /// Handles one request.
    func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> CourierResponse
}

extension Interceptor {
    public var name: String { String(describing: Self.self) }
    public var role: InterceptorRole { .shaping }
    public var provides: Set<ChainFeature> { [] }
}

/// Where an interceptor sits in every chain, outermost first (see ``Interceptor`` for the diagram).
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
public enum InterceptorRole: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Outermost: logging, metrics, lifecycle. Sees the outcome exactly as the caller gets it.
    case observation
    /// Shapes the request before it is keyed or sent: common parameters, auth, header fields, parameter
    /// signatures. Sees ``Value`` payloads.
    case shaping
    /// Answers from a cache or stores the answer.
    case cache
    /// Checks decoded responses (schemas).
    case validation
    /// Decides whether and when an attempt is made again or waits: retry, concurrency limits.
    case resilience
    /// Influences which host an attempt goes to: failover.
    case routing
    /// After encoding, before decoding: sees the bytes (encryption, signing, cookies). Courier has no
    /// compression stage: the transports inflate `gzip`/`deflate` responses themselves, counting the
    /// inflated bytes against ``TransportOptions/maximumResponseSize`` (a decompression bomb fails as
    /// ``CourierError/Code/responseTooLarge``), and request bodies are sent as encoded.
    case network

    public static func < (lhs: InterceptorRole, rhs: InterceptorRole) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .observation: return "observation"
        case .shaping: return "shaping"
        case .cache: return "cache"
        case .validation: return "validation"
        case .resilience: return "resilience"
        case .routing: return "routing"
        case .network: return "network"
        }
    }
}

/// The rest of the chain, as seen by one interceptor. Call it to pass the request on.
///
/// ```swift
/// let response = try await next(request)
/// ```
public struct InterceptorNext: Sendable {
    private enum Target: Sendable {
        case function(@Sendable (CourierRequest) async throws -> CourierResponse)
        /// The pipeline's own stages: the call's run and the position to run next, held without a closure, so
        /// passing the request on allocates nothing, copies one reference and costs one call.
        case stage(PipelineCall, index: Int)
    }

    private let target: Target

    /// Wraps a function (for tests of a single interceptor).
    public init(_ run: @escaping @Sendable (CourierRequest) async throws -> CourierResponse) {
        target = .function(run)
    }

    /// The rest of `call`'s pipeline from stage `index` on.
    init(_ call: PipelineCall, index: Int) {
        target = .stage(call, index: index)
    }

    /// Sends `request` through the rest of the chain. Runs on the caller's executor until the next stage starts
    /// (`nonisolated(nonsending)`).
    nonisolated(nonsending) public func callAsFunction(_ request: CourierRequest) async throws -> CourierResponse {
        switch target {
        case .function(let run): try await run(request)
        case .stage(let call, let index):
            try await call.pipeline.run(index, request, call)
        }
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
    public var callID: CallID {
        get { box.fields.callID }
        set { uniqueBox().fields.callID = newValue }
    }
    /// The endpoint being called.
    public var endpoint: Endpoint {
        get { box.fields.endpoint }
        set { uniqueBox().fields.endpoint = newValue }
    }
    /// The endpoint's module.
    public var module: APIModule { box.fields.endpoint.module }
    /// The client's codecs (for interceptors that re-encode bodies).
    public var codecs: CodecSet {
        get { box.fields.codecs }
        set { uniqueBox().fields.codecs = newValue }
    }
    /// The client's logger, with the call id in its metadata.
    public var logger: Logger {
        get { box.fields.logger }
        set { uniqueBox().fields.logger = newValue }
    }
    /// The clock interceptors should use for delays and timing (injectable for tests).
    public var clock: any Clock<Duration> {
        get { box.fields.clock }
        set { uniqueBox().fields.clock = newValue }
    }
    /// Set by the ``CourierClient`` so work started with ``startBackgroundWork(_:)`` is tracked and cancellable.
    var backgroundStarter: BackgroundStarter? {
        get { box.fields.backgroundStarter }
        set { uniqueBox().fields.backgroundStarter = newValue }
    }
    /// State shared by every stage of this call (one per call, across retries and replays).
    public var storage: CallStorage { box.fields.storage }
    /// Set by the ``CourierClient`` for typed calls: turns the outcome's value into the caller's model (run by the
    /// built-in `result` stage, so observers see a decoding failure as the call's failure).
    var resultDecoder: (@Sendable (Value) throws -> any Sendable)? {
        get { box.fields.resultDecoder }
        set { uniqueBox().fields.resultDecoder = newValue }
    }
    /// Set by the ``CourierClient``: where the call's transfer progress is published (``Call/progress``).
    var progress: ProgressChannel? {
        get { box.fields.progress }
        set { uniqueBox().fields.progress = newValue }
    }

    /// The context's fields, in one box copied on write (``CopyOnWriteBox``): every stage of a call receives the
    /// context, and copying one reference is much cheaper than copying an endpoint, a logger and a codec set.
    private struct Fields: Sendable {
        var callID: CallID
        var endpoint: Endpoint
        var codecs: CodecSet
        var logger: Logger
        var clock: any Clock<Duration>
        var backgroundStarter: BackgroundStarter? = nil
        let storage: CallStorage
        var resultDecoder: (@Sendable (Value) throws -> any Sendable)? = nil
        var progress: ProgressChannel? = nil
    }

    private var box: CopyOnWriteBox<Fields>

    private mutating func uniqueBox() -> CopyOnWriteBox<Fields> { CopyOnWriteBox.unique(&box) }

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
        box = CopyOnWriteBox(
            Fields(callID: callID, endpoint: endpoint, codecs: codecs, logger: logger, clock: clock, storage: CallStorage()))
    }

    /// Registers `handler` to see every request exactly as the transport is given it (after shaping,
    /// encoding, signing and encryption; once per attempt, redirect hop and replay). Observation stages use it
    /// to log or count what really went out, since they sit outermost.
    ///
    /// ```swift
    /// context.onSend { sent in context.logger.info("→ \(sent.summary)") }
    /// ```
    public func onSend(_ handler: @escaping @Sendable (CourierRequest) -> Void) {
        storage.addSendHandler(handler)
    }

    /// Wraps every stage that runs after this point of the call, and the transport, in `observer` (once per
    /// stage run: a stage inside a retry runs, and is observed, once per attempt). Observation stages use it for
    /// a span or a timing per stage; the observer sees the stage's name and the request it is given, may
    /// change that request (add a propagation header), and must call `next` exactly once.
    ///
    /// ```swift
    /// struct Timing: StageObserver {
    ///     func observe(stage: String, request: CourierRequest, context: InterceptorContext,
    ///                  next: (CourierRequest) async throws -> CourierResponse) async throws -> CourierResponse {
    ///         let start = ContinuousClock.now
    ///         defer { context.logger.trace("\(stage) took \(ContinuousClock.now - start)") }
    ///         return try await next(request)
    ///     }
    /// }
    /// context.observeStages(with: Timing())
    /// ```
    public func observeStages(with observer: some StageObserver) {
        storage.addStageObserver(observer)
        storage.observesStages.store(true, ordering: .releasing)
    }

    /// Tells every ``onSend(_:)`` handler that `request` is being sent.
    func announceSend(_ request: CourierRequest) {
        for handler in storage.sendHandlers { handler(request) }
    }

    /// Starts `work` in the background, outliving this call, as work of the call's client: while it runs it
    /// is listed in ``CourierClient/runningCalls`` under a new ``CallID`` of the same module (endpoint name suffixed
    /// with ` (background)`), and ``CourierClient/cancel(_:)``, ``CourierClient/cancelAll(module:)`` and
    /// ``CourierClient/cancelAll()`` cancel it. Use it for refreshes and prefetches an interceptor starts on its own
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

    /// The business failure in `response` under the endpoint's ``BusinessRule`` (else the module's), if the
    /// decoded value carries a failure code.
    public func businessFailure(in response: CourierResponse) -> BusinessFailure? {
        guard let rule = endpoint.effectiveBusinessRule, let value = response.value else { return nil }
        return rule.failure(in: value)
    }
}

/// State shared by the stages of one call, across its attempts: a stage stores a value under its own key type
/// and a later attempt (or another stage) reads it.
///
/// ```swift
/// enum AttemptCount: CallStorageKey { typealias Value = Int }
/// context.storage[AttemptCount.self, default: 0] += 1
/// ```
public final class CallStorage: Sendable {
    /// Everything behind one lock (one allocation per call instead of one per list).
    private struct State {
        var values: [ObjectIdentifier: any Sendable] = [:]
        var sendHandlers: [@Sendable (CourierRequest) -> Void] = []
        var stageObservers: [any StageObserver] = []
        /// The routing stage's record of every attempt, kept apart from `values` because every call writes it.
        var attempts: [RoutingStage.Attempt] = []
    }
    private let state = Locked(State())
    /// The call's ``InterceptorContext/onSend(_:)`` handlers.
    var sendHandlers: [@Sendable (CourierRequest) -> Void] { state.withLock { $0.sendHandlers } }
    /// The call's stage observers (``InterceptorContext/observeStages(with:)``).
    var stageObservers: [any StageObserver] { state.withLock { $0.stageObservers } }
    func addSendHandler(_ handler: @escaping @Sendable (CourierRequest) -> Void) {
        state.withLock { $0.sendHandlers.append(handler) }
    }
    func addStageObserver(_ observer: any StageObserver) {
        state.withLock { $0.stageObservers.append(observer) }
    }
    /// The call's attempts so far (``RoutingStage/attempts(in:)``).
    var attempts: [RoutingStage.Attempt] { state.withLock { $0.attempts } }
    func addAttempt(_ attempt: RoutingStage.Attempt) {
        state.withLock { $0.attempts.append(attempt) }
    }
    /// Whether ``stageObservers`` has any: read by every stage of every call, so it skips the lock.
    let observesStages = Atomic<Bool>(false)

    /// Empty storage.
    public init() {}

    /// The value stored under `key`, if any.
    public subscript<Key: CallStorageKey>(key: Key.Type) -> Key.Value? {
        get {
            state.withLock { $0.values.stored(key, as: Key.Value.self) }
        }
        set { state.withLock { $0.values[ObjectIdentifier(key)] = newValue } }
    }

    /// The value stored under `key`, or `defaultValue`; a mutation stores the result.
    public subscript<Key: CallStorageKey>(key: Key.Type, default defaultValue: @autoclosure () -> Key.Value) -> Key.Value {
        get { self[key] ?? defaultValue() }
        set { self[key] = newValue }
    }

    /// Changes the value under `key` atomically and returns what `body` returns.
    public func update<Key: CallStorageKey, R>(
        _ key: Key.Type, default defaultValue: Key.Value, _ body: (inout Key.Value) -> R
    ) -> R {
        state.withLock { state in
            var value = state.values.stored(key, as: Key.Value.self) ?? defaultValue
            let result = body(&value)
            state.values[ObjectIdentifier(key)] = value
            return result
        }
    }
}

/// Wraps the stages of a call that run after it is installed (``InterceptorContext/observeStages(with:)``):
/// a span, a timer or a log line per stage, the transport included (stage name `transport`).
public protocol StageObserver: Sendable {
    /// Runs `stage` by calling `next` exactly once with `request` (or a changed copy of it), returning or
    /// rethrowing what `next` gives.
    func observe(
        stage: String, request: CourierRequest, context: InterceptorContext,
        next: (CourierRequest) async throws -> CourierResponse
    ) async throws -> CourierResponse
}

/// A key of ``CallStorage``: a type naming the slot and the type of its value.
public protocol CallStorageKey {
    /// The stored value's type.
    associatedtype Value: Sendable
}

/// How a ``CourierClient`` tracks background work started by its interceptors (see
/// ``InterceptorContext/startBackgroundWork(_:)``).
struct BackgroundStarter: Sendable {
    /// The client (weak: a call's context must not keep it alive), and the call's endpoint tags. Held as they are
    /// rather than captured by a closure, which every call would allocate.
    weak var client: CourierClient?
    let tags: Set<String>

    /// Starts `work` as background work of `module` and `endpoint` (a plain task once the client is gone).
    func start(_ module: String, _ endpoint: String, _ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        guard let client else { return Task { await work() } }
        return client.startBackground(module: module, endpoint: endpoint, tags: tags, work)
    }
}
