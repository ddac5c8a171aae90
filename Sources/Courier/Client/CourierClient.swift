#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes
public import Logging

/// Sends ``Endpoint``s through their interceptor chain and transport, returning a raw ``Value`` or a typed
/// model with the response metadata — or one readable ``CourierError``.
///
/// Every call gets a ``CallID``; cancel one call, every call of a module, or all calls. Swift task
/// cancellation of the caller propagates into the transport. The client is `Sendable` and safe to share.
///
/// ```swift
/// let client = CourierClient(configuration: .init(interceptors: [RequestID()]))
/// let reply = try await client.send(.user(7, in: users), decoding: Envelope<User>.self)
/// print(reply.value.data.name, reply.metadata.status, reply.metadata.duration)
///
/// let raw = try await client.send(.user(7, in: users))          // Reply<Value>
/// print(raw.value["data"]?["name"] ?? "none")
///
/// let call = client.dispatch(.user(8, in: users))               // start now, cancel later
/// client.cancelAll(module: "user")
/// ```
///
/// Calls are cancelled one by one (``cancel(_:)``), by module (``cancelAll(module:)``), by an
/// ``Endpoint/tags`` group (``cancelAll(tag:)``) or all at once.
public final class CourierClient: Sendable {
    /// CourierClient-wide settings.
    public struct Configuration: Sendable {
        /// Interceptors for every call, first within their role.
        public var interceptors: [any Interceptor]
        /// The codecs, one per format.
        public var codecs: CodecSet
        /// The transport timeout when an endpoint sets none.
        public var defaultTimeout: Duration?
        /// The largest response body accepted.
        public var maximumResponseSize: Int
        /// The logger (calls log at debug level, with secrets redacted).
        public var logger: Logger
        /// The clock stages use for delays and timing.
        public var clock: any Clock<Duration>
        /// How calls follow redirects unless their module or endpoint sets a policy (default: follow up to
        /// 10 hops). See ``RedirectPolicy``.
        public var redirectPolicy: RedirectPolicy = .default
        /// Which header field values traces (``CallOptions/trace``) hide: the default ``RedactionPolicy``
        /// (tokens, secrets, passwords, sessions, auth, keys, signatures, cookies, credentials).
        public var redaction: RedactionPolicy = RedactionPolicy()
        /// How typed calls (``CourierClient/send(_:decoding:options:)``) decode models: key, date and data
        /// strategies, lenient numbers. ``CallOptions/decoder`` replaces it for one call.
        ///
        /// ```swift
        /// var configuration = CourierClient.Configuration()
        /// configuration.decoder.keyStrategy = .convertFromSnakeCase      // "user_id" → userId
        /// configuration.decoder.dateStrategy = .millisecondsSince1970
        /// ```
        public var decoder = ValueDecoder()

        /// Defaults: no interceptors, the standard codecs, 60 s timeout, 64 MiB responses, no logging.
        public init(
            interceptors: [any Interceptor] = [], codecs: CodecSet = .standard,
            defaultTimeout: Duration? = .seconds(60), maximumResponseSize: Int = 64 << 20,
            logger: Logger = Logger(label: "courier", factory: { _ in SwiftLogNoOpLogHandler() }),
            clock: any Clock<Duration> = ContinuousClock(), redaction: RedactionPolicy = RedactionPolicy()
        ) {
            self.interceptors = interceptors
            self.codecs = codecs
            self.defaultTimeout = defaultTimeout
            self.maximumResponseSize = maximumResponseSize
            self.logger = logger
            self.clock = clock
            self.redaction = redaction
        }
    }

    /// The transport every call ends in.
    public let transport: any Transport
    /// The configuration.
    public let configuration: Configuration
    /// The redirect stage with the client's policy, then the configuration's interceptors: built once.
    private let globalInterceptors: [any Interceptor]

    private struct Entry {
        var module: String
        var endpoint: String
        var tags: Set<String> = []
        /// Cancels the call's task.
        var handle: CancelHandle

        func cancel() { handle.cancel() }
    }

    private let calls = Locked<[CallID: Entry]>([:])
    /// Calls running under a ``DuplicateCallPolicy`` other than `.allow`, by identity.
    private let identical = Locked<[String: (id: CallID, outcome: any Sendable)]>([:])
    private let shapes = Locked<[ObjectIdentifier: ValueShape]>([:])
    /// Chains already built for endpoints without interceptors of their own (``pipeline(for:)``).
    private let chains = Locked<[ChainKey: ChainEntry]>([:])
    /// The last endpoints' parsed URLs (``target(of:on:)``).
    private let targets = Locked<[TargetKey: Target]>([:])

