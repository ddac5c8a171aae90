#if AsyncHTTPClient
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import AsyncHTTPClient
public import HTTPTypes
public import Logging
import Crypto
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A transport on AsyncHTTPClient (SwiftNIO), for servers and command-line tools that already run an
/// `HTTPClient`. It stops the request when the Swift task is cancelled and maps every failure to an
/// enumerated transport code (timed out, cannot connect, host not found, not connected, connection lost,
/// TLS, cancelled, other — the NIO error kept as the underlying cause). Like `FoundationTransport`
/// it guarantees, for every call:
///
/// - **Bounded bodies.** A response body never holds more than
///   `TransportOptions.maximumResponseSize` bytes (plus the one buffer being delivered) in memory:
///   a declared `Content-Length` above the limit fails at the head, and an endless body fails as soon as the
///   bytes read pass the limit — with `CourierError.Code.responseTooLarge`, the request cancelled
///   and its connection closed. AsyncHTTPClient streams the body with backpressure, so nothing is read far
///   ahead of the check. When the client inflates compressed bodies (`HTTPClient.shared` does, up to 25 times
///   the compressed size; ``boundedConfiguration(maximumResponseSize:)`` up to a fixed size), the inflated
///   bytes are the ones counted, and the client's decompression limit stops a gzip bomb before it inflates
///   further; passing that limit is `CourierError.Code.responseTooLarge` too. A client that does
///   not inflate hands over the compressed bytes, which are counted as they are.
/// - **One deadline.** `TransportOptions.timeout` bounds the whole exchange: AsyncHTTPClient's
///   deadline covers it up to the head, and the body is read under what is left of it, so a trickling or
///   endless body ends at the deadline with `CourierError.Code.timedOut`.
/// - **Challenges never stall.** A `401` (Basic, Digest, Negotiate, …) or a `407` is an ordinary HTTP
///   response for the chain: AsyncHTTPClient does not answer authentication challenges.
///
/// - **No redirects.** The client follows no redirect: a `3xx` reaches the chain, whose `redirects` stage
///   follows it by the call's `RedirectPolicy`. A client that followed one itself (one you made
///   with a `redirectConfiguration` other than `.disallow`) would hide the hop from the chain, so such a
///   call fails with `CourierError.Code.redirectRefused`. AsyncHTTPClient keeps no cookies; a
///   `CookieJar` interceptor does.
/// - **TLS by policy.** ``init(tls:configuration:logger:)`` applies a `TLSPolicy` — custom trust
///   roots (with or without the system's), a client certificate for mutual TLS, and public-key pins checked
///   on every new connection before a request is written to it.
///
/// The transport owns only the client it makes for a `TLSPolicy` (shut down with the last copy
/// of the transport); shut down a client you made yourself once you are done with it. The default
/// transport's process-wide client needs no shutdown.
///
/// ```swift
/// import AsyncHTTPClient
/// import CourierAsyncHTTPClient
///
/// let client = CourierClient(transport: HTTPClientTransport())   // the process-wide client
///
/// // Your own HTTPClient, failing at once when nothing listens instead of retrying until the deadline:
/// var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
/// configuration.connectionPool.retryConnectionEstablishment = false
/// let httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
/// let tuned = CourierClient(transport: HTTPClientTransport(client: httpClient))
/// let reply = try await tuned.send(.user(7, in: users), decoding: Envelope<User>.self)
/// try await httpClient.shutdown()
/// ```
///
/// AsyncHTTPClient retries a failed connection attempt (refused, unresolvable host, failed TLS handshake)
/// until the connect timeout or the request's deadline by default, and then reports the last attempt's
/// failure, so such a call ends with `CourierError.Code.cannotConnect`,
/// `CourierError.Code.hostNotFound` or `CourierError.Code.tlsFailure` only once its
/// timeout has run out. With `retryConnectionEstablishment` off, as above, it ends at the first failure.
/// A request without a timeout has no overall deadline: the client configuration's connect and read
/// timeouts still apply.
public struct HTTPClientTransport: Transport {
    /// The client that sends the requests. Its owner shuts it down.
    public let client: HTTPClient
    /// The logger handed to AsyncHTTPClient for each request, with the call's id as `call` metadata.
    public let logger: Logger
    /// The TLS policy the transport's own client applies (nil: the client was handed in, with its own TLS
    /// configuration).
    public let tls: TLSPolicy?
    /// Shuts down the client this transport made, when the last copy of the transport goes.
    private let owner: ClientOwner?

