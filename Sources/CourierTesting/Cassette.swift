#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// A recording of HTTP exchanges, in the order they happened: what ``ReplayTransport`` records and replays.
/// A value (edit it, compare it, build one by hand), `Codable`, and saved as a documented JSON file.
///
/// Each ``Exchange`` holds the request as the transport saw it (method, scheme, authority, path with query,
/// header fields, body) and its ``Outcome``: the response (status, header fields, body) or a recorded
/// transport ``Failure`` such as a timeout.
///
/// ## File format, version 1
///
/// UTF-8 JSON, pretty-printed with members in the order shown, exchanges oldest first:
///
/// ```json
/// {
///   "version": 1,
///   "exchanges": [
///     {
///       "request": {
///         "method": "POST",
///         "scheme": "https",
///         "authority": "api.example.com",
///         "path": "/users?page=2",
///         "headers": [{ "name": "Content-Type", "value": "application/json" }],
///         "body": { "text": "{\"name\":\"Ada\"}" }
///       },
///       "response": {
///         "status": 200,
///         "reason": "OK",
///         "headers": [{ "name": "Content-Type", "value": "application/json" }],
///         "body": { "text": "{\"code\":0}" }
///       }
///     },
///     {
///       "request": { "method": "GET", "scheme": "https", "authority": "api.example.com", "path": "/slow",
///                    "headers": [] },
///       "failure": { "code": "timedOut", "number": 1001, "detail": "no answer within 2.0 seconds" }
///     }
///   ]
/// }
/// ```
///
/// - `version` is ``formatVersion``; a file of another version is refused with a clear error.
/// - `scheme`, `authority` and `path` are omitted when the request has none, `reason` when the status has
///   no reason phrase. `headers` keep their order and repeated names; redacted values read `"REDACTED"`
///   (`RedactionPolicy.placeholder`; see ``ReplayTransport/Options/redaction``).
/// - A body is `{"text": "…"}` when its bytes are valid UTF-8 (the text is exactly those bytes) and
///   `{"base64": "…"}` otherwise. A request without a body has no `body` member; a response's empty body
///   is omitted too.
/// - An exchange has exactly one of `response` and `failure`. A failure's `number` is the stable
///   `CourierError.Code.number` and wins over `code` (the name, for people) when both are present;
///   `detail` is optional.
///
/// ```swift
/// var cassette = try Cassette.load(from: fixtures.appending(path: "users.cassette.json"))
/// cassette.exchanges.removeAll { $0.request.method == .delete }
/// try cassette.save(to: fixtures.appending(path: "users.cassette.json"))
/// ```
public struct Cassette: Hashable, Sendable {
    /// The version of the file format this Courier writes and reads.
    public static let formatVersion = 1

    /// The recorded exchanges, oldest first.
    public var exchanges: [Exchange]

    /// A cassette holding `exchanges` (none by default).
    public init(exchanges: [Exchange] = []) {
        self.exchanges = exchanges
    }
}

// MARK: - Exchanges

extension Cassette {
    /// One recorded request and what came back: a response or a transport failure.
    ///
    /// ```swift
    /// let exchange = Cassette.Exchange(
    ///     request: HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/users/7"),
    ///     response: HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
    ///     responseBody: Data(#"{"code":0,"data":{"id":7}}"#.utf8))
    /// let timeout = Cassette.Exchange(
    ///     request: HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/slow"),
    ///     failure: Cassette.Failure(.timedOut))
    /// ```
    public struct Exchange: Hashable, Sendable {
        /// The request head as the transport received it (after every interceptor).
        public var request: HTTPRequest
        /// The request body (`nil`: none).
        public var requestBody: Data?
        /// What the transport answered.
        public var outcome: Outcome

        /// An exchange with any outcome.
        public init(request: HTTPRequest, requestBody: Data? = nil, outcome: Outcome) {
            self.request = request
            self.requestBody = requestBody
            self.outcome = outcome
        }