    /// A client over `transport` (URLSession by default).
    public init(transport: any Transport = FoundationTransport(), configuration: Configuration = Configuration()) {
        self.transport = transport
        self.configuration = configuration
        globalInterceptors = [RedirectInterceptor(policy: configuration.redirectPolicy)] + configuration.interceptors
    }

    // MARK: - Sending

    /// Sends `endpoint` and returns the decoded body as a raw ``Value``.
    public func send(_ endpoint: Endpoint, options: CallOptions = CallOptions()) async throws -> Reply<Value> {
        try await startRaw(endpoint, options: options, immediately: !Task.isCancelled).reply
    }

    /// Sends `endpoint` and decodes the body into `type`, with ``CallOptions/decoder`` or else the client's
    /// ``Configuration/decoder``.
    public func send<T: Decodable & Sendable>(
        _ endpoint: Endpoint, decoding type: T.Type, options: CallOptions = CallOptions()
    ) async throws -> Reply<T> {
        try await startTyped(endpoint, decoding: type, options: options, immediately: !Task.isCancelled).reply
    }

    /// Sends `endpoint` and decodes only the value at `path` (dotted keys and indices: `data.items`,
    /// `data.users[0]`, `data.users.0`) into `type`: no envelope type needed. A response with nothing at
    /// `path` fails with ``CourierError/Code/missingValue``, naming the path.
    ///
    /// ```swift
    /// let users = try await client.send(.users, decoding: [User].self, at: "data.items").value
    /// ```
    public func send<T: Decodable & Sendable>(
        _ endpoint: Endpoint, decoding type: T.Type, at path: String, options: CallOptions = CallOptions()
    ) async throws -> Reply<T> {
        try await startTyped(endpoint, decoding: type, at: path, options: options, immediately: !Task.isCancelled).reply
    }

    /// Starts `endpoint` now and returns a handle to await or cancel it.
    public func dispatch(_ endpoint: Endpoint, options: CallOptions = CallOptions()) -> Call<Value> {
        startRaw(endpoint, options: options, immediately: false)
    }

    private func startRaw(_ endpoint: Endpoint, options: CallOptions, immediately: Bool) -> Call<Value> {
        start(endpoint, options: options, shape: endpoint.responseShape, immediately: immediately) { $0 }
    }

    /// Starts `endpoint` now, decoding into `type`, and returns a handle to await or cancel it.
    public func dispatch<T: Decodable & Sendable>(
        _ endpoint: Endpoint, decoding type: T.Type, options: CallOptions = CallOptions()
    ) -> Call<T> {
        startTyped(endpoint, decoding: type, options: options, immediately: false)
    }

    private func startTyped<T: Decodable & Sendable>(
        _ endpoint: Endpoint, decoding type: T.Type, options: CallOptions, immediately: Bool
    ) -> Call<T> {
        let decoder = options.decoder ?? configuration.decoder
        let shape = endpoint.responseShape ?? self.shape(of: type, keys: decoder.keyStrategy)
        return start(
            endpoint, options: options, shape: shape, variant: { Self.variant(of: decoder) }, immediately: immediately
        ) { value in
            try decoder.decode(T.self, from: value)
        }
    }

    /// Starts `endpoint` now, decoding the value at `path` into `type` (see
    /// ``send(_:decoding:at:options:)``), and returns a handle to await or cancel it.
    public func dispatch<T: Decodable & Sendable>(
        _ endpoint: Endpoint, decoding type: T.Type, at path: String, options: CallOptions = CallOptions()
    ) -> Call<T> {
        startTyped(endpoint, decoding: type, at: path, options: options, immediately: false)
    }

    private func startTyped<T: Decodable & Sendable>(
        _ endpoint: Endpoint, decoding type: T.Type, at path: String, options: CallOptions, immediately: Bool
    ) -> Call<T> {
        let decoder = options.decoder ?? configuration.decoder
        let components = PathComponent.parse(path)
        let shape = endpoint.responseShape
            ?? ValueShape.nesting(self.shape(of: type, keys: decoder.keyStrategy), at: components)
        let variant = { Self.variant(of: decoder) + " at " + PathComponent.render(components) }
        return start(endpoint, options: options, shape: shape, variant: variant, immediately: immediately) { value in
            try decoder.decode(T.self, from: value, at: components)
        }
    }

