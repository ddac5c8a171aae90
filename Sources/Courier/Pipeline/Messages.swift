#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// A request as it travels through the interceptor chain: the HTTP head, and the body either still as
/// a ``Value`` (``payload``, before the codec stage) or as encoded bytes (``body``, after it).
///
/// Interceptors above the codec stage see the payload (common parameters add to it whatever the wire format);
/// network-role interceptors see the bytes (signing and encryption work on them).
///
/// ```swift
/// struct Stamp: Interceptor {
///     func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws -> CourierResponse {
///         var request = request
///         request.head.headerFields[.init("X-Request-ID")!] = context.callID.description
///         return try await next(request)
///     }
/// }
/// ```
public struct CourierRequest: Sendable {
    /// Method, scheme, authority, path and query, and header fields.
    public var head: HTTPRequest {
        get { storage.fields.head }
        _modify { yield &uniqueStorage().fields.head }
    }
    /// The body as a value, before encoding (nil when there is none or it is already encoded).
    public var payload: Value? {
        get { storage.fields.payload }
        _modify { yield &uniqueStorage().fields.payload }
    }
    /// The encoded body (set by the codec stage from ``payload``, or given directly).
    public var body: Data? {
        get { storage.fields.body }
        _modify { yield &uniqueStorage().fields.body }
    }
    /// The format of the body.
    public var format: ContentFormat {
        get { storage.fields.format }
        _modify { yield &uniqueStorage().fields.format }
    }
    /// The codec hints for encoding the body (protobuf message type, XML root name).
    public var hints: CodingHints {
        get { storage.fields.hints }
        _modify { yield &uniqueStorage().fields.hints }
    }
    /// The format expected in the response (nil: take it from the response's `Content-Type`).
    public var responseFormat: ContentFormat? {
        get { storage.fields.responseFormat }
        _modify { yield &uniqueStorage().fields.responseFormat }
    }
    /// The codec hints for decoding the response.
    public var responseHints: CodingHints {
        get { storage.fields.responseHints }
        _modify { yield &uniqueStorage().fields.responseHints }
    }
    /// How long the transport may take for this request.
    public var timeout: Duration? {
        get { storage.fields.timeout }
        _modify { yield &uniqueStorage().fields.timeout }
    }
    /// Whether the request may be sent again (retry, auth replay). False for one-shot streamed bodies.
    public var isReplayable: Bool {
        get { storage.fields.isReplayable }
        _modify { yield &uniqueStorage().fields.isReplayable }
    }
    /// The base URL the request was built on (nil: the endpoint named an absolute URL). The built-in
    /// `routing` stage moves the request from it to the host chosen for each attempt.
    public var baseURL: URL? {
        get { storage.fields.baseURL }
        _modify { yield &uniqueStorage().fields.baseURL }
    }
    /// A streamed body (an upload), sent instead of ``body`` when set. Stages that need the bytes read
    /// ``body`` (the whole-body view); a streamed body is signed by its digest (see `RequestSigning`).
    public var bodyStream: BodyStream? {
        get { storage.fields.bodyStream }
        _modify { yield &uniqueStorage().fields.bodyStream }
    }
    /// Where the transport writes the response body as it streams (a download's file); nil: the body is
    /// collected into ``CourierResponse/body`` under the client's `maximumResponseSize`.
    public var responseSink: (any ResponseBodySink)? {
        get { storage.fields.responseSink }
        _modify { yield &uniqueStorage().fields.responseSink }
    }

    /// The fields in one box, copied on write (see `CopyOnWriteBox`).
    private var storage: CopyOnWriteBox<Fields>

    private struct Fields: Sendable {
        var head: HTTPRequest
        var payload: Value?
        var body: Data?
        var format: ContentFormat
        var hints: CodingHints
        var responseFormat: ContentFormat?
        var responseHints: CodingHints
        var timeout: Duration?
        var isReplayable: Bool
        var baseURL: URL?
        var bodyStream: BodyStream?
        var responseSink: (any ResponseBodySink)?
    }

    private mutating func uniqueStorage() -> CopyOnWriteBox<Fields> { CopyOnWriteBox.unique(&storage) }

    /// A request.
    public init(
        head: HTTPRequest, payload: Value? = nil, body: Data? = nil, format: ContentFormat = .json,
        hints: CodingHints = CodingHints(), responseFormat: ContentFormat? = nil,
        responseHints: CodingHints = CodingHints(), timeout: Duration? = nil, isReplayable: Bool = true,
        baseURL: URL? = nil, bodyStream: BodyStream? = nil
    ) {
        storage = CopyOnWriteBox(
            Fields(
                head: head, payload: payload, body: body, format: format, hints: hints, responseFormat: responseFormat,
                responseHints: responseHints, timeout: timeout, isReplayable: isReplayable, baseURL: baseURL,
                bodyStream: bodyStream, responseSink: nil))
    }

    /// `GET https://host/path?query` — for messages and traces (query values are not printed).
    public var summary: String {
        "\(head.method) \(head.scheme ?? "http")://\(head.authority ?? "")\(RequestTarget(head.path).path)"
    }
}

