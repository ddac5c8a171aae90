/// The one error Courier throws: an enumerated ``Code`` you can switch over, a message a person can read
/// (English and Simplified Chinese), the underlying cause, and the call's ``Context``.
///
/// ```swift
/// do {
///     let reply = try await client.send(.user(7, in: users), decoding: User.self)
/// } catch let error as CourierError {
///     switch error.code {
///     case .timedOut: showRetryBanner()
///     case .notFound: showEmptyState()
///     case .business:
///         if case .userNotFound? = error.business(as: UserError.self) { askToSignUp() }
///     default: show(error.message)                 // "The request timed out."
///     }
///     print(error.message(in: .simplifiedChinese))  // "请求超时了~"
/// }
/// ```
public struct CourierError: Error, Sendable {
    /// What went wrong, as a stable enumerated code.
    public var code: Code
    /// A detail for people, added to the code's message ("no codec is registered for xml").
    /// Never holds secrets, keys or decrypted plaintext.
    public var detail: String?
    /// Where it happened: module, endpoint, request id, status, coding path, line and column.
    public var context: Context
    /// The error that caused this one (a URL error, a codec's own error).
    public var underlying: (any Error)?
    /// The business failure, for ``Category/business`` errors: the server's code and message and the
    /// module's own enum case, if the module mapped it.
    public var businessFailure: BusinessFailure?
    /// Violations, for ``Category/validation`` errors (all of them; the message names the first).
    public var violations: [Violation]
    /// The stages' trace up to the failure, when the call asked for one.
    public var trace: CallTrace?
    /// The response that failed the call — status, header fields and the first 64 KiB of the body — when
    /// one came back (an HTTP or business failure, a body that did not decode); `nil` for a transport failure.
    public var response: ResponseSnapshot?

    /// An error with a code and an optional detail.
    public init(
        _ code: Code, detail: String? = nil, context: Context = Context(), underlying: (any Error)? = nil
    ) {
        self.code = code
        self.detail = detail
        self.context = context
        self.underlying = underlying
        self.businessFailure = nil
        self.violations = []
        self.trace = nil
        self.response = nil
    }

    /// The category of ``code``.
    public var category: Category { code.category }

    /// The readable English message: the code's sentence, then the detail.
    public var message: String { message(in: .english) }

    /// The readable message in `language` (any BCP 47 identifier; see ``MessageCatalog``), falling back to
    /// English for what the language's table lacks.
    ///
    /// ```swift
    /// error.message(in: .simplifiedChinese)
    /// error.message(in: "ja")
    /// ```
    public func message(in language: Language) -> String {
        var text: String
        if let business = businessFailure {
            text = business.message(in: language)
        } else {
            text = code.message(in: language)
        }
        if let first = violations.first {
            text += " " + first.message
            if violations.count > 1 {
                text += MessageCatalog.compose(\.moreViolations, in: language, ["count": "\(violations.count - 1)"])
            }
        } else if let detail, !detail.isEmpty, businessFailure == nil {
            text += MessageCatalog.compose(\.detail, in: language, ["detail": detail])
        }
        return text
    }

    /// The business error the module mapped, as its own enum.
    ///
    /// ```swift
    /// if let userError = error.business(as: UserError.self) { ... }
    /// ```
    public func business<E: BusinessError>(as type: E.Type) -> E? {
        businessFailure?.mapped as? E
    }

    /// A copy whose empty context fields are filled from `context` (fields already set win).
    public func adding(_ context: Context) -> CourierError {
        var copy = self
        copy.context.fill(from: context)
        return copy
    }

    /// Normalises any error into a ``CourierError``: a `CourierError` passes unchanged, a
    /// `CancellationError` becomes ``Code/cancelled``, anything else becomes `fallback` with the error kept
    /// as ``underlying``.
    public static func wrap(_ error: any Error, as fallback: Code, detail: String? = nil) -> CourierError {
        if let courier = error as? CourierError { return courier }
        if error is CancellationError { return CourierError(.cancelled, underlying: error) }
        return CourierError(fallback, detail: detail, underlying: error)
    }
}

extension CourierError {

    /// The broad kind of failure; every ``Code`` belongs to one.
    public enum Category: String, Sendable, CaseIterable, CustomStringConvertible {
        /// The request never got an HTTP answer (timeout, refused connection, DNS, offline, TLS).
        case transport
        /// The server answered with an error status (4xx, 5xx).
        case http
        /// The response body could not be read or did not fit the expected model.
        case decoding
        /// The request body could not be written.
        case encoding
        /// The response broke its JSON Schema.
        case validation
        /// Signing, verification, encryption, decryption or authentication failed.
        case security
        /// The server answered with a business error code.
        case business
        /// The call was cancelled.
        case cancelled
        /// The call was set up wrongly (bad URL, missing codec, misbehaving interceptor).
        case configuration