    /// What sets two typed calls of one endpoint and type apart when they share an exchange
    /// (``DuplicateCallPolicy/share``): how they decode.
    private static func variant(of decoder: ValueDecoder) -> String {
        "\(decoder.keyStrategy) \(decoder.dateStrategy) \(decoder.dataStrategy) \(decoder.lenientNumbers)"
            + (decoder.userInfo.isEmpty ? "" : " userInfo \(decoder.userInfo.keys.map(\.rawValue).sorted())")
    }

    /// Starts a call. `immediately`: the call's task starts on the caller's thread and runs until its first
    /// real suspension (`Task.immediate`), so a call that never waits (a cache hit, an in-memory answer) costs
    /// no thread hop; `send` uses it (its caller awaits the reply at once), `dispatch` does not (it returns the
    /// handle before any of the call runs).
    func start<T: Sendable>(
        _ endpoint: Endpoint, options: CallOptions, shape: ValueShape?, variant: () -> String = { "" },
        immediately: Bool = false, decode: @escaping @Sendable (Value) throws -> T
    ) -> Call<T> {
        let id = CallID.next()
        let handle = CancelHandle()
        // A sent call's handle never leaves `send`, so nobody can subscribe to its progress: no channel.
        let progress = immediately ? nil : ProgressChannel()
        // Register before the task starts, so its own removal always comes after the insertion.
        calls.withLock {
            $0[id] = Entry(module: endpoint.module.name, endpoint: endpoint.name, tags: endpoint.tags,
                           handle: handle)
        }
        let identity = endpoint.duplicatePolicy == .allow ? nil : identity(of: endpoint, decoding: T.self, variant: variant())
        // The reply, erased (see `immediateTask`); `Call` casts it back.
        let body: @Sendable () async throws -> any Sendable
        if let identity, endpoint.duplicatePolicy == .share,
           let leader = identical.withLock({ $0[identity]?.outcome as? SharedOutcome<T> })
        {
            // Share the running exchange: wait for its reply (cancelling this call stops only the wait).
            body = {
                defer { self.end(id, progress: progress, identity: nil) }
                var shared = try await leader.wait()
                shared.metadata.callID = id
                return shared
            }
        } else {
            let previous = identity.flatMap { key in identical.withLock { $0[key]?.id } }
            if endpoint.duplicatePolicy == .cancelPrevious, let previous { cancel(previous) }
            // Only a call that identical calls may share publishes its outcome.
            let outcome = identity.map { _ in SharedOutcome<T>() }
            // Registered before the task starts, so the task's own removal always comes after it.
            if let identity, let outcome { identical.withLock { $0[identity] = (id, outcome) } }
            body = {
                defer { self.end(id, progress: progress, identity: identity) }
                do {
                    return Self.deliver(
                        try await self.perform(id, endpoint, options: options, shape: shape, progress: progress,
                                               decode: decode),
                        to: outcome)
                } catch {
                    throw Self.deliver(error, to: outcome)
                }
            }
        }
        let priority = endpoint.priority.taskPriority
        let task = immediately ? immediateTask(priority: priority, body) : Task(priority: priority, operation: body)
        handle.attach(task)
        return Call(id: id, task: task, progressChannel: progress)
    }

    /// The end of call `id`: it leaves the running calls (and the identical calls, under `identity`) and its
    /// progress ends. Out of line, like ``deliver(_:to:)``: the call's task frame would otherwise hold the
    /// temporaries of both for the whole call (about 2 KB of task memory).
    @inline(never)
    private func end(_ id: CallID, progress: ProgressChannel?, identity: String?) {
        _ = calls.withLock { $0.removeValue(forKey: id) }
        progress?.finish()
        if let identity {
            identical.withLock { if $0[identity]?.id == id { $0[identity] = nil } }
        }
    }

    /// Hands a call's reply to the identical calls that wait for it (`outcome`, when any may) and returns it,
    /// erased for the call's task. Out of line, like ``end(_:progress:identity:)``: inlined, its `Result` and the
    /// copies of the reply would sit in the call's task frame (1,568 bytes instead of 496, measured).
    @inline(never)
    private static func deliver<T: Sendable>(_ reply: Reply<T>, to outcome: SharedOutcome<T>?) -> any Sendable {
        outcome?.complete(.success(reply))
        return reply
    }