    /// A transport over `client`, which the caller keeps and eventually shuts down. Make the client with
    /// `redirectConfiguration: .disallow` (as ``boundedConfiguration(maximumResponseSize:)`` does): a
    /// redirect the client follows itself fails the call with `CourierError.Code.redirectRefused`.
    ///
    /// - Parameters:
    ///   - client: The AsyncHTTPClient client to send through.
    ///   - logger: Passed to AsyncHTTPClient for each request (the default logs nothing).
    public init(
        client: HTTPClient,
        logger: Logger = Logger(label: "courier.async-http-client", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.client = client
        self.logger = logger
        self.tls = nil
        self.owner = nil
    }

    /// A transport over a process-wide client that needs no shutdown: AsyncHTTPClient's
    /// `singletonConfiguration` (the configuration of `HTTPClient.shared`) with redirects left to the chain.
    ///
    /// - Parameter logger: Passed to AsyncHTTPClient for each request (the default logs nothing).
    public init(
        logger: Logger = Logger(label: "courier.async-http-client", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.init(client: Self.sharedClient, logger: logger)
    }

    /// A transport with a client of its own that applies `tls`: its trust roots and client certificate on
    /// every connection, and its pins checked on every new TLS connection before a request is written (a
    /// mismatch closes the connection and fails the call with
    /// `CourierError.Code.certificatePinMismatch`; with pins, a plain `http` URL is refused the
    /// same way). The client is shut down when the last copy of the transport goes.
    ///
    /// ```swift
    /// let tls = try TLSPolicy(trustRoots: [.file("ca.pem")], pins: ["sha256/r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="])
    /// let client = CourierClient(transport: try HTTPClientTransport(tls: tls))
    /// ```
    ///
    /// - Parameters:
    ///   - tls: The policy.
    ///   - configuration: The rest of the client's configuration (its TLS configuration is replaced, and its
    ///     redirects are left to the chain).
    ///   - logger: Passed to AsyncHTTPClient for each request (the default logs nothing).
    /// - Throws: `CourierError.Code.invalidConfiguration` when a certificate or key cannot be read.
    public init(
        tls: TLSPolicy, configuration: HTTPClient.Configuration = Self.boundedConfiguration(),
        logger: Logger = Logger(label: "courier.async-http-client", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        var configuration = configuration
        configuration.tlsConfiguration = try Self.tlsConfiguration(tls)
        configuration.redirectConfiguration = .disallow
        if !tls.pins.isEmpty {
            let check = Self.pinCheck(tls)
            let http1 = configuration.http1_1ConnectionDebugInitializer
            let http2 = configuration.http2ConnectionDebugInitializer
            configuration.http1_1ConnectionDebugInitializer = { channel in
                check(channel).flatMap { http1?(channel) ?? channel.eventLoop.makeSucceededVoidFuture() }
            }
            configuration.http2ConnectionDebugInitializer = { channel in
                check(channel).flatMap { http2?(channel) ?? channel.eventLoop.makeSucceededVoidFuture() }
            }
        }
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.client = client
        self.logger = logger
        self.tls = tls
        self.owner = ClientOwner(client)
    }

    /// The process-wide client of ``init(logger:)``: `HTTPClient.shared`'s configuration without redirects.
    static let sharedClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Shuts a transport's own client down when the last copy of the transport goes.
    private final class ClientOwner: Sendable {
        let client: HTTPClient
        init(_ client: HTTPClient) { self.client = client }
        deinit { client.shutdown { _ in } }
    }

    /// Sends `request` with `body` and returns the response head and the whole body, or throws a
    /// `CourierError` of the transport category (`CourierError.Code.responseTooLarge`
    /// past `options.maximumResponseSize`, `CourierError.Code.cancelled` when the task is cancelled).
    public func send(
        _ request: HTTPRequest, body: Data?, options: TransportOptions
    ) async throws -> (HTTPResponse, Data) {
        if let tls, !tls.pins.isEmpty, request.scheme?.lowercased() != "https" {
            throw Self.pinMismatch(
                "this transport pins public keys, and an \(request.scheme ?? "http") URL has no certificate to check")
        }
        let outgoing = try Self.clientRequest(request, body: body)
        var logger = logger
        if let callID = options.callID { logger[metadataKey: "call"] = "\(callID)" }
        let clock = ContinuousClock()
        let end = options.timeout.map { clock.now + $0 }
        do {
            // AsyncHTTPClient's deadline covers the exchange up to the response head; the body is read under
            // what is left of the same timeout.
            let deadline = options.timeout.map { NIODeadline.now() + .nanoseconds(Self.nanoseconds($0)) }
            let response = try await client.execute(outgoing, deadline: deadline ?? .distantFuture, logger: logger)
            if response.history.count > 1 {
                // The client followed a redirect the chain never saw (its policy, dropped credentials, hops).
                var refused = CourierError(
                    .redirectRefused,
                    detail: "the HTTPClient followed a redirect itself (to \(response.url?.absoluteString ?? "another URL")); "
                        + "make it with redirectConfiguration .disallow so the chain's RedirectPolicy applies")
                refused.context.stage = "transport"
                throw refused
            }
            let head = try Self.responseHead(response)
            let limit = options.maximumResponseSize
            let declared = response.headers.first(name: "Content-Length").flatMap { Int($0) }
            // A HEAD, 204 or 304 answer declares the length of a body it does not carry.
            let hasBody = request.method != .head && ![204, 304].contains(response.status.code)
            if hasBody, let declared, declared > limit {
                // Dropping the unread body makes AsyncHTTPClient close the connection.
                throw Self.tooLarge("the response declares \(declared) bytes; the limit is \(limit)")
            }
            let responseBody = response.body
            let data: Data
            do {
                data = try await withTimeout(end.map { $0 - clock.now }) {
                    try await Self.collect(responseBody, limit: limit, expected: hasBody ? declared : nil)
                }
            } catch let error as CourierError where error.code == .timedOut {
                let timeout = options.timeout ?? .zero
                throw TransportFailure.timedOut.error(detail: "the body did not arrive within \(timeout)")
            }
            return (head, data)
        } catch {
            throw Self.map(error, cancelled: Task.isCancelled, timeout: options.timeout)
        }
    }

    /// Sends `request` with `body` streamed as AsyncHTTPClient reads it (`Content-Length` when the length
    /// is known, else chunked) and writes the response body to `sink` buffer by buffer as AsyncHTTPClient's
    /// backpressured body sequence delivers it (nothing is read ahead of the sink). One deadline covers the
    /// exchange, cancellation stops it, and an error the sink or the body throws ends it with that error.
    public func stream(
        _ request: HTTPRequest, body: BodyStream?, options: TransportOptions, into sink: any ResponseBodySink
    ) async throws -> HTTPResponse {
        var outgoing = try Self.clientRequest(request, body: nil)
        // AsyncHTTPClient reads a streamed body from a task of its own that nothing cancels: a one-shot body's
        // reads run in tasks this call cancels when it ends, so a producer that waits is let go with the call.
        let scope = UploadScope()
        defer { scope.end() }
        if let body {
            let length: HTTPClientRequest.Body.Length = body.length.map { .known($0) } ?? .unknown
            if body.makeBlockingReader() != nil {
                // A file stays open while read: the call closes it when it ends, whatever AsyncHTTPClient's
                // task still holds.
                outgoing.body = .stream(ReaderBody(body: body, scope: scope), length: length)
            } else {
                outgoing.body = .stream(ScopedBody(body: body, scope: scope), length: length)
            }
        }
        var logger = logger
        if let callID = options.callID { logger[metadataKey: "call"] = "\(callID)" }
        let client = client
        let finalRequest = outgoing
        let bodyLogger = logger
        do {
            return try await withTimeout(options.timeout) {
                let deadline = options.timeout.map { NIODeadline.now() + .nanoseconds(Self.nanoseconds($0)) }
                let response = try await client.execute(
                    finalRequest, deadline: deadline ?? .distantFuture, logger: bodyLogger)
                let head = try Self.responseHead(response)
                try sink.begin(head)
                // Leaving the loop early (the sink threw) drops the iterator: AsyncHTTPClient cancels the request.
                for try await buffer in response.body {
                    try sink.write(Data(buffer.readableBytesView))
                }
                return head
            }
        } catch let error as CourierError where error.code == .timedOut && error.underlying == nil {
            throw TransportFailure.timedOut.error(detail: "the exchange did not finish within \(options.timeout ?? .zero)")
        } catch {
            throw Self.map(error, cancelled: Task.isCancelled, timeout: options.timeout)
        }
    }

    /// Ends the reads of a one-shot upload when its call ends.
    final class UploadScope: Sendable {
        /// Whether the call has ended, the one-shot read in flight, and the files open.
        private let state = Locked<(ended: Bool, current: Task<Data?, any Error>?, open: [BlockingReader])>(
            (false, nil, []))

        /// `reader`, closed when the call ends.
        func adopt(_ reader: BlockingReader) {
            let ended = state.withLock { state -> Bool in
                if !state.ended { state.open.append(reader) }
                return state.ended
            }
            if ended { reader.close() }
        }

        /// The next chunk of `reader`, unless the call has ended (read under the lock: `end()` waits for it).
        func read(_ reader: BlockingReader) throws -> Data? {
            try state.withLock { state -> Data? in
                if state.ended { throw CancellationError() }
                return try reader.read()
            }
        }

        /// The next chunk, read in a task ``end()`` cancels.
        func read(_ next: @escaping @Sendable () async throws -> Data?) async throws -> Data? {
            let task = Task { try await next() }
            let alreadyEnded = state.withLock { state -> Bool in
                if state.ended { return true }
                state.current = task
                return false
            }
            if alreadyEnded { task.cancel() }
            let chunk = try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
            // A producer that ends its sequence when cancelled must not be taken for a whole body.
            if state.withLock({ $0.ended }) { throw CancellationError() }
            return chunk
        }

        /// The call has ended: the read in flight is cancelled, the files are closed, and later reads fail.
        func end() {
            let (task, open) = state.withLock { state -> (Task<Data?, any Error>?, [BlockingReader]) in
                state.ended = true
                defer { (state.current, state.open) = (nil, []) }
                return (state.current, state.open)
            }
            task?.cancel()
            for reader in open { reader.close() }
        }
    }

    /// A replayable body as the buffers AsyncHTTPClient reads, from a reader the call closes when it ends.
    struct ReaderBody: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let body: BodyStream
        let scope: UploadScope

        struct AsyncIterator: AsyncIteratorProtocol {
            let reader: BlockingReader?
            let scope: UploadScope
            mutating func next() async throws -> ByteBuffer? {
                try Task.checkCancellation()
                guard let reader else { return nil }
                return try scope.read(reader).map { ByteBuffer(bytes: $0) }
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            let reader = body.makeBlockingReader()
            if let reader { scope.adopt(reader) }
            return AsyncIterator(reader: reader, scope: scope)
        }
    }

    /// A one-shot body as the buffers AsyncHTTPClient reads, each read under `scope`.
    struct ScopedBody: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let body: BodyStream
        let scope: UploadScope

        final class Box: @unchecked Sendable {
            // @unchecked: AsyncHTTPClient reads one chunk at a time.
            var iterator: BodyStream.AsyncIterator
            init(_ iterator: BodyStream.AsyncIterator) { self.iterator = iterator }
            func next() async throws -> Data? { try await iterator.next() }
        }

        struct AsyncIterator: AsyncIteratorProtocol {
            let box: Box
            let scope: UploadScope
            mutating func next() async throws -> ByteBuffer? {
                let box = box
                return try await scope.read { try await box.next() }.map { ByteBuffer(bytes: $0) }
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(box: Box(body.makeAsyncIterator()), scope: scope) }
    }

    // MARK: - Conversions

    /// AsyncHTTPClient's request for `request` and `body`.
    static func clientRequest(_ request: HTTPRequest, body: Data?) throws -> HTTPClientRequest {
        let text = "\(request.scheme ?? "http")://\(request.authority ?? "")\(request.path ?? "/")"
        guard let host = URL(string: text)?.host, !host.isEmpty else {
            throw CourierError(.invalidURL, detail: "'\(text)' is not a valid URL")
        }
        var outgoing = HTTPClientRequest(url: text)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headerFields.count)
        for field in request.headerFields where field.name != .cookie {
            headers.add(name: field.name.rawName, value: field.value)
        }
        // HTTPFields splits "Cookie" into one field per cookie; HTTP/1.1 allows one "Cookie" line, the cookies
        // joined by "; " (RFC 6265 §5.4).
        if let cookie = request.headerFields[.cookie] {
            headers.add(name: "Cookie", value: cookie)
        }
        outgoing.headers = headers
        if let body {
            outgoing.body = .bytes(body)
        }
        return outgoing
    }

    /// The swift-http-types head of AsyncHTTPClient's `response`.
    static func responseHead(_ response: HTTPClientResponse) throws -> HTTPResponse {
        let code = Int(response.status.code)
        guard (100...999).contains(code) else {
            throw TransportFailure.other.error(detail: "the server answered with status \(code)")
        }
        var head = HTTPResponse(status: HTTPResponse.Status(code: code, reasonPhrase: response.status.reasonPhrase))
        head.headerFields.reserveCapacity(response.headers.count)
        for (name, value) in response.headers {
            guard let fieldName = HTTPField.Name(name) else { continue }
            head.headerFields.append(HTTPField(name: fieldName, value: value))
        }
        return head
    }

    /// Reads `body` to its end, failing as soon as it passes `limit` bytes.
    static func collect(_ body: HTTPClientResponse.Body, limit: Int, expected: Int?) async throws -> Data {
        var data = Data()
        if let expected, expected > 0 { data.reserveCapacity(expected) }
        for try await buffer in body {
            guard buffer.readableBytes <= limit - data.count else {
                // Leaving the loop drops the body's iterator, and AsyncHTTPClient then cancels the request.
                throw tooLarge("the response exceeds \(limit) bytes")
            }
            data.append(contentsOf: buffer.readableBytesView)
        }
        return data
    }

    /// A client configuration for this transport: AsyncHTTPClient's defaults, with compressed bodies inflated
    /// up to `maximumResponseSize` bytes (a larger inflated body fails as
    /// `CourierError.Code.responseTooLarge`) and a failed connection attempt reported at once.
    ///
    /// ```swift
    /// let httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup,
    ///                             configuration: HTTPClientTransport.boundedConfiguration())
    /// let client = CourierClient(transport: HTTPClientTransport(client: httpClient))
    /// ```
    public static func boundedConfiguration(maximumResponseSize: Int = 64 << 20) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.decompression = .enabled(limit: .size(max(0, maximumResponseSize)))
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    // MARK: - TLS

    /// NIOSSL's client configuration for `policy`.
    static func tlsConfiguration(_ policy: TLSPolicy) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !policy.trustRoots.isEmpty {
            let roots = try policy.trustRoots.flatMap { try certificates($0, role: "trust root") }
            if policy.trustsSystemRoots {
                tls.trustRoots = .default
                tls.additionalTrustRoots = [.certificates(roots)]
            } else {
                tls.trustRoots = .certificates(roots)
            }
        }
        if let identity = policy.clientCertificate {
            tls.certificateChain = try certificates(identity.certificateChain, role: "client certificate")
                .map { .certificate($0) }
            let (bytes, isPEM) = try identity.privateKey.load()
            do {
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: bytes, format: isPEM ? .pem : .der))
            } catch {
                throw CourierError(.invalidConfiguration, detail: "the client certificate's private key cannot be read",
                                   underlying: error)
            }
        }
        return tls
    }

    /// The certificates in `source`.
    static func certificates(_ source: TLSPolicy.Source, role: String) throws -> [NIOSSLCertificate] {
        let (bytes, isPEM) = try source.load()
        let certificates: [NIOSSLCertificate]
        do {
            certificates = isPEM ? try NIOSSLCertificate.fromPEMBytes(bytes) : [try NIOSSLCertificate(bytes: bytes, format: .der)]
        } catch {
            throw CourierError(.invalidConfiguration, detail: "the \(role) is not a PEM or DER certificate", underlying: error)
        }
        guard !certificates.isEmpty else {
            throw CourierError(.invalidConfiguration, detail: "the \(role) holds no certificate")
        }
        return certificates
    }

    /// The SHA-256 digest of `certificate`'s DER `SubjectPublicKeyInfo`: what a pin names.
    static func publicKeyDigest(_ certificate: NIOSSLCertificate) throws -> [UInt8] {
        Array(SHA256.hash(data: try certificate.extractPublicKey().toSPKIBytes()))
    }

    /// Checks a new connection's leaf certificate against `policy`'s pins, closing the connection and failing
    /// on a mismatch (a connection without TLS carries no certificate and is refused earlier, in ``send``).
    static func pinCheck(_ policy: TLSPolicy) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        { channel in
            channel.eventLoop.submit {
                guard let handler = try? channel.pipeline.syncOperations.handler(type: NIOSSLHandler.self) else {
                    channel.close(promise: nil)
                    throw pinMismatch("the connection has no TLS to check")
                }
                guard let leaf = handler.peerCertificate, let digest = try? publicKeyDigest(leaf) else {
                    channel.close(promise: nil)
                    throw pinMismatch("the server presented no certificate whose key could be read")
                }
                guard policy.accepts(publicKeyDigest: digest) else {
                    channel.close(promise: nil)
                    let seen = "sha256/" + Data(digest).base64EncodedString()
                    throw pinMismatch("the server's key is \(seen); the pins are \(policy.pins.map(\.description).joined(separator: ", "))")
                }
            }
        }
    }

    static func pinMismatch(_ detail: String) -> CourierError {
        var error = CourierError(.certificatePinMismatch, detail: detail)
        error.context.stage = "transport"
        return error
    }

    /// A ``Courier/CourierError/Code/responseTooLarge`` failure of the transport stage.
    static func tooLarge(_ detail: String) -> CourierError {
        var error = CourierError(.responseTooLarge, detail: detail)
        error.context.stage = "transport"
        return error
    }

    /// `duration` in whole nanoseconds, saturating at `Int64.max`.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }

    // MARK: - Failures

    /// `error` as a transport ``Courier/CourierError``; a call whose task was cancelled is
    /// ``Courier/CourierError/Code/cancelled`` whatever AsyncHTTPClient reported.
    static func map(_ error: any Error, cancelled: Bool, timeout: Duration?) -> CourierError {
        if let error = error as? CourierError { return error }
        if let decompression = error as? NIOHTTPDecompression.DecompressionError, decompression == .limit {
            var tooLarge = Self.tooLarge("the response inflates past the client's decompression limit")
            tooLarge.underlying = error
            return tooLarge
        }
        if cancelled { return TransportFailure.cancelled.error(underlying: error) }
        if let client = error as? HTTPClientError,
            [HTTPClientError.invalidURL, .emptyHost, .emptyScheme].contains(client)
        {
            var invalid = CourierError(.invalidURL, detail: "\(client)", underlying: error)
            invalid.context.stage = "transport"
            return invalid
        }
        let failure = Self.failure(for: error)
        let detail: String?
        switch failure {
        case .timedOut: detail = timeout.map { "no answer within \($0)" }
        case .other: detail = String(describing: error)
        default: detail = nil
        }
        return failure.error(detail: detail, underlying: error)
    }

    /// The enumerated failure for an error AsyncHTTPClient, SwiftNIO or NIOSSL threw.
    static func failure(for error: any Error) -> TransportFailure {
        switch error {
        case is CancellationError:
            return .cancelled
        case let client as HTTPClientError:
            switch client {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                return .timedOut
            case .cancelled, .requestStreamCancelled:
                return .cancelled
            case .remoteConnectionClosed:
                return .connectionLost
            default:
                return .other
            }
        case let connection as NIOConnectionError:
            // Resolution failed when there was nothing to connect to; else the attempts say why.
            if connection.connectionErrors.isEmpty, connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return .hostNotFound
            }
            let attempts = connection.connectionErrors.map { failure(for: $0.error) }
            if attempts.contains(.notConnected), attempts.allSatisfy({ $0 == .notConnected }) { return .notConnected }
            if attempts.contains(.timedOut), attempts.allSatisfy({ $0 == .timedOut }) { return .timedOut }
            return .cannotConnect
        case is SocketAddressError.UnknownHost:
            return .hostNotFound
        case let io as IOError:
            return TransportFailure(errno: io.errnoCode)
        case let channel as ChannelError:
            switch channel {
            case .connectTimeout: return .timedOut
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed: return .connectionLost
            default: return .other
            }
        case let parser as HTTPParserError:
            // The connection closed before the message's end (a cut body, a missing head).
            return parser == .invalidEOFState ? .connectionLost : .other
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return .tlsFailure
        default:
            return .other
        }
    }
}
#endif
