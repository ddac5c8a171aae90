#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Synchronization

/// The chain of one call, built once as an immutable value: the interceptors ordered by role (see
/// ``Interceptor`` for the diagram), global → module → endpoint within each role, with the built-in stages
/// (`result`, `routing`, `errorMapping`, `codec`) at their fixed places, ending in the transport.
///
/// ```swift
/// let pipeline = client.pipeline(for: .user(7, in: users))
/// print(pipeline.stageNames)
/// // ["Logging", "result", "BearerAuth", "routing", "errorMapping", "codec", "redirects", "Signing", "transport"]
/// ```
public struct Pipeline: Sendable {
    /// The stages, outermost first, including the built-in ones (the transport is not an interceptor).
    public var stages: [any Interceptor] { chain.stages }
    /// The transport the innermost stage calls.
    public var transport: any Transport { chain.transport }
    /// The transport options for every call of this pipeline.
    var transportOptions: TransportOptions { chain.transportOptions }

    /// What a call runs through, shared by reference: each stage's `next` captures this one object instead of
    /// a copy of the whole chain.
    private final class Chain: Sendable {
        let stages: [any Interceptor]
        let transport: any Transport
        let transportOptions: TransportOptions

        init(stages: [any Interceptor], transport: any Transport, transportOptions: TransportOptions) {
            self.stages = stages
            self.transport = transport
            self.transportOptions = transportOptions
        }
    }

    private let chain: Chain

    /// The roles, outermost first.
    private static let roleOrder = InterceptorRole.allCases.sorted()

    /// Builds a chain from `global`, `module` and `endpoint` interceptors: ordered by ``Interceptor/role``,
    /// and within a role global → module → endpoint (each list in its own order). The client builds its
    /// chains with this (``CourierClient/pipeline(for:)``); package access, not public API.
    package init(
        global: [any Interceptor], module: [any Interceptor], endpoint: [any Interceptor],
        codec: any Interceptor = CodecStage(), transport: any Transport,
        transportOptions: TransportOptions = TransportOptions()
    ) {
        // Built for every call: each interceptor's role read once, then the stages placed role by role (global →
        // module → endpoint within a role), each interceptor copied once.
        let lists = [global, module, endpoint]
        var roles: [InterceptorRole] = []
        roles.reserveCapacity(global.count + module.count + endpoint.count)
        for list in lists {
            for index in list.indices { roles.append(list[index].role) }
        }
        var stages: [any Interceptor] = []
        stages.reserveCapacity(roles.count + 4)
        func append(_ role: InterceptorRole) {
            guard roles.contains(role) else { return }
            var position = 0
            for list in lists {
                for index in list.indices {
                    if roles[position] == role { stages.append(list[index]) }
                    position += 1
                }
            }
        }
        for role in Self.roleOrder {
            append(role)
            switch role {
            case .observation: stages.append(ResultStage())
            case .routing:
                stages.append(RoutingStage())
                stages.append(ErrorMappingStage())
                stages.append(codec)
            default: break
            }
        }
        chain = Chain(stages: stages, transport: transport, transportOptions: transportOptions)
    }

    /// The stage names in order, ending with `transport`.
    public var stageNames: [String] { stages.map(\.name) + ["transport"] }

    /// Runs `request` through the chain. Like the chain's own steps it runs on the caller's executor
    /// (`nonisolated(nonsending)`) and leaves it only where a stage or the transport does: a hop to the generic
    /// executor per step would cost a runtime switch each.
    nonisolated(nonsending) public func execute(
        _ request: CourierRequest, context: InterceptorContext
    ) async throws -> CourierResponse {
        try await run(0, request, PipelineCall(pipeline: self, context: context, recorder: nil))
    }

    /// Runs `request` through the chain; with a `recorder`, every stage's effect is traced.
    nonisolated(nonsending) package func execute(
        _ request: CourierRequest, context: InterceptorContext, recorder: TraceRecorder?
    ) async throws -> CourierResponse {
        try await run(0, request, PipelineCall(pipeline: self, context: context, recorder: recorder))
    }

    /// Runs stage `index` (the transport after the last stage). Inlined into ``InterceptorNext``'s call, so a stage
    /// costs one async frame there instead of two. Kept small: every stage's suspended call holds this frame, and
    /// the task's frames spill into a `malloc`ed slab each time they outgrow the current one, so the rare paths
    /// (stage observers, traces) live in functions of their own.
    @inline(__always)
    nonisolated(nonsending) func run(
        _ index: Int, _ request: CourierRequest, _ call: PipelineCall
    ) async throws -> CourierResponse {
        if call.context.storage.observesStages.load(ordering: .acquiring) {
            return try await runObserved(index, request, call)
        }
        return try await runStage(index, request, call)
    }

    @inline(never)
    nonisolated(nonsending) private func runObserved(
        _ index: Int, _ request: CourierRequest, _ call: PipelineCall
    ) async throws -> CourierResponse {
        let observers = call.context.storage.stageObservers
        let name = index == stages.count ? "transport" : stages[index].name
        return try await Self.observed(name, request, call.context, observers[...]) { request in
            try await runStage(index, request, call)
        }
    }

    /// Runs `body` inside each of `observers`, the first outermost.
    private static func observed(
        _ stage: String, _ request: CourierRequest, _ context: InterceptorContext,
        _ observers: ArraySlice<any StageObserver>, _ body: (CourierRequest) async throws -> CourierResponse
    ) async throws -> CourierResponse {
        guard let observer = observers.first else { return try await body(request) }
        return try await observer.observe(stage: stage, request: request, context: context) { request in
            try await observed(stage, request, context, observers.dropFirst(), body)
        }
    }