        /// An exchange that got a response.
        public init(
            request: HTTPRequest, requestBody: Data? = nil, response: HTTPResponse, responseBody: Data = Data()
        ) {
            self.init(request: request, requestBody: requestBody, outcome: .response(response, body: responseBody))
        }

        /// An exchange that failed in the transport.
        public init(request: HTTPRequest, requestBody: Data? = nil, failure: Failure) {
            self.init(request: request, requestBody: requestBody, outcome: .failure(failure))
        }

        /// The response head, when the exchange got one.
        public var response: HTTPResponse? {
            if case .response(let head, _) = outcome { return head }
            return nil
        }

        /// The response body, when the exchange got a response.
        public var responseBody: Data? {
            if case .response(_, let body) = outcome { return body }
            return nil
        }

        /// The failure, when the exchange failed.
        public var failure: Failure? {
            if case .failure(let failure) = outcome { return failure }
            return nil
        }
    }

    /// What a recorded request got.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    ///
    /// ```swift
    /// switch exchange.outcome {
    /// case .response(let head, let body): print(head.status, body.count)
    /// case .failure(let failure): print(failure.code)       // transport.timedOut (1001)
    /// }
    /// ```
    public enum Outcome: Hashable, Sendable {
        /// The transport returned this response head and body.
        case response(HTTPResponse, body: Data)
        /// The transport failed; replaying throws the same error code.
        case failure(Failure)
    }

    /// A recorded transport failure: the error code (`TransportFailure.timedOut` and the like) and its
    /// detail. Replaying it throws ``error()``.
    ///
    /// ```swift
    /// let failure = Cassette.Failure(.connectionLost, detail: "reset by peer")
    /// failure.transportFailure          // .connectionLost
    /// throw failure.error()             // [transport.connectionLost 1005] The network connection was lost. …
    /// ```
    public struct Failure: Hashable, Sendable {
        /// The error code the transport failed with.
        public var code: CourierError.Code
        /// The error's detail, if it had one.
        public var detail: String?

        /// A failure with any error code (normally one of the transport category, such as
        /// `CourierError.Code.responseTooLarge`).
        public init(code: CourierError.Code, detail: String? = nil) {
            self.code = code
            self.detail = detail
        }

        /// A failure for one of the enumerated transport failures.
        public init(_ failure: TransportFailure, detail: String? = nil) {
            self.init(code: failure.code, detail: detail)
        }

        /// The enumerated transport failure with this code, if there is one.
        public var transportFailure: TransportFailure? {
            TransportFailure.allCases.first { $0.code == code }
        }

        /// The error replaying this failure throws: its code and detail, attributed to the transport stage.
        public func error() -> CourierError {
            var error = CourierError(code, detail: detail)
            error.context.stage = "transport"
            return error
        }
    }
}

// MARK: - Files

