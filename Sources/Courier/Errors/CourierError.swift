/// The one error Courier throws: an enumerated ``Code`` you can switch over, a message a person can read
/// (English and Simplified Chinese), the underlying cause, the call's ``Context``, and the ``Details`` the
/// modules that handled the call attached (a business failure, schema violations, the call's trace).
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
///
/// ## Codes
///
/// Every ``Code`` has a stable number; its range is its ``Category``. Numbers never change meaning and are
/// never reused; new codes take free numbers in their category's range.
///
/// | Numbers | Category | Codes |
/// | --- | --- | --- |
/// | 1001–1010, 1099 | ``Category/transport`` | `timedOut` 1001, `cannotConnect` 1002, `hostNotFound` 1003, `notConnected` 1004, `connectionLost` 1005, `tlsFailure` 1006, `responseTooLarge` 1007, `tooManyRedirects` 1008, `redirectRefused` 1009, `certificatePinMismatch` 1010, `transportFailure` 1099 |
/// | 2400–2599, 2999 | ``Category/http`` | 2000 + status for `badRequest` 2400, `unauthorized` 2401, `forbidden` 2403, `notFound` 2404, `methodNotAllowed` 2405, `requestTimeout` 2408, `conflict` 2409, `payloadTooLarge` 2413, `unsupportedMediaType` 2415, `rangeNotSatisfiable` 2416, `unprocessableContent` 2422, `tooManyRequests` 2429, `internalServerError` 2500, `notImplemented` 2501, `badGateway` 2502, `serviceUnavailable` 2503, `gatewayTimeout` 2504; `clientError` 2499, `serverError` 2599, `unexpectedStatus` 2999 |
/// | 3001–3010 | ``Category/decoding`` | `malformedInput` 3001, `typeMismatch` 3002, `missingValue` 3003, `valueOutOfRange` 3004, `depthLimitExceeded` 3005, `sizeLimitExceeded` 3006, `unsafeInput` 3007, `invalidUTF8` 3008, `unknownMessageType` 3009, `unexpectedFormat` 3010 |
/// | 4001–4002 | ``Category/encoding`` | `encodingFailed` 4001, `bodySourceChanged` 4002 |
/// | 5001–5005 | ``Category/validation`` | `schemaViolation` 5001, `invalidSchema` 5002, `unresolvedReference` 5003, `schemaNotFound` 5004, `validationLimitExceeded` 5005 |
/// | 6001–6010 | ``Category/security`` | `signatureMissing` 6001, `signatureInvalid` 6002, `replayDetected` 6003, `staleTimestamp` 6004, `decryptionFailed` 6005, `unknownKey` 6006, `badPadding` 6007, `malformedEnvelope` 6008, `encryptionFailed` 6009, `authentication` 6010 |
/// | 7001 | ``Category/business`` | `business` 7001 (the server's own code is in ``businessFailure``) |
/// | 8001 | ``Category/cancelled`` | `cancelled` 8001 |
/// | 9001–9009 | ``Category/configuration`` | `invalidURL` 9001, `missingCodec` 9002, `interceptorContract` 9003, `invalidConfiguration` 9004, `cacheMiss` 9005 (declared by CourierCache), `interceptorFailure` 9006, `noRecordedExchange` 9007 (declared by CourierTesting), `unsupportedByTransport` 9008, `fileAccessFailed` 9009 |
///
/// ``Code`` is a struct, so codes are added without breaking a `switch` that keeps a `default:`.
/// ``Category`` is an enum that is **not frozen**: a later release may add a category (and the core may add
/// codes to any category), so a `switch` over it needs a `default:` too.
///
/// ## Details from modules
///
/// The core knows codes, messages and context; what a module knows about a failure travels as a
/// ``Detail`` it attaches, read back by type: ``BusinessFailure`` (the pipeline's business rule),
/// `SchemaViolations` (CourierSchema), ``CallTrace`` (a traced call). Each module offers a property for its
/// own (`error.businessFailure`, `error.violations`, `error.trace`).
///
/// ```swift
/// if let violations = error.details[SchemaViolations.self] { … }
/// ```
public struct CourierError: Error, Sendable {
    /// What went wrong, as a stable enumerated code.
    public var code: Code
    /// A detail for people, added to the code's message ("no codec is registered for xml").
    /// Never holds secrets, keys or decrypted plaintext.
    public var detail: String? {
        get { deferred?.detail ?? storedDetail }
        set {
            storedDetail = newValue
            deferred = nil
        }
    }
    private var storedDetail: String?
    /// A decoding failure whose detail and coding path are spelled out when read.
    private var deferred: DeferredDecodingFailure?
    /// Where it happened: module, endpoint, request id, status, coding path, line and column.
    public var context: Context
    /// The error that caused this one (a URL error, a codec's own error).
    public var underlying: (any Error)?
    /// What the modules that handled the call attached, at most one of each ``Detail`` type.
    public var details: Details
    /// The response that failed the call — status, header fields and the first 64 KiB of the body — when
    /// one came back (an HTTP or business failure, a body that did not decode); `nil` for a transport failure.
    public var response: ResponseSnapshot?

    /// An error with a code and an optional detail.
    public init(
        _ code: Code, detail: String? = nil, context: Context = Context(), underlying: (any Error)? = nil
    ) {
        self.code = code
        self.storedDetail = detail
        self.context = context
        self.underlying = underlying
        self.details = Details()
        self.response = nil
    }

    /// A decoding failure whose detail and coding path (``Context/codingPath``) `failure` spells out when
    /// they are read.
    init(_ code: Code, deferred failure: DeferredDecodingFailure) {
        self.init(code)
        deferred = failure
        context.deferredPath = failure
    }

