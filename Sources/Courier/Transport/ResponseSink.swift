#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// Where a streamed response body goes, chunk by chunk: a transport's ``Transport/stream(_:body:options:into:)``
/// calls ``begin(_:)`` once with the head, then ``write(_:)`` for each chunk in order, never concurrently, and
/// waits for each call — a sink that writes to disk is the transfer's backpressure. Whoever started the
/// exchange calls ``finish()`` once the transport has returned.
///
/// A sink throws to end the call: the transport stops the transfer (closing its connection) and fails with
/// the sink's error. Keep each call short (a file write, a bounded append): `FoundationTransport` runs it on
/// the session's work queue.
///
/// ```swift
/// final class Counting: ResponseBodySink {
///     let count = Locked(0)   // any lock
///     func begin(_ head: HTTPResponse) throws {}
///     func write(_ chunk: Data) throws { count.withLock { $0 += chunk.count } }
///     func finish() throws -> Data { Data() }
/// }
/// ```
public protocol ResponseBodySink: Sendable {
    /// The response head, before any body byte.
    func begin(_ head: HTTPResponse) throws
    /// The next chunk of the body.
    func write(_ chunk: Data) throws
    /// The body has ended: checks it (a length it was promised) and returns the bytes to hand the chain as
    /// ``CourierResponse/body`` (empty when they went elsewhere, such as a file).
    func finish() throws -> Data
}

/// The sink of an ordinary call: collects the body in memory under a size limit, as the buffered
/// ``Transport/send(_:body:options:)`` does (a declared `Content-Length` above the limit fails at the head,
/// an endless body as soon as it passes the limit, with ``CourierError/Code/responseTooLarge``).
///
/// ```swift
/// let sink = CollectingSink(limit: 1 << 20)
/// let head = try await transport.stream(request, body: nil, options: TransportOptions(), into: sink)
/// let body = try sink.finish()
/// ```
public final class CollectingSink: ResponseBodySink {
    private let limit: Int
    private let method: HTTPRequest.Method
    private let data = Locked(Data())

    /// A sink keeping at most `limit` bytes of the answer to a `method` request (a HEAD answer's declared
    /// length is not a body).
    public init(limit: Int, method: HTTPRequest.Method = .get) {
        self.limit = limit
        self.method = method
    }

    public func begin(_ head: HTTPResponse) throws {
        let hasBody = method != .head && head.status.code != 204 && head.status.code != 304
        if hasBody, let declared = head.headerFields[.contentLength].flatMap({ Int64($0) }), declared > Int64(limit) {
            throw Self.tooLarge("the response declares \(declared) bytes; the limit is \(limit)")
        }
    }

    public func write(_ chunk: Data) throws {
        let limit = limit
        let fits = data.withLock { data -> Bool in
            guard chunk.count <= limit - data.count else { return false }
            data.append(chunk)
            return true
        }
        if !fits { throw Self.tooLarge("the response exceeds \(limit) bytes") }
    }

    public func finish() throws -> Data { data.withLock { $0 } }

    static func tooLarge(_ detail: String) -> CourierError {
        var error = CourierError(.responseTooLarge, detail: detail)
        error.context.stage = "transport"
        return error
    }
}

extension Transport {
    /// The default streaming exchange, for transports that only implement the buffered
    /// ``send(_:body:options:)``: the request body is read whole into memory, the response arrives whole
    /// (under ``TransportOptions/maximumResponseSize``) and is handed to `sink` as one chunk. Implement the
    /// requirement natively to stream (``FoundationTransport`` and `HTTPClientTransport` do).
    public func stream(
        _ request: HTTPRequest, body: BodyStream?, options: TransportOptions, into sink: any ResponseBodySink
    ) async throws -> HTTPResponse {
        let bytes = try await body?.collect(upTo: Int.max)
        let (head, data) = try await send(request, body: bytes, options: options)
        try sink.begin(head)
        if !data.isEmpty { try sink.write(data) }
        return head
    }
}
