#if Security
import Crypto
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing
import CourierSecurity

/// The whole stack through `CourierClient` + `InMemoryTransport`, whose handler plays the server with the public
/// server-side API (`SignatureVerifier`, `EnvelopeSealer`).
@Suite struct SecuredPipelineTests {
    static let signingKey = SigningKey(id: "app-2026", secret: "S1GN-secret-do-not-print")
    static let rawEncryptionKey = [UInt8](repeating: 0x5A, count: 32)

    struct Setup {
        var ring: KeyRing
        var serverRing: KeyRing
        var server: PlayedServer
        var stack: SecurityStack
    }

    static func setup(algorithm: EnvelopeSealer.Algorithm = .aes256GCM, encoding: EnvelopeSealer.Encoding = .binary,
                      verifiesResponses: Bool = true) throws -> Setup {
        let key = try EncryptionKey(id: "2026-01", key: SymmetricKey(data: rawEncryptionKey))
        let ring = KeyRing(current: key)
        let serverRing = KeyRing(current: key)
        var stack = SecurityStack()
        stack.commonParameters = CommonParameters(placement: .body, [.constant("app_version", "1.4.2")])
        stack.encryption = EnvelopeEncryption(sealer: EnvelopeSealer(keys: ring, algorithm: algorithm, encoding: encoding))
        var options = RequestSigning.Options()
        options.verifiesResponses = verifiesResponses
        options.signedHeaderFields = ["content-type", "x-courier-content-type", "x-courier-encryption"]
        stack.signing = RequestSigning(key: signingKey, options: options)
        var verifierOptions = SignatureVerifier.Options()
        verifierOptions.requiredSignedHeaders = ["x-courier-encryption"]
        let server = PlayedServer(
            verifier: SignatureVerifier(keys: [signingKey], options: verifierOptions),
            sealer: EnvelopeSealer(keys: serverRing, algorithm: algorithm, encoding: encoding))
        return Setup(ring: ring, serverRing: serverRing, server: server, stack: stack)
    }

    /// Echoes the decrypted request back inside `{"code":0,"data":…}`.
    static func echo(_ server: PlayedServer, mutate: @escaping @Sendable (inout HTTPResponse, inout Data) -> Void = { _, _ in })
        -> InMemoryTransport
    {
        InMemoryTransport { head, body in
            var (response, data) = try server.handle(head, body) { _, value in
                (.ok, ["code": 0, "data": value ?? .null])
            }
            mutate(&response, &data)
            return (response, data)
        }
    }

