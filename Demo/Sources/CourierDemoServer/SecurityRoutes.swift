public import Courier
public import CourierSecurity
import Crypto
import Foundation
public import HTTPTypes
import Hummingbird
import NIOCore

/// The demo API's secured module, `/secure/...`: every request must be signed (``RequestSigning``, checked
/// with ``SignatureVerifier`` and a replay window), request bodies may be encrypted, and every answer is
/// encrypted (``EnvelopeSealer``, in the algorithm and encoding the request named) and signed
/// (``CanonicalResponse``) — in JSON, XML or protobuf as negotiated.
///
/// The keys are fixed demo keys, public on purpose (never use them for anything real). A request carrying
/// `X-Courier-Demo-Tamper: 1` gets a response with one ciphertext bit flipped after signing, so clients can
/// show a tampered answer being rejected.
///
/// ```swift
/// let server = try await DemoServer.start()
/// let api = DemoAPI(baseURL: server.baseURL)
/// let secure = DemoSecurity.module(api: api)
/// let reply = try await CourierClient().send(DemoSecurity.user(id: 1, module: secure, format: .xml),
///                                     decoding: DemoAPI.UserEnvelope.self)
/// ```
public enum DemoSecurity {
    /// The demo signing key (id `demo-2026`). Public demo material.
    public static let signingKey = SigningKey(id: "demo-2026", secret: "courier-demo-signing-secret-not-for-production")

    /// The demo encryption keys: `demo-2026-02` current, `demo-2026-01` still accepted. A new ring each call.
    public static func keyRing() -> KeyRing {
        func key(_ id: String) -> EncryptionKey {
            // Derived from a public label: demo material only.
            let bytes = SHA256.hash(data: Data("courier demo encryption key \(id)".utf8))
            return try! EncryptionKey(id: id, key: SymmetricKey(data: bytes))
        }
        return KeyRing(current: key("demo-2026-02"), previous: [key("demo-2026-01")])
    }

    /// The header field that asks the demo server to corrupt its answer.
    public static let tamperField = HTTPField.Name("X-Courier-Demo-Tamper")!

    /// The client's security stack for the secured module: encryption then signing, response signatures
    /// verified.
    public static func stack(
        algorithm: EnvelopeSealer.Algorithm = .aes256GCM, encoding: EnvelopeSealer.Encoding = .binary,
        keys: KeyRing = keyRing()
    ) -> SecurityStack {
        var stack = SecurityStack()
        stack.encryption = EnvelopeEncryption(sealer: EnvelopeSealer(keys: keys, algorithm: algorithm, encoding: encoding))
        var options = RequestSigning.Options()
        options.signedHeaderFields = ["content-type", "x-courier-content-type", "x-courier-encryption"]
        options.verifiesResponses = true
        stack.signing = RequestSigning(key: signingKey, options: options)
        return stack
    }

    /// The secured module of `api` (user business codes), with ``stack(algorithm:encoding:keys:)``.
    public static func module(
        api: DemoAPI, algorithm: EnvelopeSealer.Algorithm = .aes256GCM, encoding: EnvelopeSealer.Encoding = .binary
    ) -> APIModule {
        APIModule(name: "secure", service: api.service,
                  businessRule: BusinessRule(mapping: DemoAPI.UserError.self))
            .secured(stack(algorithm: algorithm, encoding: encoding))
    }

    /// `GET /secure/users/:id`.
    public static func user(id: Int64, module: APIModule, format: ContentFormat = .json) -> Endpoint {
        var endpoint = Endpoint(name: "getSecureUser", module: module, path: "/secure/users/\(id)")
        endpoint.responseFormat = format
        endpoint.responseMessage = "demo.UserResponse"
        return endpoint
    }

    /// The demo parameter-signing secret (the common `MD5(k1=v1&…&key=SECRET)` scheme, upper-case hex, in
    /// the parameter `sign`). Public demo material.
    public static let parameterSigner = ParameterSigner(secret: "courier-demo-parameter-secret-not-for-production")