extension Cassette {
    /// Reads the cassette saved at `url`.
    ///
    /// A missing or unreadable file fails with `CourierError.Code.invalidConfiguration`; a file that is not
    /// valid JSON with `CourierError.Code.malformedInput` (line and column in the message); JSON of the
    /// wrong shape or version with `CourierError.Code.typeMismatch` or `CourierError.Code.missingValue`
    /// naming the member. Every message names the file.
    ///
    /// ```swift
    /// let cassette = try Cassette.load(from: URL(filePath: "Fixtures/users.cassette.json"))
    /// ```
    public static func load(from url: URL) throws -> Cassette {
        let path = url.path(percentEncoded: false)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw CourierError(
                .invalidConfiguration, detail: "The cassette \(path) could not be read.", underlying: error)
        }
        do {
            return try Cassette(jsonData: data)
        } catch let error as CourierError {
            var error = error
            error.detail = "The cassette \(path) is unreadable: \(error.detail ?? error.code.message(in: .english))"
            throw error
        }
    }

    /// Writes the cassette to `url` in the JSON file format, atomically (a reader sees the old file or the
    /// new one, never half of one). Fails with `CourierError.Code.invalidConfiguration` when the file
    /// cannot be written.
    ///
    /// ```swift
    /// try transport.cassette.save(to: URL(filePath: "Fixtures/users.cassette.json"))
    /// ```
    public func save(to url: URL) throws {
        let data = try jsonData()
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            let path = url.path(percentEncoded: false)
            throw CourierError(
                .invalidConfiguration, detail: "The cassette could not be written to \(path).", underlying: error)
        }
    }

    /// Reads a cassette from the bytes of a cassette file.
    ///
    /// ```swift
    /// let cassette = try Cassette(jsonData: Data(#"{"version":1,"exchanges":[]}"#.utf8))
    /// ```
    public init(jsonData data: Data) throws {
        let value = try JSONCodec().decode(data)
        self = try ValueDecoder().decode(Cassette.self, from: value)
    }

    /// The cassette as the bytes of a cassette file: pretty-printed UTF-8 JSON ending in a newline.
    ///
    /// ```swift
    /// let text = String(decoding: try cassette.jsonData(), as: UTF8.self)
    /// ```
    public func jsonData() throws -> Data {
        var options = JSONCodec.Options()
        options.pretty = true
        var bytes: [UInt8] = try JSONCodec(options: options).encode(try ValueEncoder().encode(self))
        bytes.append(UInt8(ascii: "\n"))
        return Data(bytes)
    }
}

// MARK: - Codable (the file format above)

extension Cassette: Codable {
    private enum CodingKeys: String, CodingKey {
        case version, exchanges
    }

    /// Decodes a cassette in the file format (any `Decoder`; ``load(from:)`` uses Courier's JSON codec).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .version)
        guard version == Self.formatVersion else {
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: container,
                debugDescription: "cassette format version \(version) is not supported (this Courier reads version "
                    + "\(Self.formatVersion))")
        }
        exchanges = try container.decode([Exchange].self, forKey: .exchanges)
    }

    /// Encodes the cassette in the file format.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.formatVersion, forKey: .version)
        try container.encode(exchanges, forKey: .exchanges)
    }
}

extension Cassette.Exchange: Codable {
    private enum CodingKeys: String, CodingKey {
        case request, response, failure
    }

    private enum RequestKeys: String, CodingKey {
        case method, scheme, authority, path, headers, body
    }

    private enum ResponseKeys: String, CodingKey {
        case status, reason, headers, body
    }

    private enum FailureKeys: String, CodingKey {
        case code, number, detail
    }

    /// Decodes one exchange of the file format.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)

        let request = try container.nestedContainer(keyedBy: RequestKeys.self, forKey: .request)
        let methodName = try request.decode(String.self, forKey: .method)
        guard let method = HTTPRequest.Method(methodName) else {
            throw DecodingError.dataCorruptedError(
                forKey: .method, in: request, debugDescription: "'\(methodName)' is not an HTTP method")
        }
        self.request = HTTPRequest(
            method: method, scheme: try request.decodeIfPresent(String.self, forKey: .scheme),
            authority: try request.decodeIfPresent(String.self, forKey: .authority),
            path: try request.decodeIfPresent(String.self, forKey: .path),
            headerFields: try request.decodeIfPresent(HeaderList.self, forKey: .headers)?.fields ?? [:])
        self.requestBody = try request.decodeIfPresent(Body.self, forKey: .body)?.data

