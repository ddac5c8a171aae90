#if OpenAPI
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import Courier
public import HTTPTypes
public import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` that sends a generated client's operations through a
/// `CourierClient`: each operation becomes an `Endpoint` of one `APIModule` and passes that module's
/// whole pipeline — the client's and the module's interceptors (common parameters, auth, signing,
/// encryption, cache, retry, failover, logging) and its transport — before its response goes back to the
/// generated client.
///
/// ```swift
/// let api = APIService(name: "demo", baseURL: URL(string: "https://api.example.com")!)
/// var module = APIModule(name: "demo", service: api)
/// module.interceptors = [SetHeaders([.userAgent: "MyApp/2.1"])]
/// let transport = CourierOpenAPITransport(client: CourierClient(), module: module)
/// let client = Client(serverURL: try Servers.Server1.url(), transport: transport)   // generated
/// switch try await client.getUser(path: .init(id: 7)) {
/// case .ok(let ok): print(try ok.body.json.data?.name ?? "")
/// case .undocumented(let status, _): print("unexpected", status)
/// }
/// ```
///
/// ## Statuses and errors
///
/// Every HTTP answer goes back to the generated client as a response, whatever its status, so the error
/// cases an OpenAPI document lists (`.notFound`, `.unauthorized`, …) and `.undocumented` work as they do over
/// swift-openapi's own transports: the bridge's endpoints accept every status
/// (`Endpoint.statusValidator`), so Courier's `errorMapping` stage maps none of them to
/// `CourierError.Code.http(status:)`. Everything else Courier decides still fails the call: a transport
/// failure (`CourierError.Code.cannotConnect`, `CourierError.Code.timedOut`, …), a security failure, a
/// schema violation, a business code when the module has a `BusinessRule`, a cancellation. The generated
/// client then throws its `ClientError`, whose `underlyingError` is the `CourierError` unchanged (code,
/// message, context, trace):
///
/// ```swift
/// do { _ = try await client.getUser(path: .init(id: 7)) } catch let error as ClientError {
///     if let courier = error.underlyingError as? CourierError, courier.code == .cannotConnect { showOffline() }
/// }
/// ```
///
/// ## Bodies
///
/// A request body whose length is known and at most ``Configuration/maximumBufferedRequestBodySize`` (the
/// JSON, form and text bodies generated clients send) is read into memory first, so network-role stages see
/// its bytes (signing, encryption) and a retry or an auth refresh can send it again. A longer body, or one
/// of unknown length (multipart, a stream the caller supplies), is streamed as a one-shot `BodyStream`, as
/// Courier's uploads are: it is never whole in memory and never replayed. A body of a known length that
/// yields more bytes than it declared fails with `CourierError.Code.sizeLimitExceeded`.
///
/// Response bodies are buffered: Courier's pipeline hands a response on once its body has ended (the stages
/// above the transport — decryption, validation, cache — read it whole), bounded by the client's
/// `CourierClient.Configuration.maximumResponseSize` (a longer one fails with
/// `CourierError.Code.responseTooLarge`). The generated client gets the bytes as received (after
/// decryption), as an `HTTPBody` of known length that can be read more than once. Server-sent events and
/// other endless responses need a streaming transport of swift-openapi's own.
///
/// ## Where requests go
///
/// By default (``Routing/service``) the module's `APIService` chooses the scheme and host — its current
/// environment and host, with failover — and the server URL given to the generated client contributes only
/// its path (the API's prefix, `/v1`), so a generated client built with a server URL from its document
/// still follows the service. ``Routing/serverURL`` sends to the server URL the generated client was given,
/// as is, without consulting the service.
public struct CourierOpenAPITransport: ClientTransport {
    /// How the bridge sends, with safe defaults.
    public struct Configuration: Sendable {
        /// Where requests go (default ``Routing/service``).
        public var routing: Routing
        /// The longest request body (of known length) read into memory before it is sent; longer bodies and
        /// bodies of unknown length stream, one-shot. Default 8 MiB.
        public var maximumBufferedRequestBodySize: Int
        /// Adjusts each operation's endpoint before it is sent (nil: nothing): per-operation timeouts,
        /// priorities, tags, cache or retry policies, a response schema. The endpoint's
        /// `Endpoint.name` is the operation's `operationId`.
        ///
        /// ```swift
        /// configuration.configureEndpoint = { endpoint in
        ///     if endpoint.name == "getUser" { endpoint.timeout = .seconds(5) }
        /// }
        /// ```
        public var configureEndpoint: (@Sendable (inout Endpoint) throws -> Void)?

        /// The defaults: the service's host, 8 MiB buffered request bodies, endpoints as built.
        public init() {
            self.routing = .service
            self.maximumBufferedRequestBodySize = 8 << 20
            self.configureEndpoint = nil
        }
    }