    /// `GET` (or `DELETE`) `/signed/echo` with `parameters` in the query, or `POST` with them as a form body.
    /// The server checks the ``parameterSigner`` signature over every query and form pair it received and
    /// answers them, in order, as `data.pairs` (`[{"name": …, "value": …}]`); a wrong signature is a 401.
    /// Add ``ParameterSigning`` with ``parameterSigner`` to the module.
    public static func signedEcho(
        method: HTTPRequest.Method = .get, module: APIModule, parameters: Value.Object
    ) -> Endpoint {
        var endpoint = Endpoint(name: "signedEcho", module: module, method: method, path: "/signed/echo",
                                body: .object(parameters))
        if method == .post || method == .put || method == .patch { endpoint.requestFormat = .form }
        endpoint.responseFormat = .json
        return endpoint
    }

    /// `POST /secure/users` with an encrypted body.
    public static func createUser(
        _ user: DemoAPI.NewUser, module: APIModule, format: ContentFormat = .json
    ) throws -> Endpoint {
        var endpoint = Endpoint(name: "createSecureUser", module: module, method: .post, path: "/secure/users")
        endpoint.body = try Value(encoding: user)
        endpoint.requestFormat = format
        endpoint.responseFormat = format
        endpoint.requestMessage = "demo.NewUser"
        endpoint.responseMessage = "demo.UserResponse"
        return endpoint
    }
}

/// `GET /secure/users/:id`, `POST /secure/users`: signed requests only, encrypted and signed answers; and
/// the parameter-signed `/signed/echo` (``SignedParameterRoutes``).
struct SecurityRoutes: DemoRouteGroup {
    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        var options = SignatureVerifier.Options()
        options.window = .seconds(300)
        options.requiredSignedHeaders = ["x-courier-encryption"]
        // One nonce store per server: a request replayed to this server is refused.
        let guardian = SecureExchange(
            exchange: exchange,
            verifier: SignatureVerifier(keys: [DemoSecurity.signingKey], nonces: NonceStore(capacity: 100_000),
                                        options: options),
            sealer: EnvelopeSealer(keys: DemoSecurity.keyRing()))

        router.get("/secure/users/:id") { request, context -> Response in
            state.countRequest()
            return try await guardian.handle(request, requestMessage: nil) { _ in
                guard let id = context.parameters.get("id", as: Int64.self) else {
                    return DemoExchange.envelope(code: DemoBusinessCode.invalidParameter, message: "id must be an integer",
                                                 data: nil)
                }
                guard let user = state.user(id: id) else {
                    return DemoExchange.envelope(code: DemoBusinessCode.userNotFound, message: "user \(id) does not exist",
                                                 data: nil)
                }
                return DemoExchange.envelope(data: user.value)
            }
        }
        router.post("/secure/users") { request, _ -> Response in
            state.countRequest()
            return try await guardian.handle(request, requestMessage: "demo.NewUser") { body in
                guard let name = body["name"]?.stringValue, !name.isEmpty else {
                    return DemoExchange.envelope(code: DemoBusinessCode.invalidParameter, message: "name is required",
                                                 data: nil)
                }
                let tags = body["tags"]?.arrayValue?.compactMap(\.stringValue) ?? []
                guard let user = state.addUser(
                    name: name, email: body["email"]?.stringValue ?? "", age: body["age"]?.int64Value ?? 0, tags: tags,
                    address: body["address"])
                else {
                    return DemoExchange.envelope(code: DemoBusinessCode.nameTaken, message: "the name \(name) is taken",
                                                 data: nil)
                }
                return DemoExchange.envelope(data: user.value)
            }
        }
        SignedParameterRoutes().register(on: router, state: state, exchange: exchange)
    }
}

