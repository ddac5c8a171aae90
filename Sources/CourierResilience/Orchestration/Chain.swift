/// Calls run one after another, each step building its endpoint from the previous reply
/// (YTKChainRequest). A failure stops the chain and says at which step.
///
/// ```swift
/// let chain = CallChain(.login(user, password))
///     .then { login in .profile(token: login.value["data"]?["token"]?.stringValue ?? "") }
///     .then { profile in .avatar(url: profile.value["data"]?["avatar"]?.stringValue ?? "") }
/// let running = client.run(chain)
/// let replies = try await running.replies     // one per step
/// ```
public struct CallChain: Sendable {
    /// Builds a step's endpoint from the previous step's reply; nil ends the chain there.
    public typealias Step = @Sendable (Reply<Value>) throws -> Endpoint?

    /// The first endpoint.
    public let first: Endpoint
    let steps: [Step]

    /// A chain starting with `first`.
    public init(_ first: Endpoint) {
        self.first = first
        self.steps = []
    }

    private init(first: Endpoint, steps: [Step]) {
        self.first = first
        self.steps = steps
    }

    /// The chain with one more step.
    public func then(_ step: @escaping Step) -> CallChain {
        CallChain(first: first, steps: steps + [step])
    }

    /// The number of steps, the first included.
    public var count: Int { steps.count + 1 }
}

/// A running ``CallChain``.
public struct ChainCall: Sendable {
    let task: Task<[Reply<Value>], any Error>

    /// The replies of every step run, in order. A failing step throws its error, with a detail naming
    /// the step (`chain step 2 of 3 (getProfile) failed`).
    public var replies: [Reply<Value>] {
        get async throws {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Cancels the chain: the running step is cancelled and no later step starts.
    public func cancel() { task.cancel() }
}

extension CourierClient {
    /// Starts `chain` now.
    public func run(_ chain: CallChain, options: CallOptions = CallOptions()) -> ChainCall {
        ChainCall(task: Task {
            var replies: [Reply<Value>] = []
            var endpoint = chain.first
            for index in 0..<chain.count {
                do {
                    try Task.checkCancellation()
                    replies.append(try await self.dispatch(endpoint, options: options).reply)
                } catch {
                    throw Self.chainFailure(error, step: index, of: chain.count, endpoint: endpoint.name)
                }
                guard index < chain.steps.count else { break }
                let built: Endpoint?
                do {
                    built = try chain.steps[index](replies[index])
                } catch {
                    var failure = CourierError.wrap(error, as: .invalidConfiguration)
                    let note = "chain step \(index + 2) of \(chain.count) could not be built"
                    failure.detail = [note, failure.detail].compactMap { $0 }.joined(separator: ": ")
                    throw failure
                }
                guard let next = built else { break }
                endpoint = next
            }
            return replies
        })
    }

    private static func chainFailure(_ error: any Error, step: Int, of count: Int, endpoint: String) -> CourierError {
        var failure = CourierError.wrap(error, as: .transportFailure)
        let note = "chain step \(step + 1) of \(count) (\(endpoint)) failed"
        failure.detail = [note, failure.detail].compactMap { $0 }.joined(separator: ": ")
        if failure.context.endpoint == nil { failure.context.endpoint = endpoint }
        return failure
    }
}

/// The steps of a typed chain (``Courier/CourierClient/chain(options:_:)``): each ``step(_:decoding:)`` sends one
/// endpoint and returns its typed reply; a failing step is thrown with its number and endpoint named.
///
/// ```swift
/// let running = client.chain { chain in
///     let login = try await chain.step(.login(user, password), decoding: LoginReply.self)
///     let profile = try await chain.step(.profile(token: login.value.token), decoding: Profile.self)
///     return profile.value
/// }
/// let profile = try await running.value
/// ```
public final class ChainSteps: Sendable {
    private let client: CourierClient
    private let options: CallOptions
    private let count = Locked(0)

    init(client: CourierClient, options: CallOptions) {
        self.client = client
        self.options = options
    }

    /// How many steps have started.
    public var started: Int { count.withLock { $0 } }

    /// Sends `endpoint` as the next step and decodes its reply into `type`.
    public func step<T: Decodable & Sendable>(_ endpoint: Endpoint, decoding type: T.Type) async throws -> Reply<T> {
        let index = count.withLock { count -> Int in
            count += 1
            return count
        }
        do {
            try Task.checkCancellation()
            return try await client.dispatch(endpoint, decoding: type, options: options).reply
        } catch {
            var failure = CourierError.wrap(error, as: .transportFailure)
            let note = "chain step \(index) (\(endpoint.name)) failed"
            failure.detail = [note, failure.detail].compactMap { $0 }.joined(separator: ": ")
            if failure.context.endpoint == nil { failure.context.endpoint = endpoint.name }
            throw failure
        }
    }

    /// Sends `endpoint` as the next step and returns its raw reply.
    public func step(_ endpoint: Endpoint) async throws -> Reply<Value> {
        try await step(endpoint, decoding: Value.self)
    }
}

/// A running typed chain: its result, or the failure of the step that stopped it.
public struct TypedChainCall<Result: Sendable>: Sendable {
    let task: Task<Result, any Error>

    /// What the chain returned. Cancelling the awaiting task cancels the chain.
    public var value: Result {
        get async throws {
            do {
                return try await withTaskCancellationHandler {
                    try await task.value
                } onCancel: {
                    task.cancel()
                }
            } catch {
                throw CourierError.wrap(error, as: .interceptorFailure)
            }
        }
    }

    /// Cancels the chain: the running step is cancelled and no later step starts.
    public func cancel() { task.cancel() }
}

extension CourierClient {
    /// Starts a typed chain now: `body` runs its steps one after another, each built from the typed replies
    /// before it, and returns what the caller wants.
    public func chain<Result: Sendable>(
        options: CallOptions = CallOptions(), _ body: @escaping @Sendable (ChainSteps) async throws -> Result
    ) -> TypedChainCall<Result> {
        let steps = ChainSteps(client: self, options: options)
        return TypedChainCall(task: Task { try await body(steps) })
    }
}
