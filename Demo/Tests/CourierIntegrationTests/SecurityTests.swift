import Courier
import CourierDemoServer
import CourierSecurity
import Foundation
import HTTPTypes
import Testing

/// A transport over real HTTP that records the bytes on the wire and can corrupt the answer (a man in the
/// middle).
final class WireTap: Transport {
    struct Exchange: Sendable {
        var request: HTTPRequest
        var requestBody: Data?
        var response: HTTPResponse
        var responseBody: Data
    }

    private let inner = FoundationTransport()
    private let recorded = Locked<[Exchange]>([])
    private let tamper: Bool

    init(tamper: Bool = false) { self.tamper = tamper }

    var exchanges: [Exchange] { recorded.withLock { $0 } }

    func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
        var (response, data) = try await inner.send(request, body: body, options: options)
        recorded.withLock { $0.append(Exchange(request: request, requestBody: body, response: response, responseBody: data)) }
        if tamper, data.count > 20 { data[data.count - 20] ^= 0x04 }
        return (response, data)
    }
}


@Suite(.serialized) struct SecurityLoopbackTests {
    func roundTrip(_ format: ContentFormat, algorithm: EnvelopeSealer.Algorithm = .aes256GCM,
                   encoding: EnvelopeSealer.Encoding = .binary) async throws {
        try await withDemoServer { _, api in
            let tap = WireTap()
            let client = CourierClient(transport: tap, configuration: .init(codecs: DemoAPI.codecs))
            let secure = DemoSecurity.module(api: api, algorithm: algorithm, encoding: encoding)

            let user = try await client.send(DemoSecurity.user(id: 3, module: secure, format: format),
                                             decoding: DemoAPI.UserEnvelope.self)
            #expect(user.value.code == 200)
            #expect(user.value.data.id == 3)
            #expect(user.metadata.format == format)

            let name = "Secret Agent \(format) \(algorithm) \(encoding)"
            let created = try await client.send(
                try DemoSecurity.createUser(.init(name: name, email: "agent@example.com", age: 40), module: secure,
                                            format: format),
                decoding: DemoAPI.UserEnvelope.self)
            #expect(created.value.data.name == name)

            // On the wire: signed, encrypted both ways, plaintext nowhere.
            let exchanges = tap.exchanges
            #expect(exchanges.count == 2)
            for exchange in exchanges {
                #expect(exchange.request.headerFields[HTTPField.Name("X-Courier-Signature")!]?.count == 64)
                #expect(exchange.response.headerFields[HTTPField.Name("X-Courier-Signature")!]?.count == 64)
                #expect(exchange.response.headerFields[HTTPField.Name("X-Courier-Encryption")!]?
                    .hasPrefix(algorithm.name + "; kid=demo-2026-02") == true)
                #expect(exchange.response.headerFields[HTTPField.Name("X-Courier-Content-Type")!] == format.mediaType)
                #expect(exchange.responseBody.range(of: Data("Agent".utf8)) == nil)
                #expect(exchange.responseBody.range(of: Data("@example.com".utf8)) == nil)
            }
            let post = try #require(exchanges.last)
            #expect(post.request.headerFields[.contentType] == encoding.mediaType)
            #expect(post.request.headerFields[HTTPField.Name("X-Courier-Content-Type")!] == format.mediaType)
            #expect(try #require(post.requestBody).range(of: Data("Secret Agent".utf8)) == nil)
        }
    }

    @Test func signedEncryptedRoundTripJSON() async throws { try await roundTrip(.json) }

    @Test
    func signedEncryptedRoundTripXML() async throws { try await roundTrip(.xml) }

    @Test
    func signedEncryptedRoundTripProtobuf() async throws { try await roundTrip(.protobuf) }

    @Test(arguments: [(EnvelopeSealer.Algorithm.aes256CBCHMACSHA256, EnvelopeSealer.Encoding.binary),
                      (.aes256GCM, .base64), (.aes256CBCHMACSHA256, .base64)])
    func otherAlgorithmsAndTextForm(_ algorithm: EnvelopeSealer.Algorithm, _ encoding: EnvelopeSealer.Encoding)
        async throws
    {
        try await roundTrip(.json, algorithm: algorithm, encoding: encoding)
    }

    @Test func tamperedResponseIsRejected() async throws {
        try await withDemoServer { _, api in
            let secure = DemoSecurity.module(api: api)
            // The server corrupts its own answer after signing.
            var endpoint = DemoSecurity.user(id: 1, module: secure)
            endpoint.headers[DemoSecurity.tamperField] = "1"
            let served = try await #require(throws: CourierError.self) { try await CourierClient().send(endpoint) }
            #expect(served.code == .signatureInvalid)
            // A man in the middle flips a bit.
            let tapped = try await #require(throws: CourierError.self) {
                try await CourierClient(transport: WireTap(tamper: true), configuration: .init(codecs: DemoAPI.codecs)).send(DemoSecurity.user(id: 1, module: secure))
            }
            #expect(tapped.code == .signatureInvalid)
            // Without response signatures the AES-GCM tag catches it.
            var stack = DemoSecurity.stack()
            stack.signing?.options.verifiesResponses = false
            let unsignedCheck = APIModule(name: "secure", service: api.service).secured(stack)
            let tag = try await #require(throws: CourierError.self) {
                try await CourierClient(transport: WireTap(tamper: true), configuration: .init(codecs: DemoAPI.codecs)).send(DemoSecurity.user(id: 1, module: unsignedCheck))
            }
            #expect(tag.code == .decryptionFailed)
            #expect(!String(describing: tag).contains("Ada"))
        }
    }

    @Test func unsignedAndReplayedRequestsAreRefused() async throws {
        try await withDemoServer { _, api in
            var stack = DemoSecurity.stack()
            stack.signing = nil
            let unsigned = APIModule(name: "secure", service: api.service).secured(stack)
            let refused = try await #require(throws: CourierError.self) {
                try await CourierClient().send(DemoSecurity.user(id: 1, module: unsigned))
            }
            #expect(refused.code == .unauthorized)
            #expect(refused.message.contains("signatureMissing"))

            let tap = WireTap()
            _ = try await CourierClient(transport: tap, configuration: .init(codecs: DemoAPI.codecs)).send(DemoSecurity.user(id: 1, module: DemoSecurity.module(api: api)))
            let captured = try #require(tap.exchanges.first)
            let (status, body) = try await FoundationTransport().send(captured.request, body: captured.requestBody,
                                                                      options: TransportOptions())
            #expect(status.status == .unauthorized)
            #expect(String(decoding: body, as: UTF8.self).contains("replayDetected"))
        }
    }

    @Test func clientWithoutTheServersCurrentKeyCannotOpenTheAnswer() async throws {
        try await withDemoServer { _, api in
            let ring = DemoSecurity.keyRing()
            let old = try #require(ring.key(id: "demo-2026-01"))
            let stale = KeyRing(current: old)
            let module = APIModule(name: "secure", service: api.service).secured(DemoSecurity.stack(keys: stale))
            let error = try await #require(throws: CourierError.self) {
                try await CourierClient().send(DemoSecurity.user(id: 1, module: module))
            }
            #expect(error.code == .unknownKey)
            // Rotated in: the request still goes out under the old key, the answer opens under the new one.
            stale.add(try #require(ring.key(id: "demo-2026-02")))
            let reply = try await CourierClient().send(DemoSecurity.user(id: 1, module: module), decoding: DemoAPI.UserEnvelope.self)
            #expect(reply.value.data.id == 1)
        }
    }
}
