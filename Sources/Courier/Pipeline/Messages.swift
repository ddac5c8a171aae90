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
    public var head: HTTPRequest
    /// The body as a value, before encoding (nil when there is none or it is already encoded).
    public var payload: Value?
    /// The encoded body (set by the codec stage from ``payload``, or given directly).
    public var body: Data?
    /// The format of the body.
    public var format: ContentFormat
    /// The codec hints for encoding the body (protobuf message type, XML root name).
    public var hints: CodingHints
    /// The format expected in the response (nil: take it from the response's `Content-Type`).
    public var responseFormat: ContentFormat?
    /// The codec hints for decoding the response.
    public var responseHints: CodingHints
    /// How long the transport may take for this request.
    public var timeout: Duration?
    /// Whether the request may be sent again (retry, auth replay). False for one-shot streamed bodies.
    public var isReplayable: Bool
    /// The base URL the request was built on (nil: the endpoint named an absolute URL). The built-in
    /// `routing` stage moves the request from it to the host chosen for each attempt.
    public var baseURL: URL?
    /// A streamed body (an upload), sent instead of ``body`` when set. Stages that need the bytes read
    /// ``body`` (the whole-body view); a streamed body is signed by its digest (see `RequestSigning`).
    public var bodyStream: BodyStream?
    /// Where the transport writes the response body as it streams (a download's file); nil: the body is
    /// collected into ``CourierResponse/body`` under the client's `maximumResponseSize`.
    public var responseSink: (any ResponseBodySink)?

    /// A request.
    public init(
        head: HTTPRequest, payload: Value? = nil, body: Data? = nil, format: ContentFormat = .json,
        hints: CodingHints = CodingHints(), responseFormat: ContentFormat? = nil,
        responseHints: CodingHints = CodingHints(), timeout: Duration? = nil, isReplayable: Bool = true,
        baseURL: URL? = nil, bodyStream: BodyStream? = nil
    ) {
        self.baseURL = baseURL
        self.bodyStream = bodyStream
        self.responseSink = nil
        self.head = head
        self.payload = payload
        self.body = body
        self.format = format
        self.hints = hints
        self.responseFormat = responseFormat
        self.responseHints = responseHints
        self.timeout = timeout
        self.isReplayable = isReplayable
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
    public var head: HTTPResponse
    /// The body bytes as received (after decryption, once a decryption stage has run).
    public var body: Data
    /// The decoded body (set by the codec stage, or by an interceptor that answers itself).
    public var value: Value?
    /// The format of ``body``, when known.
    public var format: ContentFormat?
    /// Where the response came from.
    public var source: ResponseSource
    /// The response's outcome as the built-in `errorMapping` stage decided it, once: nil for a success,
    /// else the error the caller will get (an HTTP status, a business code). Stages above `errorMapping`
    /// (cache, auth, validation, observation) read it instead of deciding again; an interceptor that answers
    /// itself leaves it nil for a success or sets it for a failure.
    public var failure: CourierError?
    /// The typed model decoded by the built-in `result` stage, for typed calls.
    var decoded: (any Sendable)?
    /// Whether the `errorMapping` stage has judged this response.
    var isMapped = false
    /// Why a cached entry was not used for this call (expired, another cache or app version, a changed
    /// sensitive value), set by a cache stage; shown in ``ResponseMetadata/cacheRejection`` and traces.
    public var cacheRejection: String?
    /// The redirects followed before this response, in order (set by the `redirects` stage).
    public var redirects: [RedirectHop] = []

    /// A response.
    public init(
        head: HTTPResponse, body: Data = Data(), value: Value? = nil, format: ContentFormat? = nil,
        source: ResponseSource = .network
    ) {
        self.head = head
        self.body = body
        self.value = value
        self.format = format
        self.source = source
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
