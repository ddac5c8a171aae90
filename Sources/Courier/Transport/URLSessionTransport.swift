public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import HTTPTypes

/// The default transport, on `URLSession` (FoundationNetworking on Linux). It enforces the request's
/// timeout and the maximum response size while the body arrives, stops the exchange when the Swift task is
/// cancelled, and maps every failure to an enumerated transport code (timed out, cannot connect, host not
/// found, not connected, connection lost, TLS, cancelled, other).
///
/// ```swift
/// let client = Client(transport: URLSessionTransport())
/// var configuration = URLSessionConfiguration.ephemeral
/// configuration.httpMaximumConnectionsPerHost = 4
/// let tuned = Client(transport: URLSessionTransport(configuration: configuration))
/// ```
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let delegate: Delegate

    /// A transport with its own session (ephemeral: no shared cookies or cache).
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        let delegate = Delegate()
        self.delegate = delegate
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
        let urlRequest = try Self.urlRequest(request, body: body, timeout: options.timeout)
        // URLSession's own timer counts idle time in whole seconds on Linux; the deadline is ours.
        return try await withTimeout(options.timeout) {
            try await self.exchange(urlRequest, options: options)
        }
    }

    private func exchange(_ urlRequest: URLRequest, options: TransportOptions) async throws -> (HTTPResponse, Data) {
        let holder = Locked<URLSessionTask?>(nil)
        let delegate = delegate
        let session = session
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(HTTPResponse, Data), any Error>) in
                let task = session.dataTask(with: urlRequest)
                delegate.register(task, limit: options.maximumResponseSize, continuation: continuation)
                holder.withLock { $0 = task }
                if Task.isCancelled {
                    task.cancel()
                }
                task.resume()
            }
        } onCancel: {
            holder.withLock { $0 }?.cancel()
        }
    }

    static func urlRequest(_ request: HTTPRequest, body: Data?, timeout: Duration?) throws -> URLRequest {
        let text = "\(request.scheme ?? "http")://\(request.authority ?? "")\(request.path ?? "/")"
        guard let url = URL(string: text) else {
            throw CourierError(.invalidURL, detail: "'\(text)' is not a valid URL")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
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
            // FoundationNetworking reports libcurl's TLS failures as an unknown error whose only trace is
            // OpenSSL's message, so that message is the one thing to go by here.
            // The same holds for a connection the server drops: libcurl's "transfer closed with N bytes
            // remaining to read" (a cut body) and "Empty reply from server" (closed before any answer).
            let text = "\(error.localizedDescription) \((error as NSError).userInfo)"
            if ["SSL routines", "OpenSSL", "TLS", "certificate"].contains(where: text.contains) {
                failure = .tlsFailure
            } else if ["transfer closed with", "Empty reply from server", "Connection reset by peer"]
                .contains(where: text.contains)
            {
                failure = .connectionLost
            } else {
                failure = .other
            }
        }
        return failure.error(detail: failure == .other ? error.localizedDescription : nil, underlying: error)
    }

    /// Collects each task's body under its size limit and resumes its continuation once.
    private final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        private struct Pending {
            var continuation: CheckedContinuation<(HTTPResponse, Data), any Error>
            var limit: Int
            var data = Data()
            var failure: CourierError?
        }

        private let pending = Locked<[Int: Pending]>([:])

        func register(_ task: URLSessionTask, limit: Int, continuation: CheckedContinuation<(HTTPResponse, Data), any Error>) {
            pending.withLock { $0[task.taskIdentifier] = Pending(continuation: continuation, limit: limit) }
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            let expected = response.expectedContentLength
            let tooLarge = pending.withLock { state -> Bool in
                guard let limit = state[dataTask.taskIdentifier]?.limit, expected > Int64(limit) else { return false }
                state[dataTask.taskIdentifier]?.failure = CourierError(
                    .responseTooLarge, detail: "the response declares \(expected) bytes; the limit is \(limit)")
                return true
            }
            completionHandler(tooLarge ? .cancel : .allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let tooLarge = pending.withLock { state -> Bool in
                guard var entry = state[dataTask.taskIdentifier] else { return false }
                if entry.data.count + data.count > entry.limit {
                    entry.failure = CourierError(.responseTooLarge, detail: "the response exceeds \(entry.limit) bytes")
                    state[dataTask.taskIdentifier] = entry
                    return true
                }
                state[dataTask.taskIdentifier] = nil
                entry.data.append(data)
                state[dataTask.taskIdentifier] = entry
                return false
            }
            if tooLarge { dataTask.cancel() }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            if let failure = entry.failure {
                entry.continuation.resume(throwing: failure)
                return
            }
            if let error {
                entry.continuation.resume(throwing: URLSessionTransport.map(error))
                return
            }
            guard let http = task.response as? HTTPURLResponse else {
                entry.continuation.resume(throwing: TransportFailure.other.error(detail: "the response is not HTTP"))
                return
            }
            var head = HTTPResponse(status: URLSessionTransport.status(http.statusCode))
            for (name, value) in http.allHeaderFields {
                guard let name = name as? String, let value = value as? String,
                    let fieldName = HTTPField.Name(name)
                else { continue }
                head.headerFields.append(HTTPField(name: fieldName, value: value))
            }
            entry.continuation.resume(returning: (head, entry.data))
        }
    }
}
