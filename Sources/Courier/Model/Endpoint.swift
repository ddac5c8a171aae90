#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// One API call's configuration, as a value: where (module, path or full URL, method), what (query and body
/// parameters, header fields, formats), and how (timeout, priority, tags, interceptors, options). Build them
/// from static functions so call sites read like the API:
///
/// ```swift
/// extension Endpoint {
///     static func user(_ id: Int64, in module: APIModule) -> Endpoint {
///         Endpoint(name: "getUser", module: module, method: .get, path: "/users/\(id)")
///     }
///     static func createUser(_ user: NewUser, in module: APIModule) throws -> Endpoint {
///         var endpoint = Endpoint(name: "createUser", module: module, method: .post, path: "/users")
///         endpoint.body = try Value(encoding: user)
///         endpoint.requestFormat = .protobuf
///         endpoint.requestMessage = "demo.NewUser"
///         endpoint.responseMessage = "demo.UserResponse"
///         return endpoint
///     }
/// }
/// let reply = try await client.send(.user(7, in: users), decoding: Envelope<User>.self)
/// ```
public struct Endpoint: Sendable {
    /// The endpoint's name (logs, traces, errors).
    public var name: String {
        get { storage.fields.name }
        _modify { yield &uniqueStorage().fields.name }
    }
    /// The module it belongs to.
    public var module: APIModule {
        get { storage.fields.module }
        _modify { yield &uniqueStorage().fields.module }
    }
    /// The HTTP method.
    public var method: HTTPRequest.Method {
        get { storage.fields.method }
        _modify { yield &uniqueStorage().fields.method }
    }
    /// A path relative to the module's base URL (`/users/7`), or a full URL (`https://host/x`).
    public var path: String {
        get { storage.fields.path }
        _modify { yield &uniqueStorage().fields.path }
    }
    /// Query parameters, in order.
    public var query: [QueryItem] {
        get { storage.fields.query }
        _modify { yield &uniqueStorage().fields.query }
    }
    /// The body parameters as a value, encoded with ``requestFormat`` by the codec stage.
    public var body: Value? {
        get { storage.fields.body }
        _modify { yield &uniqueStorage().fields.body }
    }
    /// A ready-made body (sent as is; wins over ``body``).
    public var rawBody: Data? {
        get { storage.fields.rawBody }
        _modify { yield &uniqueStorage().fields.rawBody }
    }
    /// A streamed body (an upload: a file, a ``MultipartForm``, any ``BodyStream``), sent as it is read
    /// and never whole in memory; wins over ``body`` and ``rawBody``. See ``CourierClient/upload(_:body:contentType:options:)``.
    public var bodyStream: BodyStream? {
        get { storage.fields.bodyStream }
        _modify { yield &uniqueStorage().fields.bodyStream }
    }
    /// Header fields (win over the module's).
    public var headers: HTTPFields {
        get { storage.fields.headers }
        _modify { yield &uniqueStorage().fields.headers }
    }
    /// The body's format.
    public var requestFormat: ContentFormat {
        get { storage.fields.requestFormat }
        _modify { yield &uniqueStorage().fields.requestFormat }
    }
    /// The expected response format (nil: from the response's `Content-Type`, JSON when absent).
    public var responseFormat: ContentFormat? {
        get { storage.fields.responseFormat }
        _modify { yield &uniqueStorage().fields.responseFormat }
    }
    /// The protobuf message type of the request body (`demo.NewUser`).
    public var requestMessage: String? {
        get { storage.fields.requestMessage }
        _modify { yield &uniqueStorage().fields.requestMessage }
    }
    /// The protobuf message type of the response (`demo.UserResponse`).
    public var responseMessage: String? {
        get { storage.fields.responseMessage }
        _modify { yield &uniqueStorage().fields.responseMessage }
    }
    /// The id of the JSON Schema the response must satisfy (checked by a validation interceptor).
    public var responseSchema: String? {
        get { storage.fields.responseSchema }
        _modify { yield &uniqueStorage().fields.responseSchema }
    }
    /// The expected shape of the response, for formats that need it (XML); derived from the typed model
    /// when the call decodes one and this is nil.
    public var responseShape: ValueShape? {
        get { storage.fields.responseShape }
        _modify { yield &uniqueStorage().fields.responseShape }
    }
    /// The transport timeout (nil: the client's default).
    public var timeout: Duration? {
        get { storage.fields.timeout }
        _modify { yield &uniqueStorage().fields.timeout }
    }
    /// Scheduling priority.
    public var priority: Priority {
        get { storage.fields.priority }
        _modify { yield &uniqueStorage().fields.priority }
    }
    /// Free-form tags: dimensions of the `MetricsInterceptor`'s metrics, metadata of the
    /// `LoggingInterceptor`'s lines (`tags=a,b`, sorted), and cancellation groups
    /// (``CourierClient/cancelAll(tag:)``). Keep them few and of low cardinality (`"checkout"`,
    /// `"screen:profile"`), never ids: each distinct set is a separate metrics series.
    public var tags: Set<String> {
        get { storage.fields.tags }
        _modify { yield &uniqueStorage().fields.tags }
    }
    /// Interceptors for this endpoint only, last within their role.
    public var interceptors: [any Interceptor] {
        get { storage.fields.interceptors }
        _modify { yield &uniqueStorage().fields.interceptors }
    }
    /// Whether the request may be replayed (retry, auth refresh); false for streamed bodies.
    public var isReplayable: Bool {
        get { storage.fields.isReplayable }
        _modify { yield &uniqueStorage().fields.isReplayable }
    }
    /// Settings that later stages read (cache and retry policies), keyed by type.
    public var options: EndpointOptions {
        get { storage.fields.options }
        _modify { yield &uniqueStorage().fields.options }
    }
    /// How the request body is encoded: the XML root element's name (`requestHints.rootName`, else the
    /// codec's ``CodingHints/rootName`` default), a codec's own hints (CourierCodecs'
    /// `requestHints.xmlArrayLayout`). ``requestMessage``, when set, names the protobuf message type.
    ///
    /// ```swift
    /// var create = Endpoint(name: "createUser", module: users, method: .post, path: "/users", body: user)
    /// create.requestFormat = .xml
    /// create.requestHints.rootName = "user"                 // <user>…</user>, not <response>…</response>
    /// create.requestHints.xmlArrayLayout = .wrapped(.dropTrailingS)   // <tags><tag>a</tag></tags>
    /// ```
    public var requestHints: CodingHints {
        get { storage.fields.requestHints }
        _modify { yield &uniqueStorage().fields.requestHints }
    }