/// `GET`/`DELETE`/`POST /signed/echo`: parameter signatures (``DemoSecurity/parameterSigner``) verified over
/// the raw query and form body as received. The text is split and percent-decoded here with Foundation (not
/// with Courier's parser), `+` read as a space in form bodies only.
struct SignedParameterRoutes: DemoRouteGroup {
    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange) {
        @Sendable func handle(_ request: Request) async throws -> Response {
            state.countRequest()
            var request = request
            var pairs = Self.pairs(request.uri.query ?? "", plusAsSpace: false)
            let body = try await request.collectBody(upTo: 1 << 20)
            if request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true {
                pairs += Self.pairs(String(decoding: body.readableBytesView, as: UTF8.self), plusAsSpace: true)
            }
            do {
                try DemoSecurity.parameterSigner.verify(pairs)
            } catch let error as CourierError {
                return exchange.failure(to: request, code: error.code.number,
                                        message: "\(error.code.name): \(error.detail ?? "")", status: .unauthorized)
            }
            let echoed = pairs.map { pair -> Value in
                ["name": .string(pair.name), "value": pair.value.map(Value.string) ?? .null]
            }
            return exchange.respond(to: request, DemoExchange.envelope(data: ["pairs": .array(echoed)]),
                                    messageType: nil)
        }
        router.get("/signed/echo") { request, _ in try await handle(request) }
        router.delete("/signed/echo") { request, _ in try await handle(request) }
        router.post("/signed/echo") { request, _ in try await handle(request) }
    }

    /// `a=1&b` → pairs, percent-decoded as Courier decodes them (``Courier/ParameterEncoding/parse(_:plusAsSpace:)``:
    /// an invalid escape stays as it is), so the verifier reads exactly the parameters the client signed.
    static func pairs(_ text: String, plusAsSpace: Bool) -> [QueryItem] {
        ParameterEncoding.parse(text, plusAsSpace: plusAsSpace)
    }
}

/// The server half of the security stack: verify, open, answer, seal, sign.
struct SecureExchange: Sendable {
    var exchange: DemoExchange
    var verifier: SignatureVerifier
    var sealer: EnvelopeSealer

    func handle(
        _ request: Request, requestMessage: String?, answer: @Sendable (Value) async throws -> Value
    ) async throws -> Response {
        var request = request
        let body = Data(try await request.collectBody(upTo: 8 << 20).readableBytesView)
        // 1. The signature covers the bytes as received (the envelope, when encrypted), then the replay window.
        let verified: VerifiedRequest
        do {
            verified = try verifier.verify(request.head, body: body)
        } catch let error as CourierError {
            return rejection(error, to: request)
        }
        // 2. Open the body, restoring its Content-Type.
        var fields = request.headers
        var plaintext = body
        var replySealer = sealer
        do {
            if let value = fields[.init("X-Courier-Encryption")!], let header = EncryptionHeader(value) {
                replySealer.algorithm = header.algorithm
                replySealer.encoding = header.encoding
            }
            if let opened = try sealer.open(body, headerFields: &fields) { plaintext = opened }
        } catch let error as CourierError {
            return rejection(error, to: request)
        }
        var input = Value.null
        if !plaintext.isEmpty {
            let format = fields[.contentType].flatMap(ContentFormat.init(contentType:)) ?? .json
            var hints = CodingHints()
            hints.messageType = requestMessage
            do {
                input = try exchange.codecs.decode(plaintext, format: format, hints: hints)
            } catch {
                return exchange.failure(to: request, code: DemoBusinessCode.invalidParameter,
                                        message: "unreadable body", status: .badRequest)
            }
        }
        // 3. Answer in the negotiated format, sealed, signed.
        let value = try await answer(input)
        let format = exchange.responseFormat(for: request)
        var hints = CodingHints()
        hints.messageType = (value["code"]?.int64Value ?? 200) == 200 ? "demo.UserResponse" : "demo.ErrorResponse"
        hints.rootName = "response"
        let encoded = try exchange.codecs.encode(value, format: format, hints: hints)
        var headers: HTTPFields = [.contentType: format.mediaType]
        var sealed = try replySealer.seal(encoded, headerFields: &headers)
        let status = HTTPResponse.Status.ok
        if let signature = verifier.responseSignature(status: Int(status.code), body: sealed, for: verified) {
            headers[.init("X-Courier-Signature")!] = signature
        }
        if request.headers[DemoSecurity.tamperField] != nil, !sealed.isEmpty {
            sealed[sealed.count - 17] ^= 0x01   // a ciphertext bit, after signing
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: sealed)))
    }

    /// 401 with the security code in the demo envelope (plain: the client could not read a sealed one).
    private func rejection(_ error: CourierError, to request: Request) -> Response {
        exchange.failure(to: request, code: error.code.number, message: "\(error.code.name): \(error.detail ?? "")",
                         status: .unauthorized)
    }
}