        switch (container.contains(.response), container.contains(.failure)) {
        case (true, false):
            let response = try container.nestedContainer(keyedBy: ResponseKeys.self, forKey: .response)
            let code = try response.decode(Int.self, forKey: .status)
            guard (100...999).contains(code) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .status, in: response, debugDescription: "\(code) is not an HTTP status code")
            }
            let reason = try response.decodeIfPresent(String.self, forKey: .reason) ?? ""
            let head = HTTPResponse(
                status: HTTPResponse.Status(code: code, reasonPhrase: reason),
                headerFields: try response.decodeIfPresent(HeaderList.self, forKey: .headers)?.fields ?? [:])
            let body = try response.decodeIfPresent(Body.self, forKey: .body)?.data ?? Data()
            self.outcome = .response(head, body: body)
        case (false, true):
            let failure = try container.nestedContainer(keyedBy: FailureKeys.self, forKey: .failure)
            let code: CourierError.Code
            if let number = try failure.decodeIfPresent(Int.self, forKey: .number) {
                guard let known = CourierError.Code.cassetteCodes.first(where: { $0.number == number }) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .number, in: failure, debugDescription: "\(number) is not a Courier error number")
                }
                code = known
            } else {
                let name = try failure.decode(String.self, forKey: .code)
                guard let known = CourierError.Code.cassetteCodes.first(where: { $0.name == name }) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .code, in: failure, debugDescription: "'\(name)' is not a Courier error code")
                }
                code = known
            }
            let detail = try failure.decodeIfPresent(String.self, forKey: .detail)
            self.outcome = .failure(Cassette.Failure(code: code, detail: detail))
        default:
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: container.codingPath,
                debugDescription: "an exchange needs exactly one of \"response\" and \"failure\""))
        }
    }

    /// Encodes one exchange in the file format.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)

        var request = container.nestedContainer(keyedBy: RequestKeys.self, forKey: .request)
        try request.encode(self.request.method.rawValue, forKey: .method)
        try request.encodeIfPresent(self.request.scheme, forKey: .scheme)
        try request.encodeIfPresent(self.request.authority, forKey: .authority)
        try request.encodeIfPresent(self.request.path, forKey: .path)
        try request.encode(HeaderList(self.request.headerFields), forKey: .headers)
        try request.encodeIfPresent(requestBody.map(Body.init), forKey: .body)

        switch outcome {
        case .response(let head, let body):
            var response = container.nestedContainer(keyedBy: ResponseKeys.self, forKey: .response)
            try response.encode(head.status.code, forKey: .status)
            if !head.status.reasonPhrase.isEmpty { try response.encode(head.status.reasonPhrase, forKey: .reason) }
            try response.encode(HeaderList(head.headerFields), forKey: .headers)
            if !body.isEmpty { try response.encode(Body(body), forKey: .body) }
        case .failure(let recorded):
            var failure = container.nestedContainer(keyedBy: FailureKeys.self, forKey: .failure)
            try failure.encode(recorded.code.name, forKey: .code)
            try failure.encode(recorded.code.number, forKey: .number)
            try failure.encodeIfPresent(recorded.detail, forKey: .detail)
        }
    }
}

/// Header fields in the file: an array of `{"name": …, "value": …}` in order.
private struct HeaderList: Codable {
    private struct Field: Codable {
        var name: String
        var value: String
    }

    var fields: HTTPFields

    init(_ fields: HTTPFields) {
        self.fields = fields
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var fields = HTTPFields()
        while !container.isAtEnd {
            let field = try container.decode(Field.self)
            guard let name = HTTPField.Name(field.name) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "'\(field.name)' is not a valid header field name")
            }
            fields.append(HTTPField(name: name, value: field.value))
        }
        self.fields = fields
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for field in fields {
            try container.encode(Field(name: field.name.rawName, value: field.value))
        }
    }
}

/// A body in the file: `{"text": …}` for valid UTF-8, `{"base64": …}` for anything else.
private struct Body: Codable {
    private enum CodingKeys: String, CodingKey {
        case text, base64
    }

    var data: Data

    init(_ data: Data) {
        self.data = data
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let text = try container.decodeIfPresent(String.self, forKey: .text) {
            data = Data(text.utf8)
        } else {
            guard let base64 = try container.decodeIfPresent(String.self, forKey: .base64) else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: container.codingPath, debugDescription: "a body needs \"text\" or \"base64\""))
            }
            guard let data = Data(base64Encoded: base64) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .base64, in: container, debugDescription: "the body is not valid base64")
            }
            self.data = data
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let text = String(validating: data, as: UTF8.self) {
            try container.encode(text, forKey: .text)
        } else {
            try container.encode(data.base64EncodedString(), forKey: .base64)
        }
    }
}
