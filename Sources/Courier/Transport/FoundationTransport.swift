public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import HTTPTypes
import Dispatch

/// The default transport, on `URLSession` (FoundationNetworking on Linux). It maps every failure to an
/// enumerated transport code (timed out, cannot connect, host not found, not connected, connection lost, TLS,
/// cancelled, other) and guarantees, for every call:
///
/// - **Bounded bodies.** A response body never holds more than ``TransportOptions/maximumResponseSize`` bytes
///   (plus the one buffer being delivered) in memory. A declared `Content-Length` above the limit fails at the
///   head; an endless body, or a compressed body whose *inflated* size passes the limit (libcurl inflates
///   gzip and deflate before Courier sees the bytes, so the delivered bytes are the ones counted), fails as
///   soon as the count passes it. The call ends at once with ``CourierError/Code/responseTooLarge`` and the
///   task is cancelled, which closes its connection.
/// - **One deadline.** ``TransportOptions/timeout`` bounds the whole exchange, body included: a trickling or
///   endless body ends at the deadline with ``CourierError/Code/timedOut``, and the task is cancelled.
/// - **Challenges never stall.** A `401` (Basic, Digest, Negotiate, …) or a `407` is an ordinary HTTP
///   response for the chain: the session keeps no credentials and never waits for one (the delegate answers
///   an authentication challenge by handing the challenge's response to the call).
/// - **Cancellation.** Cancelling the Swift task ends the call at once with ``CourierError/Code/cancelled``.
///
/// - **No redirects, no cookies of its own.** The session follows no redirect: a `3xx` reaches the chain,
///   whose `redirects` stage follows it by the call's ``RedirectPolicy``. The session keeps and sends no
///   cookies (`httpCookieStorage` is nil); a ``CookieJar`` interceptor does that, per module.
///
/// One limit of FoundationNetworking remains: the body of a redirect (301, 302, 303, 305–308 with a
/// `Location`) is buffered inside it until the transfer ends, and only then reaches the delegate (where the
/// size limit applies), so only the deadline ends a call whose redirect body never ends. The call returns at
/// the deadline, but the transfer goes on until FoundationNetworking takes the cancellation, which a server
/// flooding that body can put off for as long as it floods, holding memory and the work queue every session
/// of the process shares. Against servers you do not trust, prefer `HTTPClientTransport` (product
/// `CourierAsyncHTTPClient`), which has no such limit.
///
/// **TLS.** The session trusts the system's roots (the CA bundle libcurl finds) and nothing else can be set
/// per session: ``init(configuration:tls:)`` refuses any ``TLSPolicy`` but ``TLSPolicy/system`` with
/// ``CourierError/Code/unsupportedByTransport``. FoundationNetworking (swift-corelibs-foundation) marks
/// `NSURLAuthenticationMethodServerTrust` and `URLProtectionSpace.serverTrust` unavailable ("does not support
/// methods of authentication that rely on the Darwin Security framework") and
/// `NSURLAuthenticationMethodClientCertificate` unavailable ("does not currently support certificate
/// authentication"); it delivers challenges only for `401` Basic and Digest, its `URLCredential` holds a user
/// and password only, and libcurl's CA file is chosen process-wide (a fixed list of bundle paths), never per
/// session. So there is no point at which a pin could be checked, a custom root added or a client
/// certificate presented. Use `HTTPClientTransport(tls:)` for those.
///
/// On Linux, FoundationNetworking hands the delegate's callbacks to the session's delegate queue without
/// waiting for them, so a fast server could queue gigabytes of body ahead of the size check; this transport's
/// session therefore runs its delegate's callbacks on the session's own work queue as each buffer arrives,
/// which makes the transfer wait for the size check.
///
/// ```swift
/// let client = CourierClient(transport: FoundationTransport())
/// var configuration = URLSessionConfiguration.ephemeral
/// configuration.httpMaximumConnectionsPerHost = 4
/// let tuned = CourierClient(transport: FoundationTransport(configuration: configuration))
/// ```
public final class FoundationTransport: Transport {
    private let session: URLSession
    private let delegate: Delegate