    /// The fields in one box, copied on write (see `CopyOnWriteBox`): an endpoint is ~540 bytes, and a call
    /// copies it into its context, its task and its stages.
    private var storage: CopyOnWriteBox<Fields>

    private struct Fields: Sendable {
        var name: String
        var module: APIModule
        var method: HTTPRequest.Method
        var path: String
        var query: [QueryItem]
        var body: Value?
        var rawBody: Data?
        var bodyStream: BodyStream?
        var headers: HTTPFields
        var requestFormat: ContentFormat
        var responseFormat: ContentFormat?
        var requestMessage: String?
        var responseMessage: String?
        var responseSchema: String?
        var responseShape: ValueShape?
        var timeout: Duration?
        var priority: Priority
        var tags: Set<String>
        var interceptors: [any Interceptor]
        var isReplayable: Bool
        var options: EndpointOptions
        var requestHints: CodingHints
    }

    private mutating func uniqueStorage() -> CopyOnWriteBox<Fields> { CopyOnWriteBox.unique(&storage) }

    /// An endpoint.
    public init(
        name: String, module: APIModule, method: HTTPRequest.Method = .get, path: String,
        query: [QueryItem] = [], body: Value? = nil, headers: HTTPFields = [:]
    ) {
        storage = CopyOnWriteBox(
            Fields(
                name: name, module: module, method: method, path: path, query: query, body: body, rawBody: nil,
                bodyStream: nil, headers: headers, requestFormat: .json, responseFormat: nil, requestMessage: nil,
                responseMessage: nil, responseSchema: nil, responseShape: nil, timeout: nil, priority: .normal,
                tags: [], interceptors: [], isReplayable: true, options: EndpointOptions(), requestHints: CodingHints()))
    }