    /// Hands a call's error to the identical calls that wait for it and returns it.
    @inline(never)
    private static func deliver<T>(_ error: any Error, to outcome: SharedOutcome<T>?) -> any Error {
        outcome?.complete(.failure(error))
        return error
    }

    /// What makes two calls identical: endpoint, method, URL, body, the decoded type and how it is decoded
    /// (`variant`: the decoder's strategies, a key path).
    private func identity<T>(of endpoint: Endpoint, decoding type: T.Type, variant: String) -> String? {
        guard let request = try? makeRequest(for: endpoint) else { return nil }
        var text = "\(endpoint.module.name)/\(endpoint.name) \(request.head.method.rawValue) "
            + "\(request.head.authority ?? "")\(request.head.path ?? "") \(ObjectIdentifier(type)) \(variant)"
        if let payload = request.payload {
            // The exact JSON text (a payload JSON cannot hold never shares).
            guard let exact = try? JSONCodec().encode(payload, hints: CodingHints()), exact.count <= 64 << 10 else { return nil }
            text += " " + exact.base64EncodedString()
        }
        if let body = request.body {
            // Bodies are compared whole; a large one never shares.
            guard body.count <= 64 << 10 else { return nil }
            text += " " + body.base64EncodedString()
        }
        return text
    }

    /// Starts `work` as a tracked background task of `module` (see ``InterceptorContext/startBackgroundWork(_:)``).
    func startBackground(
        module: String, endpoint: String, tags: Set<String>, _ work: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        let id = CallID.next()
        let handle = CancelHandle()
        calls.withLock {
            $0[id] = Entry(module: module, endpoint: endpoint + " (background)", tags: tags, handle: handle)
        }
        let task = Task {
            defer { _ = self.calls.withLock { $0.removeValue(forKey: id) } }
            await work()
        }
        handle.attach(task)
        return task
    }

    /// `T`'s shape with its member names as the key strategy reads them (`userId` → `user_id` when
    /// converting from snake case), so formats guided by the shape (XML) find the members.
    private func shape<T: Decodable>(of type: T.Type, keys: KeyCodingStrategy) -> ValueShape {
        let key = ObjectIdentifier(type)
        let base: ValueShape
        if let known = shapes.withLock({ $0[key] }) {
            base = known
        } else {
            base = ValueShape(of: type)
            shapes.withLock { $0[key] = base }
        }
        return keys == .convertFromSnakeCase ? base.mappingKeys(KeyCodingStrategy.snakeCase(fromCamelCase:)) : base
    }

