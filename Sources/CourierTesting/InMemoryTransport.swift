#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// A transport backed by a closure, for tests of the pipeline's own logic: no sockets, no server. It honours
/// the request's timeout (failing with `timedOut`) and task cancellation like a real transport, and
/// records every request it sees.
///
/// ```swift
/// let transport = InMemoryTransport { request, body in
///     (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(#"{"code":0}"#.utf8))
/// }
/// let client = CourierClient(transport: transport)
/// _ = try await client.send(endpoint)
/// transport.requests.count   // 1
/// ```
public final class InMemoryTransport: Transport {
    /// Answers one request.
    public typealias Handler = @Sendable (HTTPRequest, Data?) async throws -> (HTTPResponse, Data)

    private let handler: Handler
    private let recorded = Locked<[(HTTPRequest, Data?)]>([])
    private let recording: Bool

    /// A transport answering with `handler`; `recording: false` skips keeping requests (benchmarks).
    public init(recording: Bool = true, handler: @escaping Handler) {
        self.handler = handler
        self.recording = recording
    }

    /// The requests seen so far, in order.
    public var requests: [(head: HTTPRequest, body: Data?)] { recorded.withLock { $0.map { ($0.0, $0.1) } } }

    public func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
        if recording { recorded.withLock { $0.append((request, body)) } }
        let handler = handler
        do {
            return try await withTimeout(options.timeout) { try await handler(request, body) }
        } catch is CancellationError {
            throw TransportFailure.cancelled.error()
        }
    }

    /// Always answers `status` with a JSON body.
    public static func successful(status: HTTPResponse.Status = .ok, json: String = #"{"code":0,"message":"ok"}"#)
        -> InMemoryTransport
    {
        InMemoryTransport(recording: true) { _, _ in
            (HTTPResponse(status: status, headerFields: [.contentType: "application/json"]), Data(json.utf8))
        }
    }

    /// Always fails with `failure`.
    public static func failing(_ failure: TransportFailure) -> InMemoryTransport {
        InMemoryTransport { _, _ in throw failure.error() }
    }
}
