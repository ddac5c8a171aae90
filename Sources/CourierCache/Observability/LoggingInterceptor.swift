public import HTTPTypes
public import Logging

/// Logs each call with swift-log: every request exactly as it is sent (method, URL, header fields after auth,
/// common parameters and signing; one line per attempt or redirect hop), and the outcome as the caller gets
/// it — status, duration and source, or the error (HTTP, business, validation and decoding failures
/// included, since the stage sits in the `InterceptorRole.observation` role). Secrets never reach the log: listed header fields
/// and query parameters are replaced by `<redacted>`, and bodies are never logged.
///
/// ```swift
/// var logging = LoggingInterceptor(logger: Logger(label: "app.network"))
/// logging.redaction.queryParameters.insert("session")
/// let client = CourierClient(configuration: .init(interceptors: [logging]))
/// ```
public struct LoggingInterceptor: Interceptor {
    /// What is hidden.
    public struct Redaction: Sendable {
        /// Header field names (lowercase) whose values are hidden.
        public var headerFields: Set<String>
        /// Query parameter names (lowercase) whose values are hidden.
        public var queryParameters: Set<String>
        /// What replaces a hidden value.
        public var replacement: String

        /// Authorization, cookies, API keys, tokens, signatures and passwords.
        public init() {
            headerFields = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key",
                            "x-auth-token", "x-signature", "x-access-token"]
            queryParameters = ["token", "access_token", "refresh_token", "password", "secret", "sign", "signature",
                               "key", "api_key", "apikey", "session"]
            replacement = "<redacted>"
        }
    }

    /// The logger (nil: the client's, from the context).
    public var logger: Logger?
    /// The level of the request and response lines (failures log at `warning`).
    public var level: Logger.Level
    /// What is hidden.
    public var redaction: Redaction

    /// A logging stage at `level` (info by default).
    public init(logger: Logger? = nil, level: Logger.Level = .info, redaction: Redaction = Redaction()) {
        self.logger = logger
        self.level = level
        self.redaction = redaction
    }

    /// `logging`.
    public var name: String { "logging" }
    /// `InterceptorRole.observation`.
    public var role: InterceptorRole { .observation }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        var logger = self.logger ?? context.logger
        logger[metadataKey: "call"] = "\(context.callID)"
        logger[metadataKey: "module"] = "\(context.module.name)"
        logger[metadataKey: "endpoint"] = "\(context.endpoint.name)"
        let level = self.level
        let sendLogger = logger
        context.onSend { sent in
            sendLogger.log(level: level, "→ \(sent.head.method) \(redactedURL(sent.head))",
                           metadata: ["headers": .dictionary(redactedHeaders(sent.head.headerFields))])
        }
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await next(request)
            let elapsed = clock.now - start
            logger.log(level: level, "← \(response.head.status.code) in \(elapsed) (\(response.source))",
                       metadata: ["headers": .dictionary(redactedHeaders(response.head.headerFields))])
            return response
        } catch {
            let failure = CourierError.wrap(error, as: .transportFailure)
            logger.warning("✗ \(failure.code.name) after \(clock.now - start): \(failure.message)")
            throw error
        }
    }

    /// The URL with secret query values replaced.
    public func redactedURL(_ head: HTTPRequest) -> String {
        let path = head.path ?? "/"
        let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
        var text = "\(head.scheme ?? "http")://\(head.authority ?? "")\(parts.first ?? "/")"
        if parts.count > 1 {
            let items = QueryItem.decode(parts[1]).map { item in
                redaction.queryParameters.contains(item.name.lowercased()) && item.value != nil
                    ? QueryItem(item.name, redaction.replacement) : item
            }
            text += "?" + items.map { $0.name + ($0.value.map { "=" + $0 } ?? "") }.joined(separator: "&")
        }
        return text
    }

    /// The header fields with secret values replaced.
    public func redactedHeaders(_ fields: HTTPFields) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        for field in fields {
            let name = field.name.canonicalName
            let value = redaction.headerFields.contains(name) ? redaction.replacement : field.value
            if let existing = metadata[name] {
                metadata[name] = "\(existing), \(value)"
            } else {
                metadata[name] = "\(value)"
            }
        }
        return metadata
    }
}