    /// A transport with its own session (ephemeral: no cookies, cache or credentials).
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        let delegate = Delegate()
        self.delegate = delegate
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        #if canImport(FoundationNetworking)
        let queue: OperationQueue = InlineDelegateQueue()
        #else
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        #endif
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    /// A transport with its own session under `tls`, which must be ``TLSPolicy/system``: FoundationNetworking
    /// has no per-session trust roots, pins or client certificates (see the type's documentation), and a
    /// policy it cannot enforce is refused rather than ignored. The same holds on Apple platforms, where this
    /// transport does not implement the Security framework's trust evaluation.
    ///
    /// ```swift
    /// let transport = try FoundationTransport(tls: .system)
    /// ```
    ///
    /// - Throws: ``CourierError/Code/unsupportedByTransport`` for any other policy.
    public convenience init(configuration: URLSessionConfiguration = .ephemeral, tls: TLSPolicy) throws {
        guard tls.isSystemDefault else {
            var asked: [String] = []
            if !tls.trustRoots.isEmpty { asked.append("custom trust roots") }
            if !tls.pins.isEmpty { asked.append("public-key pins") }
            if tls.clientCertificate != nil { asked.append("a client certificate") }
            var error = CourierError(
                .unsupportedByTransport,
                detail: "FoundationTransport cannot apply \(asked.joined(separator: ", ")): FoundationNetworking has no "
                    + "server-trust or client-certificate challenge and no per-session CA file; use HTTPClientTransport(tls:)")
            error.context.stage = "transport"
            throw error
        }
        self.init(configuration: configuration)
    }

    deinit {
        // Off the releasing thread: FoundationNetworking's invalidation waits for the session's work queue,
        // which a server flooding a redirect's body (buffered inside FoundationNetworking, out of the
        // delegate's sight) can keep busy long after the call has ended at its deadline.
        delegate.invalidate(session)
    }