        public var description: String { rawValue }

        /// The process exit status the `courier` tool uses for this category.
        public var exitStatus: Int32 {
            switch self {
            case .transport: return 10
            case .http: return 11
            case .decoding: return 12
            case .encoding: return 13
            case .validation: return 14
            case .security: return 15
            case .business: return 16
            case .cancelled: return 17
            case .configuration: return 18
            }
        }
    }

    /// Where a failure happened. Every field is optional; the pipeline fills what it knows.
    public struct Context: Sendable, Hashable {
        /// The module's name.
        public var module: String?
        /// The endpoint's name.
        public var endpoint: String?
        /// The call's identifier.
        public var callID: CallID?
        /// The request's method and URL (without query secrets).
        public var request: String?
        /// The HTTP status, if a response arrived.
        public var status: Int?
        /// The pipeline stage that failed (interceptor name, "transport", "codec").
        public var stage: String?
        /// The path inside the value (`data.users[3].age`).
        public var codingPath: [PathComponent]
        /// 1-based line in the input, for syntax errors.
        public var line: Int?
        /// 1-based column (in bytes) in the input, for syntax errors.
        public var column: Int?
        /// Byte offset in the input, for binary formats.
        public var offset: Int?

        /// An empty context.
        public init(
            module: String? = nil, endpoint: String? = nil, callID: CallID? = nil, request: String? = nil,
            status: Int? = nil, stage: String? = nil, codingPath: [PathComponent] = [], line: Int? = nil,
            column: Int? = nil, offset: Int? = nil
        ) {
            self.module = module
            self.endpoint = endpoint
            self.callID = callID
            self.request = request
            self.status = status
            self.stage = stage
            self.codingPath = codingPath
            self.line = line
            self.column = column
            self.offset = offset
        }

        mutating func fill(from other: Context) {
            module = module ?? other.module
            endpoint = endpoint ?? other.endpoint
            callID = callID ?? other.callID
            request = request ?? other.request
            status = status ?? other.status
            stage = stage ?? other.stage
            if codingPath.isEmpty { codingPath = other.codingPath }
            line = line ?? other.line
            column = column ?? other.column
            offset = offset ?? other.offset
        }

        var summary: String {
            var parts: [String] = []
            if let module { parts.append("module: \(module)") }
            if let endpoint { parts.append("endpoint: \(endpoint)") }
            if let callID { parts.append("call: \(callID)") }
            if let request { parts.append("request: \(request)") }
            if let status { parts.append("status: \(status)") }
            if let stage { parts.append("stage: \(stage)") }
            if !codingPath.isEmpty { parts.append("path: \(PathComponent.render(codingPath))") }
            if let line { parts.append("line \(line)" + (column.map { ", column \($0)" } ?? "")) }
            if let offset { parts.append("offset \(offset)") }
            return parts.joined(separator: ", ")
        }
    }

    /// One JSON Schema violation: where in the instance, which keyword where in the schema, and why.
    public struct Violation: Sendable, Hashable, CustomStringConvertible {
        /// The instance location as a JSON Pointer (`/data/users/3/age`).
        public var instanceLocation: String
        /// The keyword's location in the schema as a JSON Pointer (`/properties/age/minimum`).
        public var keywordLocation: String
        /// The keyword that failed (`minimum`).
        public var keyword: String
        /// A readable message ("data/users/3/age: -1 is less than the minimum of 0").
        public var message: String

        /// A violation.
        public init(instanceLocation: String, keywordLocation: String, keyword: String, message: String) {
            self.instanceLocation = instanceLocation
            self.keywordLocation = keywordLocation
            self.keyword = keyword
            self.message = message
        }

        public var description: String { message }
    }
}

extension CourierError: CustomStringConvertible, CustomDebugStringConvertible {
    /// `[transport.timedOut 1001] The request timed out. (module: user, endpoint: getUser, call: #3)`; with a
    /// textual response body, its start (``ResponseSnapshot/excerpt``) follows: `body: {"error":"db down"}`.
    public var description: String {
        var text = "[\(code.category).\(code.name) \(code.number)] \(message)"
        let summary = context.summary
        if !summary.isEmpty { text += " (\(summary))" }
        if let excerpt = response?.excerpt { text += " body: \(excerpt)" }
        return text
    }

    public var debugDescription: String {
        var text = description
        if violations.count > 1 {
            for violation in violations.dropFirst() { text += "\n  - \(violation.message)" }
        }
        if let underlying { text += "\n  caused by: \(String(describing: underlying))" }
        return text
    }
}