    @Test(arguments: EnvelopeSealer.Algorithm.allCases, [EnvelopeSealer.Encoding.binary, .base64])
    func signedEncryptedRoundTrip(_ algorithm: EnvelopeSealer.Algorithm, _ encoding: EnvelopeSealer.Encoding) async throws {
        let setup = try Self.setup(algorithm: algorithm, encoding: encoding)
        let transport = Self.echo(setup.server)
        let client = CourierClient(transport: transport)
        let endpoint = makeEndpoint(makeModule().secured(setup.stack), body: ["card": "4111-PLAINTEXT"])
        let reply = try await client.send(endpoint, options: CallOptions(trace: true))
        #expect(reply.value["data"]?["card"] == "4111-PLAINTEXT")
        #expect(reply.value["data"]?["app_version"] == "1.4.2")
        #expect(reply.metadata.headerFields[.contentType] == "application/json")
        #expect(reply.metadata.format == .json)

        let sent = try #require(transport.requests.first)
        let body = try #require(sent.body)
        #expect(body.range(of: Data("4111".utf8)) == nil)
        #expect(sent.head.headerFields[.contentType] == encoding.mediaType)
        #expect(sent.head.headerFields[HTTPField.Name("X-Courier-Content-Type")!] == "application/json")
        #expect(sent.head.headerFields[HTTPField.Name("X-Courier-Encryption")!]?.hasPrefix(algorithm.name + "; kid=2026-01") == true)
        #expect(sent.head.headerFields[HTTPField.Name("X-Courier-Signature")!]?.count == 64)

        let trace = try #require(reply.metadata.trace)
        #expect(trace.stages.map(\.name) == [
            "result", "CommonParameters", "routing", "errorMapping", "codec", "redirects", "EnvelopeEncryption", "RequestSigning",
            "transport",
        ])
    }

    @Test func stackOrderIsTheDocumentedOne() throws {
        var stack = try Self.setup().stack
        stack.auth = BearerAuth(store: CredentialStore(credential: Credential(accessToken: "t")) { _ in
            Credential(accessToken: "u")
        })
        stack.parameterSigning = ParameterSigning(signer: ParameterSigner(secret: "p"))
        let client = CourierClient(transport: InMemoryTransport.successful())
        let names = client.pipeline(for: makeEndpoint(makeModule().secured(stack))).stageNames
        #expect(names == SecurityStack.order)
    }

    @Test func bodilessGETStillGetsAnEncryptedSignedAnswer() async throws {
        let setup = try Self.setup()
        let transport = Self.echo(setup.server)
        let reply = try await CourierClient(transport: transport).send(
            makeEndpoint(makeModule().secured(setup.stack), method: .get, path: "/v1/me"))
        #expect(reply.value["code"] == 0)
        #expect(transport.requests.first?.body == nil)
        #expect(transport.requests.first?.head.path?.contains("app_version=1.4.2") == true)
    }

    @Test func responsesUnderAnOlderKeyStillDecrypt() async throws {
        let setup = try Self.setup()
        // The client moves to a new key; the server still answers under the old one.
        setup.ring.rotate(to: try EncryptionKey(id: "2026-02", key: SymmetricKey(size: .bits256)))
        setup.serverRing.add(setup.ring.current)
        let transport = Self.echo(setup.server)
        let reply = try await CourierClient(transport: transport).send(
            makeEndpoint(makeModule().secured(setup.stack), body: ["x": 1]))
        #expect(reply.value["data"]?["x"] == 1)
        #expect(transport.requests.first?.head.headerFields[HTTPField.Name("X-Courier-Encryption")!] == "aes-256-gcm; kid=2026-02")
    }

    @Test(arguments: [true, false])
    func tamperedResponseIsRejected(_ verifiesResponses: Bool) async throws {
        let setup = try Self.setup(verifiesResponses: verifiesResponses)
        let transport = Self.echo(setup.server) { _, body in body[body.count - 20] ^= 0x01 }
        let error = await #expect(throws: CourierError.self) {
            try await CourierClient(transport: transport).send(makeEndpoint(makeModule().secured(setup.stack), body: ["x": 1]))
        }
        // With response signatures the signature check (inner stage) catches it first; without, the GCM tag.
        #expect(error?.code == (verifiesResponses ? .signatureInvalid : .decryptionFailed))
        #expect(error?.context.stage == (verifiesResponses ? "RequestSigning" : "EnvelopeEncryption"))
    }

    @Test func unsignedOrUnencryptedResponsesAreRejected() async throws {
        let setup = try Self.setup()
        let unsigned = Self.echo(setup.server) { head, _ in head.headerFields[HTTPField.Name("X-Courier-Signature")!] = nil }
        let missing = await #expect(throws: CourierError.self) {
            try await CourierClient(transport: unsigned).send(makeEndpoint(makeModule().secured(setup.stack)))
        }
        #expect(missing?.code == .signatureMissing)

        var plain = setup.stack
        plain.signing = nil
        let error = await #expect(throws: CourierError.self) {
            try await CourierClient(transport: InMemoryTransport.successful()).send(makeEndpoint(makeModule().secured(plain)))
        }
        #expect(error?.code == .decryptionFailed)
    }

    @Test func capturedRequestReplayedToTheServerIsRejected() async throws {
        let setup = try Self.setup()
        let transport = Self.echo(setup.server)
        _ = try await CourierClient(transport: transport).send(makeEndpoint(makeModule().secured(setup.stack), body: ["x": 1]))
        let captured = try #require(transport.requests.first)
        let verifier = try #require(setup.server.verifier)
        let error = #expect(throws: CourierError.self) { try verifier.verify(captured.head, body: captured.body) }
        #expect(error?.code == .replayDetected)
        // Over the wire too: the played server answers 401 with the code.
        let (status, _) = try setup.server.handle(captured.head, captured.body) { _, _ in (.ok, ["code": 0]) }
        #expect(status.status == .unauthorized)
    }

    @Test func staleClockIsRejectedByTheServer() async throws {
        var setup = try Self.setup()
        setup.stack.signing?.now = { Date(timeIntervalSinceNow: -3600) }
        let error = await #expect(throws: CourierError.self) {
            try await CourierClient(transport: Self.echo(setup.server)).send(makeEndpoint(makeModule().secured(setup.stack)))
        }
        #expect(error?.code == .unauthorized)
        #expect(error?.message.contains("staleTimestamp") == true)
    }

    /// Auth replays through the signing stage: the replay carries a fresh nonce the server accepts.
    @Test func authReplayIsSignedAfresh() async throws {
        var setup = try Self.setup()
        let refreshes = Counter()
        setup.stack.auth = BearerAuth(store: CredentialStore(credential: Credential(accessToken: "expired")) { _ in
            refreshes.increment()
            return Credential(accessToken: "fresh")
        }, options: bareUnauthorizedExpires())
        let server = setup.server
        let transport = InMemoryTransport { head, body in
            try server.handle(head, body) { request, _ in
                request.headerFields[.authorization] == "Bearer fresh"
                    ? (.ok, ["code": 0, "data": "ok"]) : (.unauthorized, ["code": 401])
            }
        }
        let reply = try await CourierClient(transport: transport).send(makeEndpoint(makeModule().secured(setup.stack), body: ["x": 1]))
        #expect(reply.value["data"] == "ok")
        #expect(refreshes.count == 1)
        let nonces = transport.requests.map { $0.head.headerFields[HTTPField.Name("X-Courier-Nonce")!] }
        #expect(nonces.count == 2 && nonces[0] != nonces[1])
    }

    /// Keys, tokens and plaintext never reach the log (trace level), the trace, or error descriptions.
    @Test func secretsNeverAppearInLogsTracesOrErrors() async throws {
        let lines = LogCapture()
        var logger = Logger(label: "test", factory: { _ in lines.handler() })
        logger.logLevel = .trace
        var setup = try Self.setup()
        let token = "TOKEN-abc-123-SECRET"
        setup.stack.auth = BearerAuth(store: CredentialStore(credential: Credential(accessToken: "EXPIRED-" + token)) { _ in
            Credential(accessToken: token, refreshToken: "REFRESH-" + token)
        }, options: bareUnauthorizedExpires())
        setup.stack.parameterSigning = ParameterSigning(signer: ParameterSigner(secret: "PARAM-SECRET-xyz"))
        let server = setup.server
        let transport = InMemoryTransport { head, body in
            try server.handle(head, body) { request, value in
                request.headerFields[.authorization] == "Bearer " + token
                    ? (.ok, ["code": 0, "data": "RESPONSE-PLAINTEXT-777", "echo": value ?? .null])
                    : (.unauthorized, ["code": 401])
            }
        }
        let client = CourierClient(transport: transport, configuration: .init(logger: logger))
        let module = makeModule().secured(setup.stack)
        let reply = try await client.send(makeEndpoint(module, body: ["card": "4111-PLAINTEXT-999"]),
                                          options: CallOptions(trace: true))
        #expect(reply.value["data"] == "RESPONSE-PLAINTEXT-777")

        // A failing call: the response is tampered.
        let tampering = InMemoryTransport { head, body in
            var (response, data) = try await transport.send(head, body: body, options: TransportOptions())
            data[data.count - 1] ^= 0x80
            return (response, data)
        }
        let failing = CourierClient(transport: tampering, configuration: .init(logger: logger))
        let error = await #expect(throws: CourierError.self) {
            try await failing.send(makeEndpoint(module, body: ["card": "4111-PLAINTEXT-999"]), options: CallOptions(trace: true))
        }
        #expect(error?.code == .signatureInvalid)

        var texts = lines.all
        texts.append(String(describing: try #require(reply.metadata.trace)))
        texts.append(String(describing: try #require(error)))
        texts.append(String(reflecting: try #require(error)))
        texts.append(try #require(error).message(in: .simplifiedChinese))
        texts.append(String(describing: try #require(error?.trace)))
        texts.append(String(describing: Self.signingKey))
        texts.append(String(describing: setup.ring.current))
        texts.append(String(describing: setup.ring))
        var dumped = ""
        dump(Self.signingKey, to: &dumped)
        dump(setup.ring.current, to: &dumped)
        texts.append(dumped)
        #expect(lines.all.count >= 6, "the stages logged at trace level")

        let secretKeyHex = hex(Self.rawEncryptionKey)
        let forbidden = [token, "S1GN-secret", "PARAM-SECRET", "4111-PLAINTEXT", "RESPONSE-PLAINTEXT", secretKeyHex,
                         String(decoding: Self.rawEncryptionKey, as: UTF8.self), "REFRESH-"]
        for text in texts {
            for secret in forbidden {
                #expect(!text.contains(secret), "'\(secret)' leaked into: \(text)")
            }
        }
    }
}

/// An in-memory swift-log handler that renders every event with its metadata.
final class LogCapture: Sendable {
    private let storage = Locked<[String]>([])

    var all: [String] { storage.withLock { $0 } }

    func handler() -> Handler { Handler(capture: self) }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            capture.storage.withLock { $0.append("\(event.level) \(event.message) \(rendered)") }
        }
    }
}
#endif
