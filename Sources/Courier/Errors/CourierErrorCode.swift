extension CourierError {
    /// A stable, enumerated error code. Switch over it like an enum; new codes can be added without
    /// breaking callers (always keep a `default:`).
    ///
    /// Numbers are stable across releases: 1xxx transport, 2xxx HTTP status (2000 + status for named
    /// statuses), 3xxx decoding, 4xxx encoding, 5xxx validation, 6xxx security, 7xxx business,
    /// 8xxx cancelled, 9xxx configuration.
    ///
    /// ```swift
    /// switch error.code {
    /// case .timedOut, .cannotConnect: retryLater()
    /// case .notFound: showEmptyState()
    /// default: break
    /// }
    /// ```
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The stable number.
        public var number: Int { base.rawValue }
        /// The category the code belongs to.
        public var category: Category { base.category }
        /// The code's name (`timedOut`).
        public var name: String { "\(base)" }
        /// The code's sentence in `language`.
        public func message(in language: Language) -> String {
            language == .english ? base.english : base.chinese
        }

        public var description: String { "\(category).\(name) (\(number))" }

        /// Every code, for documentation and tests.
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
        /// The result is only available from a cache and the cache has none.
        public static let cacheMiss = Code(.cacheMiss)
        /// An interceptor failed with an error of its own (kept as the underlying error).
        public static let interceptorFailure = Code(.interceptorFailure)
        /// A replay transport has no recorded exchange for the request (its method and URL are in the detail).
        public static let noRecordedExchange = Code(.noRecordedExchange)
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
        case invalidURL = 9001, missingCodec, interceptorContract, invalidConfiguration, cacheMiss,
            interceptorFailure, noRecordedExchange, unsupportedByTransport, fileAccessFailed

        var category: CourierError.Category {
            switch rawValue {
            case 1000..<2000: return .transport
            case 2000..<3000: return .http
            case 3000..<4000: return .decoding
            case 4000..<5000: return .encoding
            case 5000..<6000: return .validation
            case 6000..<7000: return .security
            case 7000..<8000: return .business
            case 8000..<9000: return .cancelled
            default: return .configuration
            }
        }

        var english: String {
            switch self {
            case .timedOut: return "The request timed out."
            case .cannotConnect: return "Could not connect to the server."
            case .hostNotFound: return "The server's host name could not be found."
            case .notConnected: return "The device is not connected to the internet."
            case .connectionLost: return "The network connection was lost."
            case .tlsFailure: return "A secure connection to the server could not be made."
            case .responseTooLarge: return "The response was larger than allowed."
            case .tooManyRedirects: return "The server redirected the request too many times."
            case .redirectRefused: return "The server redirected the request somewhere it may not follow."
            case .certificatePinMismatch: return "The server's certificate does not match the pinned key."
            case .transportFailure: return "The request failed in the network layer."
            case .badRequest: return "The server rejected the request as invalid (400)."
            case .unauthorized: return "You need to sign in again (401)."
            case .forbidden: return "You are not allowed to do this (403)."
            case .notFound: return "The requested resource was not found (404)."
            case .methodNotAllowed: return "The server does not allow this method here (405)."
            case .requestTimeout: return "The server timed out waiting for the request (408)."
            case .conflict: return "The request conflicts with the current state (409)."
            case .payloadTooLarge: return "The request body is too large for the server (413)."
            case .unsupportedMediaType: return "The server does not accept this content type (415)."
            case .rangeNotSatisfiable: return "The server cannot send the requested part of the file (416)."
            case .unprocessableContent: return "The server could not process the request's content (422)."
            case .tooManyRequests: return "Too many requests; please slow down (429)."
            case .clientError: return "The server rejected the request."
            case .internalServerError: return "The server had an internal error (500)."
            case .notImplemented: return "The server does not support this request (501)."
            case .badGateway: return "The server's gateway failed (502)."
            case .serviceUnavailable: return "The service is temporarily unavailable (503)."
            case .gatewayTimeout: return "The server's gateway timed out (504)."
            case .serverError: return "The server failed to answer the request."
            case .unexpectedStatus: return "The server answered with an unexpected status."
            case .malformedInput: return "The data could not be read because it is malformed."
            case .typeMismatch: return "A value had the wrong type."
            case .missingValue: return "A required value is missing."
            case .valueOutOfRange: return "A value is out of range."
            case .depthLimitExceeded: return "The data is nested too deeply."
            case .sizeLimitExceeded: return "The data is larger than allowed."
            case .unsafeInput: return "The data asks for something unsafe and was refused."
            case .invalidUTF8: return "The text is not valid UTF-8."
            case .unknownMessageType: return "The message type is unknown."
            case .unexpectedFormat: return "The data is not in the expected format."
            case .encodingFailed: return "The request body could not be encoded."
            case .bodySourceChanged: return "The file being uploaded changed while it was sent."
            case .schemaViolation: return "The response does not match its schema."
            case .invalidSchema: return "The schema is invalid."
            case .unresolvedReference: return "A schema reference could not be resolved."
            case .schemaNotFound: return "The schema was not found."
            case .validationLimitExceeded: return "Validation needed more work than its limits allow."
            case .signatureMissing: return "The signature is missing."
            case .signatureInvalid: return "The signature is invalid."
            case .replayDetected: return "This request was already received (replay)."
            case .staleTimestamp: return "The request's timestamp is outside the allowed window."
            case .decryptionFailed: return "The data could not be decrypted."
            case .unknownKey: return "The encryption key is unknown."
            case .badPadding: return "The encrypted data has invalid padding."
            case .malformedEnvelope: return "The encrypted data is truncated or malformed."
            case .encryptionFailed: return "The data could not be encrypted."
            case .authentication: return "Authentication failed; please sign in again."
            case .business: return "The server reported an error."
            case .cancelled: return "The request was cancelled."
            case .invalidURL: return "The request URL is invalid."
            case .missingCodec: return "No codec is available for this format."
            case .interceptorContract: return "An interceptor did not follow the pipeline's rules."
            case .invalidConfiguration: return "The configuration is invalid."
            case .cacheMiss: return "No cached response is available."
            case .interceptorFailure: return "A stage of the request pipeline failed."
            case .noRecordedExchange: return "No recorded exchange matches the request."
            case .unsupportedByTransport: return "The transport cannot apply this configuration."
            case .fileAccessFailed: return "A local file could not be read or written."
            }
        }

        var chinese: String {
            switch self {
            case .timedOut: return "请求超时了~"
            case .cannotConnect: return "无法连接到服务器~"
            case .hostNotFound: return "找不到服务器地址~"
            case .notConnected: return "网络未连接，请检查网络设置~"
            case .connectionLost: return "网络连接已断开~"
            case .tlsFailure: return "无法建立安全连接~"
            case .responseTooLarge: return "响应内容过大~"
            case .tooManyRedirects: return "服务器重定向次数过多~"
            case .redirectRefused: return "服务器重定向到了不允许的地址~"
            case .certificatePinMismatch: return "服务器证书与固定的公钥不匹配~"
            case .transportFailure: return "网络请求失败了~"
            case .badRequest: return "请求参数有误（400）~"
            case .unauthorized: return "登录已失效，请重新登录（401）~"
            case .forbidden: return "没有权限进行此操作（403）~"
            case .notFound: return "请求的资源不存在（404）~"
            case .methodNotAllowed: return "服务器不允许该请求方法（405）~"
            case .requestTimeout: return "服务器等待请求超时（408）~"
            case .conflict: return "请求与当前状态冲突（409）~"
            case .payloadTooLarge: return "请求内容过大（413）~"
            case .unsupportedMediaType: return "服务器不支持该内容类型（415）~"
            case .rangeNotSatisfiable: return "服务器无法提供请求的文件片段（416）~"
            case .unprocessableContent: return "服务器无法处理请求内容（422）~"
            case .tooManyRequests: return "请求太频繁了，请稍后再试（429）~"
            case .clientError: return "服务器拒绝了请求~"
            case .internalServerError: return "服务器开小差了（500）~"
            case .notImplemented: return "服务器不支持该请求（501）~"
            case .badGateway: return "服务器网关出错了（502）~"
            case .serviceUnavailable: return "服务暂时不可用，请稍后再试（503）~"
            case .gatewayTimeout: return "服务器网关超时了（504）~"
            case .serverError: return "服务器出错了~"
            case .unexpectedStatus: return "服务器返回了意外的状态~"
            case .malformedInput: return "数据格式有误，无法读取~"
            case .typeMismatch: return "数据类型不匹配~"
            case .missingValue: return "缺少必需的数据~"
            case .valueOutOfRange: return "数值超出范围~"
            case .depthLimitExceeded: return "数据嵌套层级过深~"
            case .sizeLimitExceeded: return "数据超出大小限制~"
            case .unsafeInput: return "数据包含不安全的内容，已拒绝~"
            case .invalidUTF8: return "文本不是有效的 UTF-8 编码~"
            case .unknownMessageType: return "未知的消息类型~"
            case .unexpectedFormat: return "数据格式与预期不符~"
            case .encodingFailed: return "请求内容编码失败~"
            case .bodySourceChanged: return "上传的文件在发送过程中被修改了~"
            case .schemaViolation: return "响应数据不符合约定的格式~"
            case .invalidSchema: return "数据模式（Schema）无效~"
            case .unresolvedReference: return "无法解析数据模式中的引用~"
            case .schemaNotFound: return "找不到数据模式~"
            case .validationLimitExceeded: return "数据校验超出了允许的计算量~"
            case .signatureMissing: return "缺少签名~"
            case .signatureInvalid: return "签名校验失败~"
            case .replayDetected: return "重复的请求已被拒绝~"
            case .staleTimestamp: return "请求时间戳已过期~"
            case .decryptionFailed: return "数据解密失败~"
            case .unknownKey: return "未知的密钥~"
            case .badPadding: return "加密数据的填充无效~"
            case .malformedEnvelope: return "加密数据不完整或格式有误~"
            case .encryptionFailed: return "数据加密失败~"
            case .authentication: return "身份验证失败，请重新登录~"
            case .business: return "服务器返回了错误~"
            case .cancelled: return "请求已取消~"
            case .invalidURL: return "请求地址无效~"
            case .missingCodec: return "不支持该数据格式~"
            case .interceptorContract: return "拦截器未遵守调用约定~"
            case .invalidConfiguration: return "配置无效~"
            case .cacheMiss: return "没有可用的缓存数据~"
            case .interceptorFailure: return "请求处理环节出错了~"
            case .noRecordedExchange: return "没有与该请求匹配的录制记录~"
            case .unsupportedByTransport: return "当前传输层不支持该配置~"
            case .fileAccessFailed: return "无法读取或写入本地文件~"
            }
        }
    }
}