    /// Sends `request` with `body` and returns the response head and the whole body, under the type's
    /// guarantees (bounded body, one deadline, challenges as responses, prompt cancellation).
    public func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
        let urlRequest = try Self.urlRequest(request, body: body, timeout: options.timeout)
        // URLSession's own timer counts idle time in whole seconds on Linux; the deadline is ours.
        return try await withTimeout(options.timeout) {
            try await self.exchange(urlRequest, options: options)
        }
    }

    /// Streams `body` from an input stream libcurl reads as it sends, with chunked transfer coding (a one-shot
    /// body is first spooled to a temporary file, so what libcurl reads never waits on a producer) and writes the response
    /// body to `sink` on the session's work queue as each buffer arrives: libcurl waits for the sink, which
    /// is the transfer's backpressure. The guarantees are those of ``send(_:body:options:)``: one deadline,
    /// challenges as responses, prompt cancellation, with the sink setting the body's limit.
    public func stream(
        _ request: HTTPRequest, body: BodyStream?, options: TransportOptions, into sink: any ResponseBodySink
    ) async throws -> HTTPResponse {
        let base = try Self.urlRequest(request, body: nil, timeout: options.timeout)
        // The deadline covers spooling a one-shot body too: a producer that stalls is the call's to time out.
        return try await withTimeout(options.timeout) {
            var urlRequest = base
            var spooled: URL?
            defer { if let spooled { try? FileManager.default.removeItem(at: spooled) } }
            var input: BodyInputStream?
            if var body {
                if body.makeBlockingReader() == nil {
                    let file = try await Self.spool(body)
                    spooled = file
                    body = try .file(file)
                }
                let stream = BodyInputStream(body)
                input = stream
                urlRequest.httpBodyStream = stream
                // FoundationNetworking sends every body stream chunked and adds `Transfer-Encoding: chunked` even
                // beside a Content-Length (which servers then reject as ambiguous), so the length is not declared
                // here; HTTPClientTransport declares it.
                urlRequest.setValue(nil, forHTTPHeaderField: "Content-Length")
            }
            let streamed = Streamed(sink: sink, input: input)
            return try await self.exchange(urlRequest, options: options, streamed: streamed).0
        }
    }

    /// Writes a one-shot body to a temporary file (it cannot be read from libcurl's thread without blocking
    /// it on the body's producer).
    static func spool(_ body: BodyStream) async throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: file)
        else {
            try? FileManager.default.removeItem(at: file)     // created, but not opened (out of descriptors)
            throw CourierError(.fileAccessFailed, detail: "cannot create a temporary file for the upload")
        }
        defer { try? handle.close() }
        do {
            for try await chunk in body { try handle.write(contentsOf: chunk) }
            // A producer that ends its sequence when cancelled (AsyncStream) must not be taken for a whole body.
            try Task.checkCancellation()
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw CourierError.wrap(error, as: .fileAccessFailed)
        }
        return file
    }

    private func exchange(
        _ urlRequest: URLRequest, options: TransportOptions, streamed: Streamed? = nil
    ) async throws -> (HTTPResponse, Data) {
        let holder = Locked<URLSessionTask?>(nil)
        let delegate = delegate
        let session = session
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(HTTPResponse, Data), any Error>) in
                let task = session.dataTask(with: urlRequest)
                task.priority = options.priority.urlSessionPriority
                delegate.register(task, limit: options.maximumResponseSize, streamed: streamed, continuation: continuation)
                holder.withLock { $0 = task }
                if Task.isCancelled {
                    delegate.abandon(task, with: TransportFailure.cancelled.error())
                    return
                }
                task.resume()
            }
        } onCancel: {
            // The call ends now; the task is cancelled behind it.
            if let task = holder.withLock({ $0 }) {
                delegate.abandon(task, with: TransportFailure.cancelled.error())
            }
        }
    }

    static func urlRequest(_ request: HTTPRequest, body: Data?, timeout: Duration?) throws -> URLRequest {
        let text = "\(request.scheme ?? "http")://\(request.authority ?? "")\(request.path ?? "/")"
        guard let url = URL(string: text) else {
            throw CourierError(.invalidURL, detail: "'\(text)' is not a valid URL")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields where field.name != .cookie {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        // HTTPFields splits "Cookie" into one field per cookie; HTTP/1.1 sends them as one line, joined by "; "
        // (RFC 6265 §5.4), where URLSession would join repeated fields with ",".
        if let cookie = request.headerFields[.cookie] {
            urlRequest.setValue(cookie, forHTTPHeaderField: "Cookie")
        }
        urlRequest.httpBody = body
        if let timeout {
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            urlRequest.timeoutInterval = (seconds + 1).rounded(.up)
        }
        return urlRequest
    }

    /// The status with its standard reason phrase where HTTPTypes knows one.
    static func status(_ code: Int) -> HTTPResponse.Status {
        let known: [HTTPResponse.Status] = [
            .continue, .switchingProtocols, .ok, .created, .accepted, .nonAuthoritativeInformation, .noContent,
            .resetContent, .partialContent, .multipleChoices, .movedPermanently, .found, .seeOther, .notModified,
            .temporaryRedirect, .permanentRedirect, .badRequest, .unauthorized, .forbidden, .notFound,
            .methodNotAllowed, .notAcceptable, .proxyAuthenticationRequired, .requestTimeout, .conflict, .gone,
            .lengthRequired, .preconditionFailed, .contentTooLarge, .uriTooLong, .unsupportedMediaType,
            .rangeNotSatisfiable, .expectationFailed, .misdirectedRequest, .unprocessableContent, .tooEarly,
            .upgradeRequired, .preconditionRequired, .tooManyRequests, .requestHeaderFieldsTooLarge,
            .unavailableForLegalReasons, .internalServerError, .notImplemented, .badGateway, .serviceUnavailable,
            .gatewayTimeout, .httpVersionNotSupported, .networkAuthenticationRequired,
        ]
        return known.first { $0.code == code } ?? HTTPResponse.Status(code: code)
    }

    static func map(_ error: any Error) -> CourierError {
        if let error = error as? CourierError { return error }
        let code = (error as? URLError)?.code ?? URLError.Code(rawValue: (error as NSError).code)
        let failure: TransportFailure
        switch code {
        case .timedOut: failure = .timedOut
        case .cannotConnectToHost: failure = .cannotConnect
        case .cannotFindHost, .dnsLookupFailed: failure = .hostNotFound
        case .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff: failure = .notConnected
        case .networkConnectionLost: failure = .connectionLost
        case .cancelled: failure = .cancelled
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired:
            failure = .tlsFailure
        default:
            // FoundationNetworking reports libcurl's TLS failures and dropped connections as an unknown error
            // whose only trace is a message; a POSIX error underneath says more when there is one.
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            if let underlying, underlying.domain == NSPOSIXErrorDomain,
                case let mapped = TransportFailure(errno: Int32(truncatingIfNeeded: underlying.code)), mapped != .other
            {
                failure = mapped
            } else {
                failure = TransportFailure(message: "\(error.localizedDescription) \((error as NSError).userInfo)") ?? .other
            }
        }
        return failure.error(detail: failure == .other ? error.localizedDescription : nil, underlying: error)
    }

    /// The swift-http-types head of `response`.
    static func head(_ response: HTTPURLResponse) -> HTTPResponse {
        var head = HTTPResponse(status: status(response.statusCode))
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String,
                let fieldName = HTTPField.Name(name)
            else { continue }
            head.headerFields.append(HTTPField(name: fieldName, value: value))
        }
        return head
    }

    /// A ``CourierError/Code/responseTooLarge`` failure of the transport stage.
    static func tooLarge(_ detail: String) -> CourierError {
        var error = CourierError(.responseTooLarge, detail: detail)
        error.context.stage = "transport"
        return error
    }

    /// A streamed exchange's sink and request body.
    struct Streamed: @unchecked Sendable {
        // @unchecked: the input stream is read by FoundationNetworking on its work queue, one call at a time,
        // and its failure is read under its lock.
        var sink: any ResponseBodySink
        var input: BodyInputStream?
    }

    /// A ``BodyStream`` as the `InputStream` libcurl reads the request body from, synchronously on the
    /// session's work queue (only replayable bodies, whose reads are memory copies and file reads). A read
    /// that fails (the file changed) is kept as ``failure`` and reported as the call's error.
    final class BodyInputStream: InputStream {
        // @unchecked: FoundationNetworking opens and reads the stream from its work queue, one call at a time;
        // `failure` is read after the task completed, under the lock.
        private let body: BodyStream
        private var reader: BlockingReader?
        private var pending = Data()
        private var position = 0
        private var status: Stream.Status = .notOpen
        private let error = Locked<CourierError?>(nil)

        init(_ body: BodyStream) {
            self.body = body
            super.init(data: Data())
        }

        /// Why reading the body failed, if it did.
        var failure: CourierError? { error.withLock { $0 } }

        override func open() {
            reader = body.makeBlockingReader()
            status = .open
        }

        override func close() {
            reader?.close()
            reader = nil
            status = .closed
        }

        override var streamStatus: Stream.Status { status }
        override var streamError: (any Error)? { failure }
        override var hasBytesAvailable: Bool { status == .open }

        override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
            guard status == .open, length > 0 else { return 0 }
            if position >= pending.count {
                do {
                    guard let chunk = try reader?.read() else {
                        status = .atEnd
                        return 0
                    }
                    pending = chunk
                    position = 0
                } catch {
                    self.error.withLock { $0 = CourierError.wrap(error, as: .bodySourceChanged) }
                    status = .error
                    return -1
                }
            }
            let count = min(length, pending.count - position)
            pending.withUnsafeBytes { bytes in
                UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + position, byteCount: count)
            }
            position += count
            return count
        }

        override func getBuffer(
            _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>
        ) -> Bool { false }
    }

    #if canImport(FoundationNetworking)
    /// The session's delegate queue on Linux: it runs each callback at once, on the thread that delivers it
    /// (the session's work queue), instead of queueing it. FoundationNetworking does not wait for queued
    /// callbacks, so with a real queue a fast server's body piles up in memory ahead of the size check; run
    /// inline, the transfer waits for the check. The delegate's callbacks therefore never block, and never call
    /// a task's `cancel()` (or a completion handler that cancels) synchronously, which would wait for the very
    /// queue they run on: they hand such calls to the delegate's control queue.
    private final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            block()
        }
    }
    #endif

    /// Collects each task's body under its size limit and resumes its continuation exactly once: with the
    /// response, with the first failure (too large, cancelled, the transfer's error), or with the `401`/`407`
    /// of an authentication challenge.
    private final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        private struct Pending {
            var continuation: CheckedContinuation<(HTTPResponse, Data), any Error>
            var limit: Int
            var data = Data()
            /// A streamed exchange: the sink the body goes to, and whether it has seen the head.
            var streamed: Streamed?
            var begun = false
        }

        private let pending = Locked<[Int: Pending]>([:])
        /// Where tasks are cancelled, challenges answered and the session invalidated, in that order, off the
        /// session's work queue and off the callers' threads.
        private let control = DispatchQueue(label: "courier.urlsession-transport.control")

        /// Invalidates `session` (cancelling its tasks) once the cancellations handed over before it are done.
        func invalidate(_ session: URLSession) {
            control.async { session.invalidateAndCancel() }
        }

        /// Starts collecting `task`'s body under `limit`.
        func register(
            _ task: URLSessionTask, limit: Int, streamed: Streamed?,
            continuation: CheckedContinuation<(HTTPResponse, Data), any Error>
        ) {
            pending.withLock {
                $0[task.taskIdentifier] = Pending(continuation: continuation, limit: limit, streamed: streamed)
            }
        }

        /// Hands `head` to a streamed task's sink once; false (and the call ended) when the sink refused it.
        private func begin(_ task: URLSessionTask, _ head: HTTPResponse) -> Bool {
            let sink = pending.withLock { state -> (any ResponseBodySink)? in
                guard var entry = state[task.taskIdentifier], let streamed = entry.streamed, !entry.begun else { return nil }
                entry.begun = true
                state[task.taskIdentifier] = entry
                return streamed.sink
            }
            do {
                try sink?.begin(head)
                return true
            } catch {
                abandon(task, with: CourierError.wrap(error, as: .transportFailure))
                return false
            }
        }

        /// Ends `task`'s call now with `error` (when it is still running) and cancels the task.
        func abandon(_ task: URLSessionTask, with error: CourierError) {
            finish(task, with: .failure(error))
            control.async { task.cancel() }
        }

        /// Resumes `task`'s continuation with `result` unless it was resumed already.
        private func finish(_ task: URLSessionTask, with result: Result<(HTTPResponse, Data), any Error>) {
            guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            entry.continuation.resume(with: result)
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            let isStreamed = pending.withLock { $0[dataTask.taskIdentifier]?.streamed != nil }
            if isStreamed, let http = response as? HTTPURLResponse {
                // The sink sets the limits (and may refuse the answer).
                completionHandler(begin(dataTask, FoundationTransport.head(http)) ? .allow : .cancel)
                return
            }
            // FoundationNetworking ignores the disposition, so a body that is too large is cancelled here.
            let expected = response.expectedContentLength
            // A HEAD, 204 or 304 answer declares the length of a body it does not carry.
            let status = (response as? HTTPURLResponse)?.statusCode ?? 200
            let hasBody = dataTask.originalRequest?.httpMethod?.uppercased() != "HEAD" && status != 204 && status != 304
            let limit = pending.withLock { $0[dataTask.taskIdentifier]?.limit }
            if hasBody, let limit, expected > Int64(limit) {
                abandon(dataTask, with: FoundationTransport.tooLarge("the response declares \(expected) bytes; the limit is \(limit)"))
                completionHandler(.cancel)
                return
            }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            if let sink = pending.withLock({ $0[dataTask.taskIdentifier]?.streamed?.sink }) {
                // Synchronously, on the work queue: libcurl waits for the write (the backpressure).
                do {
                    try sink.write(data)
                } catch {
                    abandon(dataTask, with: CourierError.wrap(error, as: .transportFailure))
                }
                return
            }
            let exceeded = pending.withLock { state -> Int? in
                guard var entry = state[dataTask.taskIdentifier] else { return nil }
                if data.count > entry.limit - entry.data.count { return entry.limit }
                // Out of the dictionary while appending, so the buffer is not copied.
                state[dataTask.taskIdentifier] = nil
                entry.data.append(data)
                state[dataTask.taskIdentifier] = entry
                return nil
            }
            if let exceeded {
                abandon(dataTask, with: FoundationTransport.tooLarge("the response exceeds \(exceeded) bytes"))
            }
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            #if canImport(FoundationNetworking)
            // FoundationNetworking challenges once the 401 has arrived whole (its body was delivered already),
            // and with default handling it would wait for a credential forever: the 401 is the call's answer.
            if let response = (challenge.failureResponse ?? task.response) as? HTTPURLResponse {
                let data = pending.withLock { $0[task.taskIdentifier]?.data } ?? Data()
                let head = FoundationTransport.head(response)
                if begin(task, head) { finish(task, with: .success((head, data))) }
            }
            // Cancelling the challenge cancels the task, which must not happen on the queue this runs on.
            nonisolated(unsafe) let answer = completionHandler
            control.async { answer(.cancelAuthenticationChallenge, nil) }
            #else
            // The session keeps no credentials, so default handling delivers a 401 or 407 as the response, and
            // TLS challenges get the system's evaluation.
            completionHandler(.performDefaultHandling, nil)
            #endif
        }

        /// Redirects are the chain's to follow: the `3xx` (with its body) is the task's response.
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let entry = pending.withLock({ $0[task.taskIdentifier] }) else { return }
            if let error {
                // A body that failed to read (its file changed) says so, rather than libcurl's abort.
                let failure = entry.streamed?.input?.failure ?? FoundationTransport.map(error)
                finish(task, with: .failure(failure))
                return
            }
            guard let http = task.response as? HTTPURLResponse else {
                finish(task, with: .failure(TransportFailure.other.error(detail: "the response is not HTTP")))
                return
            }
            let head = FoundationTransport.head(http)
            if entry.streamed != nil, !begin(task, head) { return }
            finish(task, with: .success((head, entry.data)))
        }
    }
}
