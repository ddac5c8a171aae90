extension CourierError {
    /// A stable, enumerated error code. Switch over it like an enum; new codes can be added without
    /// breaking callers (always keep a `default:`).
    ///
    /// Numbers are stable across releases: 1xxx transport, 2xxx HTTP status (2000 + status for named
    /// statuses), 3xxx decoding, 4xxx encoding, 5xxx validation, 6xxx security, 7xxx business,
    /// 8xxx cancelled, 9xxx configuration. The full table is in ``CourierError``'s documentation.
    ///
    /// Most codes are the core's; a module declares its own with ``init(module:name:messages:)`` as a static
    /// member in an extension (CourierCache's ``CourierError/Code`` `cacheMiss` 9005, CourierTesting's
    /// `noRecordedExchange` 9007), so `.cacheMiss` reads the same wherever it comes from.
    ///
    /// ```swift
    /// switch error.code {
    /// case .timedOut, .cannotConnect: retryLater()
    /// case .notFound: showEmptyState()
    /// default: break
    /// }
    /// ```
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable number.
        public let number: Int
        /// The code's name (`timedOut`).
        public let name: String
        /// The sentences a module ships with its own code, by language identifier (empty for core codes,
        /// whose sentences live in the core's tables).
        private let sentences: [String: String]

        private init(_ base: Base) {
            number = base.rawValue
            name = "\(base)"
            sentences = [:]
        }

        /// A code declared by a module other than the core, with its sentences (English at least). Declare
        /// it once, as a static member in an extension, so callers name it like any other code:
        ///
        /// ```swift
        /// extension CourierError.Code {
        ///     public static let cacheMiss = Code(module: 9005, name: "cacheMiss", messages: [
        ///         .english: "No cached response is available.", .simplifiedChinese: "没有可用的缓存数据~",
        ///     ])
        /// }
        /// ```
        ///
        /// The number picks the category (see ``CourierError``'s table) and must be in 1000...9999, unused by
        /// the core and unique among the modules a program links; two codes are equal when their numbers are.
        /// A table registered with ``MessageCatalog`` overrides the sentences given here.
        ///
        /// - Precondition: `number` is in 1000...9999, is not a core code's number, and `messages` has an
        ///   English sentence.
        public init(module number: Int, name: String, messages: [Language: String]) {
            precondition((1000...9999).contains(number), "error code \(number) is outside 1000...9999")
            precondition(Base(rawValue: number) == nil, "error code \(number) is one of the core's codes")
            precondition(messages[.english] != nil, "error code \(number) (\(name)) needs an English sentence")
            self.number = number
            self.name = name
            var sentences: [String: String] = [:]
            for (language, sentence) in messages { sentences[language.identifier] = sentence }
            self.sentences = sentences
        }

        /// The category the code belongs to, by its number's range.
        public var category: Category { Category(number: number) }
        /// The code's sentence in `language`, from ``MessageCatalog`` (English when the language's table
        /// lacks it).
        public func message(in language: Language) -> String {
            MessageCatalog.message(for: self, in: language)
        }

        /// The sentence the declaring module ships for the language `identifier`, if any.
        func builtInSentence(for identifier: String) -> String? { sentences[identifier] }

        public var description: String { "\(category).\(name) (\(number))" }

        /// Equal when the numbers are.
        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.number == rhs.number }

        public func hash(into hasher: inout Hasher) { hasher.combine(number) }

        /// Every code of the core, for documentation and tests (codes other modules declare are not listed).
        public static var allCases: [Code] { Base.allCases.map(Code.init) }

        /// The code for an HTTP error status (4xx, 5xx; other statuses map to ``unexpectedStatus``).
        public static func http(status: Int) -> Code {
            switch status {
            case 400: return .badRequest
            case 401: return .unauthorized
            case 403: return .forbidden
            case 404: return .notFound
            case 405: return .methodNotAllowed
            case 408: return .requestTimeout
            case 409: return .conflict
            case 413: return .payloadTooLarge
            case 415: return .unsupportedMediaType
            case 416: return .rangeNotSatisfiable
            case 422: return .unprocessableContent
            case 429: return .tooManyRequests
            case 500: return .internalServerError
            case 501: return .notImplemented
            case 502: return .badGateway
            case 503: return .serviceUnavailable
            case 504: return .gatewayTimeout
            case 400..<500: return .clientError
            case 500..<600: return .serverError
            default: return .unexpectedStatus
            }
        }

        // MARK: transport
        /// The request timed out.
        public static let timedOut = Code(.timedOut)
        /// The server refused the connection (nothing listens on the port).
        public static let cannotConnect = Code(.cannotConnect)
        /// The host name could not be resolved.
        public static let hostNotFound = Code(.hostNotFound)
        /// The device is offline.
        public static let notConnected = Code(.notConnected)
        /// The connection was lost mid-exchange.
        public static let connectionLost = Code(.connectionLost)
        /// The TLS handshake or certificate check failed.
        public static let tlsFailure = Code(.tlsFailure)
        /// The response was larger than the configured maximum.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The call was redirected more times than its ``RedirectPolicy`` allows (a redirect loop ends here too).
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// A redirect was not followed because its ``RedirectPolicy`` or its target forbids it: another
        /// origin under ``RedirectPolicy/sameOrigin(limit:)``, a `Location` that is not an http(s) URL, or a
        /// 307/308 whose body cannot be sent again.
        public static let redirectRefused = Code(.redirectRefused)
        /// The server's certificate is valid but its public key matches none of the pins of the transport's
        /// ``TLSPolicy``.
        public static let certificatePinMismatch = Code(.certificatePinMismatch)
        /// Any other transport failure (the cause is kept in ``CourierError/underlying``).
        public static let transportFailure = Code(.transportFailure)

        // MARK: http
        /// 400 Bad Request.
        public static let badRequest = Code(.badRequest)
        /// 401 Unauthorized.
        public static let unauthorized = Code(.unauthorized)
        /// 403 Forbidden.
        public static let forbidden = Code(.forbidden)
        /// 404 Not Found.
        public static let notFound = Code(.notFound)
        /// 405 Method Not Allowed.
        public static let methodNotAllowed = Code(.methodNotAllowed)
        /// 408 Request Timeout.
        public static let requestTimeout = Code(.requestTimeout)
        /// 409 Conflict.
        public static let conflict = Code(.conflict)
        /// 413 Content Too Large.
        public static let payloadTooLarge = Code(.payloadTooLarge)
        /// 415 Unsupported Media Type.
        public static let unsupportedMediaType = Code(.unsupportedMediaType)
        /// The server cannot serve the requested byte range (416): a download's partial file no longer fits
        /// the file on the server.
        public static let rangeNotSatisfiable = Code(.rangeNotSatisfiable)
        /// 422 Unprocessable Content.
        public static let unprocessableContent = Code(.unprocessableContent)
        /// 429 Too Many Requests.
        public static let tooManyRequests = Code(.tooManyRequests)
        /// 500 Internal Server Error.
        public static let internalServerError = Code(.internalServerError)
        /// 501 Not Implemented.
        public static let notImplemented = Code(.notImplemented)
        /// 502 Bad Gateway.
        public static let badGateway = Code(.badGateway)
        /// 503 Service Unavailable.
        public static let serviceUnavailable = Code(.serviceUnavailable)
        /// 504 Gateway Timeout.
        public static let gatewayTimeout = Code(.gatewayTimeout)
        /// Another 4xx status.
        public static let clientError = Code(.clientError)
        /// Another 5xx status.
        public static let serverError = Code(.serverError)
        /// A status the call did not expect (1xx, 3xx).
        public static let unexpectedStatus = Code(.unexpectedStatus)

        // MARK: decoding
        /// The bytes are not valid in their format (syntax error; line and column in the context).
        public static let malformedInput = Code(.malformedInput)
        /// A value had the wrong kind for the model (a string where a number was expected).
        public static let typeMismatch = Code(.typeMismatch)
        /// A required value was missing.
        public static let missingValue = Code(.missingValue)
        /// A value was out of range for the model's type (300 into a `UInt8`).
        public static let valueOutOfRange = Code(.valueOutOfRange)
        /// The input nests deeper than the configured limit.
        public static let depthLimitExceeded = Code(.depthLimitExceeded)
        /// The input is larger than a configured limit (body size, string length, entity expansion).
        public static let sizeLimitExceeded = Code(.sizeLimitExceeded)
        /// The input asked for something unsafe (an external entity, a DTD to load).
        public static let unsafeInput = Code(.unsafeInput)
        /// Text was not valid UTF-8.
        public static let invalidUTF8 = Code(.invalidUTF8)
        /// The message type or schema needed to read the body is unknown.
        public static let unknownMessageType = Code(.unknownMessageType)
        /// The body's format is not the one expected, or none could be determined.
        public static let unexpectedFormat = Code(.unexpectedFormat)

        // MARK: encoding
        /// A value could not be written in the requested format.
        public static let encodingFailed = Code(.encodingFailed)
        /// A streamed request body's source changed while it was sent (an upload's file was truncated,
        /// replaced or removed).
        public static let bodySourceChanged = Code(.bodySourceChanged)

        // MARK: validation
        /// The response broke its JSON Schema (violations attached).
        public static let schemaViolation = Code(.schemaViolation)
        /// A schema is invalid or could not be compiled.
        public static let invalidSchema = Code(.invalidSchema)
        /// A schema reference could not be resolved locally.
        public static let unresolvedReference = Code(.unresolvedReference)
        /// No schema with the given id is registered.
        public static let schemaNotFound = Code(.schemaNotFound)
        /// Validation needed more work than its limits allow (steps, `$ref` depth, fan-out, or a
        /// pattern's matching budget); the value was neither accepted nor rejected.
        public static let validationLimitExceeded = Code(.validationLimitExceeded)

        // MARK: security
        /// The signature was missing.
        public static let signatureMissing = Code(.signatureMissing)
        /// The signature did not match.
        public static let signatureInvalid = Code(.signatureInvalid)
        /// The same signed request was seen before (nonce reused).
        public static let replayDetected = Code(.replayDetected)
        /// The signed timestamp is outside the accepted window.
        public static let staleTimestamp = Code(.staleTimestamp)
        /// Decryption failed (authentication tag or MAC mismatch).
        public static let decryptionFailed = Code(.decryptionFailed)
        /// The envelope names a key id that is not known.
        public static let unknownKey = Code(.unknownKey)
        /// Block-cipher padding was invalid.
        public static let badPadding = Code(.badPadding)
        /// The encrypted envelope was truncated or malformed.
        public static let malformedEnvelope = Code(.malformedEnvelope)
        /// Encryption could not be performed.
        public static let encryptionFailed = Code(.encryptionFailed)
        /// Authentication failed (credentials rejected, token refresh failed).
        public static let authentication = Code(.authentication)

        // MARK: business
        /// The server answered with a business error code (see ``CourierError/businessFailure``).
        public static let business = Code(.business)

        // MARK: cancelled
        /// The call was cancelled (by id, by module, all, or by Swift task cancellation).
        public static let cancelled = Code(.cancelled)

        // MARK: configuration
        /// The URL could not be built.
        public static let invalidURL = Code(.invalidURL)
        /// No codec is registered for the format.
        public static let missingCodec = Code(.missingCodec)
        /// An interceptor broke the chain's contract.
        public static let interceptorContract = Code(.interceptorContract)
        /// The configuration is invalid (bad option value, unknown module).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// An interceptor failed with an error of its own (kept as the underlying error).
        public static let interceptorFailure = Code(.interceptorFailure)
        /// The transport cannot do what its configuration asks (a ``TLSPolicy`` the platform's HTTP stack has
        /// no way to enforce); the call is refused rather than sent without it.
        public static let unsupportedByTransport = Code(.unsupportedByTransport)
        /// A local file could not be read or written (an upload's source, a download's destination).
        public static let fileAccessFailed = Code(.fileAccessFailed)
    }
}