    nonisolated(nonsending) private func runStage(
        _ index: Int, _ request: CourierRequest, _ call: PipelineCall
    ) async throws -> CourierResponse {
        let stages = chain.stages
        if index == stages.count {
            return try await sendThroughTransport(request, call.context, call.recorder)
        }
        if let recorder = call.recorder {
            return try await runRecorded(index, request, call, recorder)
        }
        do {
            return try await stages[index].intercept(
                request, context: call.context, next: InterceptorNext(call, index: index + 1))
        } catch {
            throw Self.attribute(error, to: stages[index].name)
        }
    }

    @inline(never)
    nonisolated(nonsending) private func runRecorded(
        _ index: Int, _ request: CourierRequest, _ call: PipelineCall, _ recorder: TraceRecorder
    ) async throws -> CourierResponse {
        let stage = stages[index]
        let next = InterceptorNext(call, index: index + 1)
        let context = call.context
        do {
            return try await recorder.record(stage: stage.name, request: request, next: next) { next in
                try await stage.intercept(request, context: context, next: next)
            }
        } catch {
            throw Self.attribute(error, to: stage.name)
        }
    }

    @inline(never)
    nonisolated(nonsending) private func sendThroughTransport(
        _ request: CourierRequest, _ context: InterceptorContext, _ recorder: TraceRecorder?
    ) async throws -> CourierResponse {
        var options = transportOptions
        options.timeout = request.timeout ?? options.timeout
        options.callID = context.callID
        options.priority = context.endpoint.priority
        let transportOptions = options
        do {
            if let recorder {
                return try await recorder.recordTransport(request: request) {
                    try await exchange(request, context, transportOptions)
                }
            }
            return try await exchange(request, context, transportOptions)
        } catch {
            throw Self.transportFailure(error)
        }
    }

    /// The transport's exchange of `request`: its answer as a response of the `network` source.
    nonisolated(nonsending) private func exchange(
        _ request: CourierRequest, _ context: InterceptorContext, _ options: TransportOptions
    ) async throws -> CourierResponse {
        try Task.checkCancellation()
        context.announceSend(request)
        let (head, body): (HTTPResponse, Data)
        if request.bodyStream != nil || request.responseSink != nil {
            (head, body) = try await Self.stream(request, transport, options, context)
        } else {
            (head, body) = try await transport.send(request.head, body: request.body, options: options)
        }
        return Self.response(head, body)
    }

    /// The transport's answer as a response of the `network` source, its format read from its content type. Out
    /// of line: inlined, the content type's parsing would widen ``exchange(_:_:_:)``'s frame, which every call
    /// keeps while the transport answers.
    @inline(never)
    private static func response(_ head: HTTPResponse, _ body: Data) -> CourierResponse {
        let format = head.headerFields.contentType.flatMap(ContentFormat.init(contentType:))
        return CourierResponse(head: head, body: body, format: format, source: .network)
    }

    /// A streamed exchange (see `Transfers.swift`): the body stream (or the whole body) with upload progress,
    /// the response into the request's sink or collected under the size limit.
    private static func stream(
        _ request: CourierRequest, _ transport: any Transport, _ options: TransportOptions,
        _ context: InterceptorContext
    ) async throws -> (HTTPResponse, Data) {
        let sink = request.responseSink ?? CollectingSink(limit: options.maximumResponseSize, method: request.head.method)
        var body = request.bodyStream ?? request.body.map(BodyStream.data)
        if let stream = body {
            let total = stream.length
            context.reportProgress(TransferProgress(direction: .upload, completed: 0, total: total))
            body = stream.observed { sent in
                context.reportProgress(TransferProgress(direction: .upload, completed: sent, total: total))
            }
        }
        let head = try await transport.stream(request.head, body: body, options: options, into: sink)
        if let total = body?.length {
            context.reportProgress(TransferProgress(direction: .upload, completed: total, total: total))
        }
        return (head, try sink.finish())
    }

    /// Wraps a non-Courier error once, naming the stage that failed; a ``CourierError`` passes unchanged
    /// (its stage is set if empty). Not inlined: the error's temporaries would widen every stage's async frame.
    @inline(never)
    static func attribute(_ error: any Error, to stage: String) -> any Error {
        var wrapped = CourierError.wrap(error, as: .interceptorFailure, detail: "interceptor \(stage) failed")
        if wrapped.context.stage == nil { wrapped.context.stage = stage }
        return wrapped
    }

    /// The transport's failure as a ``CourierError`` of the `transport` stage (`cancelled` when the call was).
    @inline(never)
    static func transportFailure(_ error: any Error) -> any Error {
        var wrapped = CourierError.wrap(error, as: .transportFailure)
        if Task.isCancelled, wrapped.category == .transport { wrapped = CourierError(.cancelled, underlying: error) }
        if wrapped.context.stage == nil { wrapped.context.stage = "transport" }
        return wrapped
    }
}

extension HTTPFields {
    /// The `Content-Type` value: the field's own value when there is one field (the usual case, without the
    /// joining the name subscript does), else the values joined as the name subscript joins them.
    var contentType: String? {
        var found: String?
        for field in self where field.name == .contentType {
            if found != nil { return self[.contentType] }
            found = field.value
        }
        return found
    }
}

/// One run of a request through a pipeline: what every stage's ``InterceptorNext`` shares, since only the
/// position differs from stage to stage. Passing the request on then copies this one reference, not the
/// pipeline, the context and the recorder.
final class PipelineCall: Sendable {
    let pipeline: Pipeline
    let context: InterceptorContext
    let recorder: TraceRecorder?

    init(pipeline: Pipeline, context: InterceptorContext, recorder: TraceRecorder?) {
        self.pipeline = pipeline
        self.context = context
        self.recorder = recorder
    }
}