/// A response as it travels back through the chain: the HTTP head, the bytes, and — once the codec stage
/// has run — the decoded ``value``.
///
/// ```swift
/// let response = CourierResponse(status: .ok, value: ["code": 0, "data": ["id": 7]])
/// response.head.status.code   // 200
/// ```
public struct CourierResponse: Sendable {
    /// Status and header fields.
    public var head: HTTPResponse {
        get { storage.fields.head }
        _modify { yield &uniqueStorage().fields.head }
    }
    /// The body bytes as received (after decryption, once a decryption stage has run).
    public var body: Data {
        get { storage.fields.body }
        _modify { yield &uniqueStorage().fields.body }
    }
    /// The decoded body (set by the codec stage, or by an interceptor that answers itself).
    public var value: Value? {
        get { storage.fields.value }
        _modify { yield &uniqueStorage().fields.value }
    }
    /// The format of ``body``, when known.
    public var format: ContentFormat? {
        get { storage.fields.format }
        _modify { yield &uniqueStorage().fields.format }
    }
    /// Where the response came from.
    public var source: ResponseSource {
        get { storage.fields.source }
        _modify { yield &uniqueStorage().fields.source }
    }
    /// The response's outcome as the built-in `errorMapping` stage decided it, once: nil for a success,
    /// else the error the caller will get (an HTTP status, a business code). Stages above `errorMapping`
    /// (cache, auth, validation, observation) read it instead of deciding again; an interceptor that answers
    /// itself leaves it nil for a success or sets it for a failure.
    public var failure: CourierError? {
        get { storage.fields.failure }
        _modify { yield &uniqueStorage().fields.failure }
    }
    /// The typed model decoded by the built-in `result` stage, for typed calls.
    var decoded: (any Sendable)? {
        get { storage.fields.decoded }
        _modify { yield &uniqueStorage().fields.decoded }
    }
    /// Whether the `errorMapping` stage has judged this response.
    var isMapped: Bool {
        get { storage.fields.isMapped }
        _modify { yield &uniqueStorage().fields.isMapped }
    }
    /// Why a cached entry was not used for this call (expired, another cache or app version, a changed
    /// sensitive value), set by a cache stage; shown in ``ResponseMetadata/cacheRejection`` and traces.
    public var cacheRejection: String? {
        get { storage.fields.cacheRejection }
        _modify { yield &uniqueStorage().fields.cacheRejection }
    }
    /// The redirects followed before this response, in order (set by the `redirects` stage).
    public var redirects: [RedirectHop] {
        get { storage.fields.redirects }
        _modify { yield &uniqueStorage().fields.redirects }
    }

    /// The fields in one box, copied on write (see `CopyOnWriteBox`).
    private var storage: CopyOnWriteBox<Fields>

    private struct Fields: Sendable {
        var head: HTTPResponse
        var body: Data
        var value: Value?
        var format: ContentFormat?
        var source: ResponseSource
        var failure: CourierError?
        var decoded: (any Sendable)?
        var isMapped = false
        var cacheRejection: String?
        var redirects: [RedirectHop] = []
    }

    private mutating func uniqueStorage() -> CopyOnWriteBox<Fields> { CopyOnWriteBox.unique(&storage) }

    /// A response.
    public init(
        head: HTTPResponse, body: Data = Data(), value: Value? = nil, format: ContentFormat? = nil,
        source: ResponseSource = .network
    ) {
        storage = CopyOnWriteBox(Fields(head: head, body: body, value: value, format: format, source: source))
    }

    /// A response with a status, no header fields, and an already-decoded value (for interceptors that
    /// answer themselves and for tests).
    public init(status: HTTPResponse.Status, value: Value? = nil, body: Data = Data(), source: ResponseSource = .network) {
        self.init(head: HTTPResponse(status: status), body: body, value: value, format: value == nil ? nil : .json, source: source)
    }

    /// Whether the status is 2xx.
    public var isSuccessful: Bool { head.status.kind == .successful }

    /// Whether the outcome is a success: no mapped ``failure``, and a status the `errorMapping` stage
    /// accepted (2xx for a response it has not seen).
    public var succeeded: Bool { failure == nil && (isMapped || isSuccessful) }
}

extension CourierRequest: CustomReflectable {
    /// The request's fields, as `print` and `dump` showed them before they moved into a shared box.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "head": head, "payload": payload as Any, "body": body as Any, "format": format, "hints": hints,
                "responseFormat": responseFormat as Any, "responseHints": responseHints, "timeout": timeout as Any,
                "isReplayable": isReplayable, "baseURL": baseURL as Any, "bodyStream": bodyStream as Any,
                "responseSink": responseSink as Any,
            ], displayStyle: .struct)
    }
}

extension CourierResponse: CustomReflectable {
    /// The response's fields, as `print` and `dump` showed them before they moved into a shared box.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "head": head, "body": body, "value": value as Any, "format": format as Any, "source": source,
                "failure": failure as Any, "cacheRejection": cacheRejection as Any, "redirects": redirects,
            ], displayStyle: .struct)
    }
}

/// Where a response came from. An open set.
///
/// ```swift
/// if reply.metadata.source == .cache { showOfflineBadge() }
/// ```
public struct ResponseSource: Hashable, Sendable, CustomStringConvertible {
    /// A short name.
    public var name: String
    /// A source with a name.
    public init(_ name: String) { self.name = name }
    /// The transport.
    public static let network = ResponseSource("network")
    /// A cache.
    public static let cache = ResponseSource("cache")
    /// A cache, served stale while a revalidation runs in the background.
    public static let staleCache = ResponseSource("stale-cache")
    /// An interceptor that answered itself (mock, replay).
    public static let synthesized = ResponseSource("synthesized")
    public var description: String { name }
}