extension CourierError.Code {
    fileprivate enum Base: Int, CaseIterable {
        case timedOut = 1001, cannotConnect, hostNotFound, notConnected, connectionLost, tlsFailure,
            responseTooLarge, tooManyRedirects, redirectRefused, certificatePinMismatch
        case transportFailure = 1099
        case badRequest = 2400, unauthorized = 2401, forbidden = 2403, notFound = 2404,
            methodNotAllowed = 2405, requestTimeout = 2408, conflict = 2409, payloadTooLarge = 2413,
            unsupportedMediaType = 2415, rangeNotSatisfiable = 2416, unprocessableContent = 2422, tooManyRequests = 2429
        case clientError = 2499
        case internalServerError = 2500, notImplemented = 2501, badGateway = 2502,
            serviceUnavailable = 2503, gatewayTimeout = 2504
        case serverError = 2599
        case unexpectedStatus = 2999
        case malformedInput = 3001, typeMismatch, missingValue, valueOutOfRange, depthLimitExceeded,
            sizeLimitExceeded, unsafeInput, invalidUTF8, unknownMessageType, unexpectedFormat
        case encodingFailed = 4001, bodySourceChanged
        case schemaViolation = 5001, invalidSchema, unresolvedReference, schemaNotFound, validationLimitExceeded
        case signatureMissing = 6001, signatureInvalid, replayDetected, staleTimestamp, decryptionFailed,
            unknownKey, badPadding, malformedEnvelope, encryptionFailed, authentication
        case business = 7001
        case cancelled = 8001
        case invalidURL = 9001, missingCodec, interceptorContract, invalidConfiguration
        // 9005 is CourierCache's `cacheMiss`, 9007 CourierTesting's `noRecordedExchange`.
        case interceptorFailure = 9006
        case unsupportedByTransport = 9008, fileAccessFailed
    }
}

extension CourierError.Category {
    /// The category of the code numbered `number`.
    init(number: Int) {
        switch number {
        case 1000..<2000: self = .transport
        case 2000..<3000: self = .http
        case 3000..<4000: self = .decoding
        case 4000..<5000: self = .encoding
        case 5000..<6000: self = .validation
        case 6000..<7000: self = .security
        case 7000..<8000: self = .business
        case 8000..<9000: self = .cancelled
        default: self = .configuration
        }
    }
}