    /// The chain `endpoint`'s calls go through.
    public func pipeline(for endpoint: Endpoint) -> Pipeline {
        // A chain is an immutable value built from the module's and the endpoint's interceptor lists. Endpoints
        // are usually made afresh per call, but the module's list is the same array every time: a chain for an
        // endpoint without interceptors of its own is kept under the identity of the module's list (the kept
        // entry holds that array, so no other array can take its address while the entry lives).
        guard endpoint.interceptors.isEmpty else { return buildPipeline(for: endpoint) }
        let moduleList = endpoint.module.interceptors
        let key = ChainKey(
            module: moduleList.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) },
            redirectPolicy: endpoint.redirectPolicy)
        if let kept = chains.withLock({ $0[key] }) { return kept.pipeline }
        let pipeline = buildPipeline(for: endpoint)
        chains.withLock { kept in
            // Modules are few; a program that makes modules without end only rebuilds its chains.
            if kept.count >= 64 { kept.removeAll(keepingCapacity: true) }
            kept[key] = ChainEntry(moduleInterceptors: moduleList, pipeline: pipeline)
        }
        return pipeline
    }

    /// What a kept chain was built from: the address of the module's interceptor list and the endpoint's
    /// redirect policy (the other inputs are the client's own).
    private struct ChainKey: Hashable {
        let module: UInt
        let redirectPolicy: RedirectPolicy?
    }

    /// A kept chain and the module interceptor list whose address is its key (held so the address stays its).
    private struct ChainEntry: Sendable {
        let moduleInterceptors: [any Interceptor]
        let pipeline: Pipeline
    }

    private func buildPipeline(for endpoint: Endpoint) -> Pipeline {
        // The redirect stage is the first network stage, so each hop passes the network stages again.
        let global = endpoint.redirectPolicy.map { [RedirectInterceptor(policy: $0)] + configuration.interceptors }
            ?? globalInterceptors
        return Pipeline(
            global: global, module: endpoint.module.interceptors,
            endpoint: endpoint.interceptors, transport: transport,
            transportOptions: TransportOptions(
                timeout: configuration.defaultTimeout, maximumResponseSize: configuration.maximumResponseSize))
    }

    /// Builds the chain's first request for `endpoint` (URL, header fields, body, formats).
    package func makeRequest(for endpoint: Endpoint) throws -> CourierRequest {
        try makeRequestAndURL(for: endpoint).request
    }

    /// ``makeRequest(for:)`` and the URL it goes to (see `Target.requestURL`).
    private func makeRequestAndURL(for endpoint: Endpoint) throws -> (request: CourierRequest, url: URL?) {
        // One read of the service's current host: the URL and the base the routing stage moves from agree.
        let baseURL = endpoint.module.service.currentBaseURL
        let target = try target(of: endpoint, on: baseURL)
        var head = HTTPRequest(
            method: endpoint.method, scheme: target.scheme, authority: target.authority, path: target.path)
        head.headerFields = endpoint.module.headers
        for field in endpoint.headers {
            head.headerFields[field.name] = nil
        }
        head.headerFields.append(contentsOf: endpoint.headers)
        var hints = endpoint.requestHints
        if let message = endpoint.requestMessage { hints.messageType = message }
        var responseHints = CodingHints()
        responseHints.messageType = endpoint.responseMessage
        responseHints.shape = endpoint.responseShape
        let request = CourierRequest(
            head: head, payload: endpoint.rawBody == nil && endpoint.bodyStream == nil ? endpoint.body : nil,
            body: endpoint.bodyStream == nil ? endpoint.rawBody : nil,
            format: endpoint.requestFormat, hints: hints, responseFormat: endpoint.responseFormat,
            responseHints: responseHints, timeout: endpoint.timeout,
            isReplayable: endpoint.isReplayable && (endpoint.bodyStream?.isReplayable ?? true),
            baseURL: endpoint.isAbsolute ? nil : baseURL,
            bodyStream: endpoint.bodyStream)
        return (request, target.requestURL)
    }

    /// Where an endpoint's requests go: the request head's scheme, authority and path, and the URL they spell
    /// (``ResponseMetadata/url`` of a call that was not redirected).
    private struct Target: Sendable {
        let scheme: String?
        let authority: String
        let path: String
        /// The endpoint's URL when its text is the head's (the usual case), else the URL the head spells.
        let requestURL: URL?

        init(url: URL) {
            scheme = url.scheme
            authority = url.courierAuthority
            // The path and query keep the percent-encoding they were given (`%2F` stays `%2F`): `URL.path` would
            // decode them, and re-encoding cannot tell an escaped slash from a separator.
            // `url.absoluteString` is the text as parsed (invalid characters already percent-encoded); the target
            // starts at the first `/`, `?` or `#` after `scheme://` (an authority holds none of them).
            path = CourierClient.requestTarget(ofAbsolute: url.absoluteString)
            if let scheme {
                let text = "\(scheme)://\(authority)\(path)"
                requestURL = text == url.absoluteString ? url : URL(string: text)
            } else {
                requestURL = nil
            }
        }
    }

    /// What an endpoint's ``Target`` is made of.
    private struct TargetKey: Hashable, Sendable {
        let baseURL: URL
        let path: String
        let query: [QueryItem]
    }

    /// `endpoint`'s ``Target`` on `baseURL`. Parsing a URL is the dearest step of building a request, and a
    /// program calls the same few URLs again and again: the last targets are kept (at most 256; a program that
    /// calls URLs without end only parses each, as it would without them).
    private func target(of endpoint: Endpoint, on baseURL: URL) throws -> Target {
        let key = TargetKey(baseURL: baseURL, path: endpoint.path, query: endpoint.query)
        if let kept = targets.withLock({ $0[key] }) { return kept }
        let target = Target(url: try endpoint.url(on: baseURL))
        targets.withLock { kept in
            if kept.count >= 256 { kept.removeAll(keepingCapacity: true) }
            kept[key] = target
        }
        return target
    }

    /// The request target (`/path?query`, no fragment; `/` for an empty path) of an absolute URL's text: what
    /// follows `scheme://authority`.
    static func requestTarget(ofAbsolute text: String) -> String {
        let utf8 = text.utf8
        var index = utf8.startIndex
        if let colon = utf8.firstIndex(of: UInt8(ascii: ":")) {
            index = utf8.index(after: colon)
            for _ in 0..<2 where index != utf8.endIndex && utf8[index] == UInt8(ascii: "/") {
                index = utf8.index(after: index)
            }
        }
        while index != utf8.endIndex, utf8[index] != UInt8(ascii: "/"), utf8[index] != UInt8(ascii: "?"),
            utf8[index] != UInt8(ascii: "#")
        {
            index = utf8.index(after: index)
        }
        var target = RequestTarget(String(text[index...]))
        target.fragment = nil
        return target.text
    }

    /// One call's state between building its request and reading its reply (``perform(_:_:options:shape:progress:decode:)``).
    private struct PreparedCall {
        var logger: Logger
        var context: InterceptorContext
        var errorContext: CourierError.Context
        let started: ContinuousClock.Instant
        let startDate: Date
        let recorder: TraceRecorder?
        /// Its summary goes into the error context only when the call fails.
        var firstRequest: CourierRequest?
        var url: URL?
        var pipeline: Pipeline?
        /// What stopped the preparation (a URL that does not parse, an unmet requirement).
        var preparationError: (any Error)?
    }

    /// Runs one call. The async part holds only what lives across the chain's `await`: the work before and after
    /// runs in synchronous functions of their own, whose locals stay on the thread's stack instead of the task's
    /// frame (a task's frames past its first ~1 KB are `malloc`ed, and every stage's suspended call keeps
    /// its frame).
    @inline(never)
    nonisolated(nonsending) private func perform<T: Sendable>(
        _ id: CallID, _ endpoint: Endpoint, options: CallOptions, shape: ValueShape?, progress: ProgressChannel?,
        decode: @escaping @Sendable (Value) throws -> T
    ) async throws -> Reply<T> {
        var call = prepare(id, endpoint, options: options, shape: shape, progress: progress, decode: decode)
        do {
            guard let pipeline = call.pipeline, let request = call.firstRequest else { throw preparationError(call) }
            let response = try await pipeline.execute(request, context: call.context, recorder: call.recorder)
            return try finish(response, &call, decode: decode)
        } catch {
            throw failure(error, call)
        }
    }

    /// Everything before the chain runs: the context, the first request and the chain. A failure is kept as
    /// `preparationError` (the call then has no chain; ``preparationError(_:)`` hands it to the caller).
    @inline(never)
    private func prepare<T: Sendable>(
        _ id: CallID, _ endpoint: Endpoint, options: CallOptions, shape: ValueShape?, progress: ProgressChannel?,
        decode: @escaping @Sendable (Value) throws -> T
    ) -> PreparedCall {
        var logger = configuration.logger
        // A logger that writes nothing needs no metadata (the usual default: swift-log's no-op handler).
        if !(logger.handler is SwiftLogNoOpLogHandler) { logger[metadataKey: "call"] = "\(id)" }
        var context = InterceptorContext(
            callID: id, endpoint: endpoint, codecs: configuration.codecs, logger: logger, clock: configuration.clock)
        if let progress { context.progress = progress }
        context.backgroundStarter = BackgroundStarter(client: self, tags: endpoint.tags)
        if T.self != Value.self { context.resultDecoder = { try decode($0) } }
        var call = PreparedCall(
            logger: logger, context: context, errorContext: context.errorContext, started: ContinuousClock().now,
            startDate: Date(), recorder: options.trace ? TraceRecorder(redaction: configuration.redaction) : nil)
        do {
            var (request, url) = try makeRequestAndURL(for: endpoint)
            if request.responseHints.shape == nil { request.responseHints.shape = shape }
            if let timeout = options.timeout { request.timeout = timeout }
            call.firstRequest = request
            call.url = url
            logger.debug("send", metadata: ["module": "\(endpoint.module.name)", "endpoint": "\(endpoint.name)",
                                            "request": "\(request.summary)"])
            let pipeline = pipeline(for: endpoint)
            if let unmet = pipeline.unmetRequirements(of: endpoint).first {
                throw CourierError(
                    .invalidConfiguration,
                    detail: "\(endpoint.module.name).\(endpoint.name) sets \(unmet.option), but no interceptor in its chain "
                        + "provides \(unmet.feature): add \(unmet.provider) to the client's, the module's or the endpoint's "
                        + "interceptors, or unset \(unmet.option)")
            }
            call.pipeline = pipeline
        } catch {
            call.preparationError = error
        }
        return call
    }

    /// The error that stopped ``prepare(_:_:options:shape:progress:decode:)``.
    @inline(never)
    private func preparationError(_ call: PreparedCall) -> any Error {
        call.preparationError ?? CourierError(.invalidConfiguration, detail: "the call was not prepared")
    }

    /// The reply from the chain's response: the decoded value and the metadata.
    @inline(never)
    private func finish<T: Sendable>(
        _ response: CourierResponse, _ call: inout PreparedCall, decode: @Sendable (Value) throws -> T
    ) throws -> Reply<T> {
        call.errorContext.status = Int(response.head.status.code)
        let decoded: T
        if let typed = response.decoded as? T {
            decoded = typed
        } else if let value = (response.value ?? .null) as? T {
            decoded = value
        } else {
            // A stage above `result` replaced the response: decode it here.
            do { decoded = try decode(response.value ?? .null) } catch {
                throw CourierError.wrap(error, as: .typeMismatch)
            }
        }
        let redirectedTo = response.redirects.last?.to
        let metadata = ResponseMetadata(
            callID: call.context.callID, status: response.head.status, headerFields: response.head.headerFields,
            body: response.body, format: response.format, source: response.source, startDate: call.startDate,
            duration: ContinuousClock().now - call.started, trace: call.recorder?.trace,
            cacheRejection: response.cacheRejection, redirects: response.redirects,
            url: redirectedTo ?? call.url)
        call.logger.debug("done", metadata: ["status": "\(response.head.status.code)",
                                             "duration": "\(metadata.duration)", "source": "\(response.source)"])
        return Reply(value: decoded, metadata: metadata)
    }

    /// The call's error: wrapped once, with the call's context, the first request's summary and the trace.
    @inline(never)
    private func failure(_ error: any Error, _ call: PreparedCall) -> any Error {
        var errorContext = call.errorContext
        if let firstRequest = call.firstRequest { errorContext.request = firstRequest.summary }
        var failure = CourierError.wrap(error, as: .transportFailure)
        if failure.category == .transport, Task.isCancelled { failure = CourierError(.cancelled, underlying: error) }
        failure = failure.adding(errorContext)
        if let recorder = call.recorder { failure.trace = recorder.trace }
        call.logger.debug("failed", metadata: ["error": "\(failure)"])
        return failure
    }

    // MARK: - Cancellation

    /// Cancels the call with `id`; returns whether it was running.
    @discardableResult
    public func cancel(_ id: CallID) -> Bool {
        guard let entry = calls.withLock({ $0[id] }) else { return false }
        entry.cancel()
        return true
    }

    /// Cancels every running call of the module named `module`; returns how many.
    @discardableResult
    public func cancelAll(module: String) -> Int {
        let entries = calls.withLock { $0.values.filter { $0.module == module } }
        for entry in entries { entry.cancel() }
        return entries.count
    }

    /// Cancels every running call whose endpoint carries `tag` in its ``Endpoint/tags`` (a cancellation
    /// group across modules: `"checkout"`, `"screen:profile"`); returns how many.
    ///
    /// ```swift
    /// var endpoint = Endpoint.user(id: 7)
    /// endpoint.tags = ["screen:profile"]
    /// let call = client.dispatch(endpoint)
    /// client.cancelAll(tag: "screen:profile")   // the user left the screen
    /// ```
    @discardableResult
    public func cancelAll(tag: String) -> Int {
        let entries = calls.withLock { $0.values.filter { $0.tags.contains(tag) } }
        for entry in entries { entry.cancel() }
        return entries.count
    }

    /// Cancels every running call; returns how many.
    @discardableResult
    public func cancelAll() -> Int {
        let entries = calls.withLock { Array($0.values) }
        for entry in entries { entry.cancel() }
        return entries.count
    }

    /// The calls running now: id, module and endpoint names.
    public var runningCalls: [(id: CallID, module: String, endpoint: String)] {
        calls.withLock { $0.map { ($0.key, $0.value.module, $0.value.endpoint) }.sorted { $0.id < $1.id } }
    }
}

