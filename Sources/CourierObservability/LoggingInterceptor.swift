public import HTTPTypes
public import Logging

/// Logs each call with swift-log: every request exactly as it is sent (method, URL, header fields after auth,
/// common parameters and signing; one line per attempt or redirect hop), and the outcome as the caller gets
/// it — status, duration and source, or the error (HTTP, business, validation and decoding failures
/// included, since the stage sits in the `InterceptorRole.observation` role). Secrets never reach
/// the log: the values of header fields and query parameters that `redaction` calls secret (by default any
/// name containing token, secret, password, session, auth, key, signature, cookie or credential, such as
/// `X-Session-Token` or `auth_token`) are replaced by `RedactionPolicy.placeholder`, and bodies
/// are never logged. Every line carries the metadata `call`, `module`, `endpoint` and, when the endpoint has
/// `Endpoint.tags`, `tags` (sorted, joined with `,`).
///
/// ```swift
/// var logging = LoggingInterceptor(logger: Logger(label: "app.network"))
/// logging.redaction.names.insert("sid")
/// let client = CourierClient(configuration: .init(interceptors: [logging]))
/// ```
public struct LoggingInterceptor: Interceptor {
    /// The logger (nil: the client's, from the context).
    public var logger: Logger?
    /// The level of the request and response lines (failures log at `warning`).
    public var level: Logger.Level
    /// Which header field and query parameter values are hidden.
    public var redaction: RedactionPolicy

    /// A logging stage at `level` (info by default).
    public init(logger: Logger? = nil, level: Logger.Level = .info, redaction: RedactionPolicy = RedactionPolicy()) {
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
        if !context.endpoint.tags.isEmpty {
            logger[metadataKey: "tags"] = "\(context.endpoint.tags.sorted().joined(separator: ","))"
        }
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

    /// The URL as sent (still percent-encoded), with secret query values replaced.
    public func redactedURL(_ head: HTTPRequest) -> String {
        "\(head.scheme ?? "http")://\(head.authority ?? "")" + redaction.redacting(target: head.path ?? "/")
    }

    /// The header fields with secret values replaced.
    public func redactedHeaders(_ fields: HTTPFields) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        for field in fields {
            let name = field.name.canonicalName
            let value = redaction.value(of: field)
            if let existing = metadata[name] {
                metadata[name] = "\(existing), \(value)"
            } else {
                metadata[name] = "\(value)"
            }
        }
        return metadata
    }
}
