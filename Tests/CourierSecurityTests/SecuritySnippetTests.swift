#if Security
import Crypto
import CourierSecurity
import CourierTesting
import Foundation
import HTTPTypes
import Testing

// The Swift code blocks of the article "Security" (Sources/CourierSecurity/CourierSecurity.docc), word for word
// between `// doc-snippet:` markers (checked by `DocArticleSnippetCheck` in CourierTests), run against a server
// played with the public server-side API.

@Suite(.timeLimit(.minutes(10))) struct SecuritySnippetTests {
    static let signingSecret = "S1GN-secret-of-the-article"

    /// The app's sign-in screen, as the article's re-login handler calls it.
    func signIn(because reason: CredentialStore.ReLoginReason) async throws -> Credential? {
        Credential(accessToken: "signed-in")
    }

    /// The app's refresh call, as the article's refresher calls it.
    func refresh(_ old: Credential?) async throws -> Credential {
        Credential(accessToken: "refreshed", refreshToken: "refresh-2")
    }

    func makeTokens(savedAccessToken: String, savedRefreshToken: String) -> (CredentialStore, BearerAuth) {
        // doc-snippet: Security
        let tokens = CredentialStore(
            credential: Credential(accessToken: savedAccessToken, refreshToken: savedRefreshToken),
            reLogin: { reason in try await signIn(because: reason) }       // nil: the user cancelled
        ) { old in try await refresh(old) }

        var options = BearerAuth.Options()
        options.expiryCodes = [40101]                                      // "token expired" in the body
        let auth = BearerAuth(store: tokens, options: options)
        // end-doc-snippet
        return (tokens, auth)
    }

    @Test func theArticlesStackSignsEncryptsAndAuthenticates() async throws {
        let api = APIService(name: "api", baseURL: URL(string: "https://api.example.com")!)
        let signingSecret = Self.signingSecret
        let keyBytes = [UInt8](repeating: 0x5A, count: 32)
        let (tokens, _) = makeTokens(savedAccessToken: "saved-token", savedRefreshToken: "saved-refresh")

        // doc-snippet: Security
        let encryptionKey = try EncryptionKey(id: "2026-01", keyBytes: keyBytes)
        let ring = KeyRing(current: encryptionKey)
        ring.rotate(to: try EncryptionKey.random(id: "2026-02"))
        print(ring.ids)                                                    // ["2026-01", "2026-02"]
        // end-doc-snippet
        #expect(ring.ids == ["2026-01", "2026-02"])
        #expect(ring.current.id == "2026-02")

        // doc-snippet: Security
        var stack = SecurityStack()
        stack.commonParameters = CommonParameters(placement: .query, [
            .constant("app_version", "2.1.0"),
            .timestamp("ts"),
        ])
        stack.auth = BearerAuth(store: tokens)
        stack.encryption = EnvelopeEncryption(sealer: EnvelopeSealer(keys: KeyRing(current: encryptionKey)))
        stack.signing = RequestSigning(key: SigningKey(id: "app-2026", secret: signingSecret))
        let payments = APIModule(name: "payments", service: api).secured(stack)
        // end-doc-snippet

        let server = PlayedServer(
            verifier: SignatureVerifier(keys: [SigningKey(id: "app-2026", secret: signingSecret)]),
            sealer: EnvelopeSealer(keys: KeyRing(current: encryptionKey)))
        let transport = InMemoryTransport { head, body in
            try server.handle(head, body) { request, value in
                let query = QueryItem.decode(String(request.path?.split(separator: "?").last ?? ""))
                return (.ok, [
                    "code": 0,
                    "authorization": .string(request.headerFields[.authorization] ?? ""),
                    "app_version": .string(query.first { $0.name == "app_version" }?.value ?? ""),
                    "has_ts": .bool(query.contains { $0.name == "ts" }),
                    "data": value ?? .null,
                ])
            }
        }
        let client = CourierClient(transport: transport)
        let pay = Endpoint(name: "pay", module: payments, method: .post, path: "/pay", body: ["card": "4111-PLAINTEXT"])
        let reply = try await client.send(pay)
        #expect(reply.value["authorization"] == "Bearer saved-token")
        #expect(reply.value["app_version"] == "2.1.0")
        #expect(reply.value["has_ts"] == true)
        #expect(reply.value["data"]?["card"] == "4111-PLAINTEXT")
        let sent = try #require(transport.requests.last)
        #expect(!String(decoding: sent.body ?? Data(), as: UTF8.self).contains("4111"))     // encrypted on the wire
        #expect(sent.head.headerFields[HTTPField.Name("X-Courier-Signature")!] != nil)
        #expect(client.pipeline(for: pay).stageNames == [
            "result", "CommonParameters", "BearerAuth", "routing", "errorMapping", "codec", "redirects",
            "EnvelopeEncryption", "RequestSigning", "transport",
        ])
    }

    @Test func anExpiryCodeRefreshesOnceAndReplays() async throws {
        let (tokens, auth) = makeTokens(savedAccessToken: "saved-token", savedRefreshToken: "saved-refresh")
        let transport = InMemoryTransport { request, _ in
            let token = request.headerFields[.authorization]
            let json = token == "Bearer refreshed" ? #"{"code":0,"data":"ok"}"# : #"{"code":40101,"message":"token expired"}"#
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(json.utf8))
        }
        let module = APIModule(
            name: "me", service: APIService(name: "api", baseURL: URL(string: "https://api.example.com")!),
            interceptors: [auth])
        let reply = try await CourierClient(transport: transport).send(Endpoint(name: "me", module: module, path: "/me"))
        #expect(reply.value["data"] == "ok")
        #expect(transport.requests.map { $0.head.headerFields[.authorization] } == ["Bearer saved-token", "Bearer refreshed"])
        #expect(await tokens.refreshCount == 1)
    }

    @Test func theVerifierChecksASignedRequest() async throws {
        let signingSecret = Self.signingSecret
        let transport = InMemoryTransport { request, body in
            // doc-snippet: Security
            let verifier = SignatureVerifier(keys: [SigningKey(id: "app-2026", secret: signingSecret)])
            let verified = try verifier.verify(request, body: body)
            print(verified.keyID)
            // end-doc-snippet
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    Data(#"{"key":"\#(verified.keyID)"}"#.utf8))
        }
        let module = APIModule(
            name: "signed", service: APIService(name: "api", baseURL: URL(string: "https://api.example.com")!),
            interceptors: [RequestSigning(key: SigningKey(id: "app-2026", secret: signingSecret))])
        let client = CourierClient(transport: transport)
        let reply = try await client.send(Endpoint(name: "post", module: module, method: .post, path: "/p", body: ["a": 1]))
        #expect(reply.value["key"] == "app-2026")

        let forged = APIModule(
            name: "forged", service: module.service,
            interceptors: [RequestSigning(key: SigningKey(id: "app-2026", secret: "another secret"))])
        let error = try await #require(throws: CourierError.self) {
            try await client.send(Endpoint(name: "post", module: forged, method: .post, path: "/p", body: ["a": 1]))
        }
        #expect(error.code == .signatureInvalid)
    }
}
#endif