/// Cancels a task that may not exist yet: a cancel before ``attach(_:)`` is applied on attach.
final class CancelHandle: Sendable {
    /// The task itself rather than a closure that cancels it: one allocation less per call.
    private let state = Locked<(task: (any CancellableTask)?, cancelled: Bool)>((nil, false))

    func attach(_ task: some CancellableTask) {
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state -> (any CancellableTask)? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}

/// A task a ``CancelHandle`` can cancel, whatever its result type.
protocol CancellableTask: Sendable {
    func cancel()
}

extension Task: CancellableTask {}

/// Per-call options.
///
/// ```swift
/// let reply = try await client.send(.user(7, in: users), options: .init(trace: true, timeout: .seconds(2)))
/// ```
public struct CallOptions: Sendable {
    /// Record a ``CallTrace`` of every stage (in ``ResponseMetadata/trace`` and on errors).
    public var trace: Bool
    /// Overrides the endpoint's timeout for this call.
    public var timeout: Duration?
    /// How this typed call decodes its model, replacing the client's ``CourierClient/Configuration/decoder``
    /// (`nil`, the default, keeps it).
    ///
    /// ```swift
    /// var decoder = ValueDecoder()
    /// decoder.dateStrategy = .secondsSince1970
    /// let reply = try await client.send(.legacyFeed, decoding: Feed.self, options: .init(decoder: decoder))
    /// ```
    public var decoder: ValueDecoder?