    /// The absolute URL of the call with the service's current base URL and the query.
    public func url() throws -> URL {
        try url(on: module.service.currentBaseURL)
    }

    /// The absolute URL of the call on `baseURL` (ignored when ``path`` is a full URL).
    func url(on baseURL: URL) throws -> URL {
        let base: String
        if isAbsolute {
            base = path
        } else {
            var root = baseURL.absoluteString
            while root.hasSuffix("/") { root.removeLast() }
            base = root + (path.hasPrefix("/") ? path : "/" + path)
        }
        let text = RequestTarget(base).appendingQuery(QueryItem.encode(query)).text
        guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
            throw CourierError(.invalidURL, detail: "'\(text)' is not an absolute URL",
                               context: .init(module: module.name, endpoint: name))
        }
        if let port = url.port, !(0...65535).contains(port) {
            throw CourierError(.invalidURL, detail: "'\(text)' names the port \(port), outside 0–65535",
                               context: .init(module: module.name, endpoint: name))
        }
        return url
    }
}

extension Endpoint {
    /// Whether ``path`` is an absolute URL (the endpoint is not routed to its service's hosts).
    var isAbsolute: Bool { path.hasPrefix("http://") || path.hasPrefix("https://") }
}

extension Endpoint: CustomReflectable {
    /// The endpoint's fields, as `print` and `dump` showed them before they moved into a shared box.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name, "module": module, "method": method, "path": path, "query": query, "body": body as Any,
                "rawBody": rawBody as Any, "bodyStream": bodyStream as Any, "headers": headers,
                "requestFormat": requestFormat, "responseFormat": responseFormat as Any,
                "requestMessage": requestMessage as Any, "responseMessage": responseMessage as Any,
                "responseSchema": responseSchema as Any, "responseShape": responseShape as Any,
                "timeout": timeout as Any, "priority": priority, "tags": tags, "interceptors": interceptors,
                "isReplayable": isReplayable, "options": options, "requestHints": requestHints,
            ], displayStyle: .struct)
    }
}

/// Scheduling priority of a call. Higher runs first when calls queue.
public struct Priority: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The numeric priority.
    public var rawValue: Int
    /// A priority.
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    /// Background work.
    public static let low = Priority(-100)
    /// The default.
    public static let normal = Priority(0)
    /// User-visible work.
    public static let high = Priority(100)
    public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String {
        switch rawValue {
        case Priority.low.rawValue: return "low"
        case Priority.normal.rawValue: return "normal"
        case Priority.high.rawValue: return "high"
        default: return "\(rawValue)"
        }
    }
}

/// A query parameter: one name/value pair of text, as sent (before percent-encoding). ``ParameterEncoding``
/// turns ``Value`` parameters into these pairs.
///
/// ```swift
/// endpoint.query = [QueryItem("page", "2"), QueryItem("size", "10")]
/// ```
public struct QueryItem: Hashable, Sendable {
    /// The name.
    public var name: String
    /// The value (nil: the name alone, `?flag`).
    public var value: String?

    /// A parameter.
    public init(_ name: String, _ value: String?) {
        self.name = name
        self.value = value
    }

    /// Percent-encodes a query (RFC 3986 unreserved characters stay as they are): the pairs in order,
    /// `name=value` joined with `&`, a `nil` value as the bare name. The same text as
    /// ``ParameterEncoding``'s static `render(_:)`.
    public static func encode(_ items: [QueryItem]) -> String {
        ParameterEncoding.render(items)
    }

    /// Decodes a percent-encoded query string into items (`+` stays a plus); see
    /// ``ParameterEncoding/parse(_:plusAsSpace:)``.
    public static func decode(_ query: String) -> [QueryItem] {
        ParameterEncoding.parse(query)
    }
}