    /// Whether the detail or the coding path is still to be spelled out (for tests).
    var isDeferred: Bool { deferred != nil || context.deferredPath != nil }

    /// This error with its detail and coding path spelled out, holding nothing of the decode that threw it.
    func resolved() -> CourierError {
        guard isDeferred else { return self }
        var copy = self
        copy.detail = detail
        copy.context.codingPath = context.codingPath
        return copy
    }

    /// The category of ``code``.
    public var category: Category { code.category }

    /// The readable English message: the code's sentence, then the detail.
    public var message: String { message(in: .english) }

    /// The readable message in `language` (any BCP 47 identifier; see ``MessageCatalog``), falling back to
    /// English for what the language's table lacks.
    ///
    /// The sentence is the first attached ``Detail``'s ``Detail/sentence(in:)`` (a business failure's
    /// message), else the code's; then come the details' ``Detail/elaboration(in:)``s (the first schema
    /// violation), else the ``detail`` text when no attached detail gave the sentence.
    ///
    /// ```swift
    /// error.message(in: .simplifiedChinese)
    /// error.message(in: "ja")
    /// ```
    public func message(in language: Language) -> String {
        let sentence = details.lazy.compactMap { $0.sentence(in: language) }.first
        var text = sentence ?? code.message(in: language)
        let elaborations = details.compactMap { $0.elaboration(in: language) }
        if !elaborations.isEmpty {
            text += elaborations.joined()
        } else if let detail, !detail.isEmpty, sentence == nil {
            text += MessageCatalog.compose(\.detail, in: language, ["detail": detail])
        }
        return text
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
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
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
        public var codingPath: [PathComponent] {
            get { deferredPath?.path ?? storedPath }
            set {
                storedPath = newValue
                deferredPath = nil
            }
        }
        private var storedPath: [PathComponent]
        /// The decoding failure that spells out ``codingPath`` when it is read.
        fileprivate var deferredPath: DeferredDecodingFailure?
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
            self.storedPath = codingPath
            self.line = line
            self.column = column
            self.offset = offset
        }

        public static func == (a: Context, b: Context) -> Bool {
            a.module == b.module && a.endpoint == b.endpoint && a.callID == b.callID && a.request == b.request
                && a.status == b.status && a.stage == b.stage && a.line == b.line && a.column == b.column
                && a.offset == b.offset && a.codingPath == b.codingPath
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(module)
            hasher.combine(endpoint)
            hasher.combine(callID)
            hasher.combine(request)
            hasher.combine(status)
            hasher.combine(stage)
            hasher.combine(codingPath)
            hasher.combine(line)
            hasher.combine(column)
            hasher.combine(offset)
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
        for detail in details {
            for line in detail.debugLines { text += "\n  \(line)" }
        }
        if let underlying { text += "\n  caused by: \(String(describing: underlying))" }
        return text
    }
}

extension CourierError {
    /// What a module knows about a failure, attached to the ``CourierError`` it throws or passes on, and read
    /// back by type with ``CourierError/details``. Conform a small value type (the module's own, so the core
    /// need not know it); every requirement has a default, so a detail that only carries data declares
    /// nothing:
    ///
    /// ```swift
    /// struct QuotaInfo: CourierError.Detail { var remaining: Int }
    ///
    /// error.details[QuotaInfo.self] = QuotaInfo(remaining: 0)
    /// if let quota = error.details[QuotaInfo.self] { print(quota.remaining) }
    /// ```
    public protocol Detail: Sendable {
        /// The sentence that stands for the whole error in `language`, replacing the code's sentence and the
        /// error's ``CourierError/detail`` text (a business failure's own message), or `nil` (the default).
        func sentence(in language: Language) -> String?
        /// Text that follows the sentence in `language`, in place of the error's ``CourierError/detail``
        /// text (a schema's first violation), or `nil` (the default).
        func elaboration(in language: Language) -> String?
        /// Lines ``CourierError/debugDescription`` adds (the other violations); none by default.
        var debugLines: [String] { get }
    }

    /// The details attached to an error: at most one value of each ``Detail`` type, in the order they were
    /// first attached.
    ///
    /// ```swift
    /// error.details[BusinessFailure.self]?.code
    /// error.details[QuotaInfo.self] = QuotaInfo(remaining: 0)   // attaches, or replaces the one there
    /// error.details[QuotaInfo.self] = nil                       // removes it
    /// ```
    public struct Details: Sendable, Sequence {
        private var items: [any Detail]

        /// No details.
        public init() { items = [] }

        /// The attached detail of type `type`, if any; setting replaces it in place (or appends it), and
        /// `nil` removes it.
        public subscript<D: Detail>(_ type: D.Type) -> D? {
            get {
                for item in items { if let found = item as? D { return found } }
                return nil
            }
            set {
                let index = items.firstIndex { $0 is D }
                switch (index, newValue) {
                case (let index?, let value?): items[index] = value
                case (let index?, nil): items.remove(at: index)
                case (nil, let value?): items.append(value)
                case (nil, nil): break
                }
            }
        }

        /// Whether no detail is attached.
        public var isEmpty: Bool { items.isEmpty }

        /// The attached details, in the order they were first attached.
        public func makeIterator() -> IndexingIterator<[any Detail]> { items.makeIterator() }
    }
}

extension CourierError.Detail {
    /// No sentence of its own: the code's sentence stands.
    public func sentence(in language: CourierError.Language) -> String? { nil }
    /// No elaboration: the error's detail text follows the sentence.
    public func elaboration(in language: CourierError.Language) -> String? { nil }
    /// No debug lines.
    public var debugLines: [String] { [] }
}