    /// Where the bridge sends a generated client's requests. A set that may grow: switch with a `default`.
    public struct Routing: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case service
            case serverURL
        }

        private let kind: Kind

        /// The module's `APIService` picks scheme and host (environment, failover); the generated client's
        /// server URL contributes only its path, as a prefix of every operation's path.
        public static let service = Routing(kind: .service)
        /// The server URL the generated client was given, as is (the service is not consulted, so there is
        /// no failover or environment switch).
        public static let serverURL = Routing(kind: .serverURL)

        public var description: String {
            switch kind {
            case .service: return "service"
            case .serverURL: return "serverURL"
            }
        }

        fileprivate var usesService: Bool { kind == .service }
    }

    /// The client whose pipeline every operation passes.
    public let client: CourierClient
    /// The module every operation's endpoint belongs to (its service, header fields, interceptors, business
    /// rule and options).
    public let module: APIModule
    /// How the bridge sends.
    public let configuration: Configuration

    /// A transport sending through `client`, as endpoints of `module`.
    public init(client: CourierClient, module: APIModule, configuration: Configuration = Configuration()) {
        self.client = client
        self.module = module
        self.configuration = configuration
    }

    /// Sends one operation through the client's pipeline and returns its response, whatever its status. A
    /// failure is thrown as the `CourierError` the pipeline produced.
    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let endpoint = try await endpoint(for: request, body: body, baseURL: baseURL, operationID: operationID)
        let reply = try await client.send(endpoint)
        return Self.response(to: request.method, metadata: reply.metadata)
    }

    /// The endpoint the bridge sends for one operation: named after `operationID`, in ``module``, with the
    /// request's method, path, query and header fields (the module's header fields stay unless the request
    /// sets the same name), its body (buffered or streamed, see the type's documentation), every status
    /// accepted, then ``Configuration/configureEndpoint`` applied.
    public func endpoint(
        for request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> Endpoint {
        let path = try Self.path(of: request, baseURL: baseURL, routing: configuration.routing, operationID: operationID,
                                 module: module.name)
        var endpoint = Endpoint(name: operationID, module: module, method: request.method, path: path,
                                headers: request.headerFields)
        // Every answer is the generated client's to interpret: its documented error statuses are cases.
        endpoint.statusValidator = StatusValidator { _ in true }
        if let contentType = request.headerFields[.contentType] {
            endpoint.requestFormat = ContentFormat(contentType: contentType) ?? .binary
        }
        if let body {
            if case .known(let length) = body.length, length <= Int64(configuration.maximumBufferedRequestBodySize) {
                endpoint.rawBody = try await Self.collect(body, declared: Int(length), endpoint: endpoint)
            } else {
                let length: Int64? = if case .known(let length) = body.length { length } else { nil }
                endpoint.bodyStream = BodyStream(Chunks(body: body), length: length)
                endpoint.isReplayable = false
            }
        }
        try configuration.configureEndpoint?(&endpoint)
        return endpoint
    }

    /// The generated client's response for `metadata`: its status and header fields, and its body (none for
    /// `HEAD`, `CONNECT` and `TRACE`).
    static func response(to method: HTTPRequest.Method, metadata: ResponseMetadata) -> (HTTPResponse, HTTPBody?) {
        let head = HTTPResponse(status: metadata.status, headerFields: metadata.headerFields)
        switch method {
        case .head, .connect, .trace: return (head, nil)
        default: return (head, HTTPBody(metadata.body))
        }
    }

    /// The endpoint path for `request`: relative to the service (the server URL's path as a prefix) or the
    /// absolute URL on the server URL. The request's path and query keep their percent-encoding.
    static func path(
        of request: HTTPRequest, baseURL: URL, routing: Routing, operationID: String, module: String
    ) throws -> String {
        var operationPath = request.path ?? "/"
        if !operationPath.hasPrefix("/") { operationPath = "/" + operationPath }
        guard var server = URLComponents(url: baseURL, resolvingAgainstBaseURL: true) else {
            throw CourierError(.invalidURL, detail: "the server URL '\(baseURL)' cannot be read",
                               context: .init(module: module, endpoint: operationID))
        }
        var prefix = server.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if routing.usesService { return prefix + operationPath }
        guard let scheme = server.scheme?.lowercased(), scheme == "http" || scheme == "https", server.host != nil
        else {
            throw CourierError(.invalidURL, detail: "the server URL '\(baseURL)' is not an absolute http(s) URL",
                               context: .init(module: module, endpoint: operationID))
        }
        server.scheme = scheme
        server.percentEncodedPath = ""
        server.percentEncodedQuery = nil
        server.fragment = nil
        guard let root = server.string else {
            throw CourierError(.invalidURL, detail: "the server URL '\(baseURL)' cannot be read",
                               context: .init(module: module, endpoint: operationID))
        }
        return root + prefix + operationPath
    }

    /// Reads a body of `declared` bytes, failing when it holds more.
    private static func collect(_ body: HTTPBody, declared: Int, endpoint: Endpoint) async throws -> Data {
        var data = Data()
        data.reserveCapacity(declared)
        for try await chunk in body {
            guard chunk.count <= declared - data.count else {
                throw CourierError(
                    .sizeLimitExceeded, detail: "the request body holds more than the \(declared) bytes it declared",
                    context: .init(module: endpoint.module.name, endpoint: endpoint.name))
            }
            data.append(contentsOf: chunk)
        }
        return data
    }
}

/// An `HTTPBody`'s chunks as `Data`, for a one-shot ``BodyStream``.
private struct Chunks: AsyncSequence, Sendable {
    typealias Element = Data
    let body: HTTPBody

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: HTTPBody.Iterator
        mutating func next() async throws -> Data? {
            try await base.next().map { Data($0) }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: body.makeAsyncIterator()) }
}
#endif