    /// Options.
    public init(trace: Bool = false, timeout: Duration? = nil, decoder: ValueDecoder? = nil) {
        self.trace = trace
        self.timeout = timeout
        self.decoder = decoder
    }
}

/// A dispatched call: its id, and its result to await.
///
/// ```swift
/// let call = client.dispatch(.user(7, in: users))
/// print(call.id)
/// let reply = try await call.reply
/// ```
public struct Call<T: Sendable>: Sendable {
    /// The call's identifier.
    public let id: CallID
    /// Its result is the call's `Reply<T>` (erased so that a sent call's task starts without an executor
    /// preference; see `immediateTask`).
    let task: Task<any Sendable, any Error>
    /// Nil for the call inside a `send`, whose handle nobody else sees.
    let progressChannel: ProgressChannel?

    /// The call's transfer progress (``TransferProgress``, upload and download), as it happens: the latest
    /// report first, then each new one, ending when the call ends. Each access is a new sequence.
    ///
    /// ```swift
    /// let call = client.download(.report, to: file)
    /// for await step in call.progress { print(step.fraction ?? 0) }
    /// ```
    public var progress: AsyncStream<TransferProgress> {
        progressChannel?.subscribe() ?? AsyncStream { $0.finish() }
    }

    /// The result; cancelling the awaiting task cancels the call.
    public var reply: Reply<T> {
        get async throws {
            try await withTaskCancellationHandler {
                // The task returns the call's reply: the cast always succeeds.
                try await task.value as! Reply<T>
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Cancels the call.
    public func cancel() { task.cancel() }
}

/// A call's result: the value (raw or typed) and the response metadata.
public struct Reply<T: Sendable>: Sendable {
    /// The decoded body.
    public var value: T
    /// Status, header fields, timing, source and trace.
    public var metadata: ResponseMetadata
}

extension Reply where T == Value {
    /// The reply with the value at the dotted `path` decoded into `type` (an empty path: the whole body),
    /// its metadata kept — for a raw call whose pieces are read one at a time.
    ///
    /// ```swift
    /// let raw = try await client.send(.home)
    /// let banners = try raw.decoding([Banner].self, at: "data.banners").value
    /// let user = try raw.decoding(User.self, at: "data.user").value
    /// ```
    public func decoding<U: Decodable & Sendable>(
        _ type: U.Type, at path: String = "", decoder: ValueDecoder = ValueDecoder()
    ) throws -> Reply<U> {
        Reply<U>(value: try decoder.decode(type, from: value, at: PathComponent.parse(path)), metadata: metadata)
    }
}

/// What came with a response besides its value.
public struct ResponseMetadata: Sendable {
    /// The call's identifier.
    public var callID: CallID
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// The response header fields.
    public var headerFields: HTTPFields
    /// The body bytes as received (after decryption).
    public var body: Data
    /// The body's format.
    public var format: ContentFormat?
    /// Network, cache, ...
    public var source: ResponseSource
    /// When the call started.
    public var startDate: Date
    /// How long the call took.
    public var duration: Duration
    /// The trace, when the call asked for one.
    public var trace: CallTrace?
    /// Why a cached entry was not used (expired, another cache or app version, a changed sensitive value);
    /// nil when no entry was rejected.
    public var cacheRejection: String? = nil
    /// The redirects the call followed, in order (empty: none).
    public var redirects: [RedirectHop] = []
    /// The URL that gave the answer: the request's, or the last redirect's target.
    public var url: URL?
}
