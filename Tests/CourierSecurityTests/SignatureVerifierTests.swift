#if Security
import Crypto
import Foundation
import HTTPTypes
import Testing
@testable import CourierSecurity

@Suite struct SignatureVerifierTests {
    let key = SigningKey(id: "app-2026", secret: "courier-demo-secret")
    let time = ManualTime()

    func signedRequest(nonce: String = "0123456789abcdef0123456789abcdef", at timestamp: Int64? = nil,
                       body: Data? = Data(#"{"a":1}"#.utf8)) -> HTTPRequest {
        var head = HTTPRequest(method: .post, scheme: "http", authority: "h", path: "/v1/users?x=1",
                               headerFields: [.contentType: "application/json"])
        RequestSigning(key: key).sign(&head, body: body, timestamp: timestamp ?? Int64(time.now.timeIntervalSince1970),
                                      nonce: nonce)
        return head
    }

    func verifier(window: Duration = .seconds(300), nonces: NonceStore = NonceStore()) -> SignatureVerifier {
        var options = SignatureVerifier.Options()
        options.window = window
        let time = time
        return SignatureVerifier(keys: [key], nonces: nonces, options: options, now: { time.now })
    }

    @Test func authenticRequestVerifies() throws {
        let verified = try verifier().verify(signedRequest(), body: Data(#"{"a":1}"#.utf8))
        #expect(verified == VerifiedRequest(keyID: "app-2026", timestamp: 1_767_225_600,
                                            nonce: "0123456789abcdef0123456789abcdef"))
    }

    /// Keys as bytes (no swift-crypto type in the caller's code) sign and verify as their `SymmetricKey` forms do.
    @Test func keysGivenAsBytesSignAndVerify() throws {
        let secret = Data("courier-demo-secret".utf8)
        var head = HTTPRequest(method: .post, scheme: "http", authority: "h", path: "/v1/users?x=1",
                               headerFields: [.contentType: "application/json"])
        let body = Data(#"{"a":1}"#.utf8)
        let now = Int64(time.now.timeIntervalSince1970)
        RequestSigning(key: SigningKey(id: "app-2026", secretBytes: secret))
            .sign(&head, body: body, timestamp: now, nonce: "0123456789abcdef0123456789abcdef")
        #expect(head == signedRequest())
        let time = time
        let verifier = SignatureVerifier(now: { time.now }, secrets: ["app-2026": secret])
        #expect(try verifier.verify(head, body: body).keyID == "app-2026")
        let strangers = SignatureVerifier(now: { time.now }, secrets: ["other": secret])
        let error = #expect(throws: CourierError.self) { try strangers.verify(head, body: body) }
        #expect(error?.code == .unknownKey)
    }

    @Test func sameSignedRequestTwiceIsAReplay() throws {
        let verifier = verifier()
        let head = signedRequest()
        _ = try verifier.verify(head, body: Data(#"{"a":1}"#.utf8))
        let error = #expect(throws: CourierError.self) { try verifier.verify(head, body: Data(#"{"a":1}"#.utf8)) }
        #expect(error?.code == .replayDetected)
        // A new nonce passes.
        _ = try verifier.verify(signedRequest(nonce: "another"), body: Data(#"{"a":1}"#.utf8))
    }

    @Test(arguments: [-301.0, 301.0, -86_400.0, 4_000_000.0])
    func timestampOutsideTheWindowIsStale(_ offset: TimeInterval) {
        let head = signedRequest(at: Int64(time.now.timeIntervalSince1970 + offset))
        let error = #expect(throws: CourierError.self) { try verifier().verify(head, body: Data(#"{"a":1}"#.utf8)) }
        #expect(error?.code == .staleTimestamp)
    }

    @Test(arguments: [-300.0, 0.0, 299.0])
    func timestampInsideTheWindowPasses(_ offset: TimeInterval) throws {
        let head = signedRequest(at: Int64(time.now.timeIntervalSince1970 + offset))
        _ = try verifier().verify(head, body: Data(#"{"a":1}"#.utf8))
    }

    @Test func nonceIsForgottenOnlyAfterItsTimestampIsStale() throws {
        let nonces = NonceStore()
        let verifier = verifier(window: .seconds(60), nonces: nonces)
        let head = signedRequest()
        _ = try verifier.verify(head, body: Data(#"{"a":1}"#.utf8))
        time.advance(by: 59)
        let replay = #expect(throws: CourierError.self) { try verifier.verify(head, body: Data(#"{"a":1}"#.utf8)) }
        #expect(replay?.code == .replayDetected)
        time.advance(by: 2)
        // Expired from the store, but the timestamp is stale now, so the replay still fails.
        let error = #expect(throws: CourierError.self) { try verifier.verify(head, body: Data(#"{"a":1}"#.utf8)) }
        #expect(error?.code == .staleTimestamp)
        _ = try verifier.verify(signedRequest(nonce: "fresh"), body: Data(#"{"a":1}"#.utf8))
        #expect(nonces.count == 1)
    }

    @Test func fullNonceStoreRefusesRatherThanForgets() throws {
        let verifier = verifier(nonces: NonceStore(capacity: 2))
        _ = try verifier.verify(signedRequest(nonce: "n1"), body: Data(#"{"a":1}"#.utf8))
        _ = try verifier.verify(signedRequest(nonce: "n2"), body: Data(#"{"a":1}"#.utf8))
        let error = #expect(throws: CourierError.self) {
            try verifier.verify(signedRequest(nonce: "n3"), body: Data(#"{"a":1}"#.utf8))
        }
        #expect(error?.code == .replayDetected)
    }

    @Test func everyFlippedSignatureBitIsRejected() throws {
        let head = signedRequest()
        let signature = bytes(head.headerFields[HTTPField.Name("X-Courier-Signature")!]!)
        #expect(signature.count == 32)
        let verifier = verifier()
        for bit in 0..<(signature.count * 8) {
            var flipped = signature
            flipped[bit / 8] ^= 1 << (bit % 8)
            var tampered = head
            tampered.headerFields[HTTPField.Name("X-Courier-Signature")!] = hex(flipped)
            let error = #expect(throws: CourierError.self) { try verifier.verify(tampered, body: Data(#"{"a":1}"#.utf8)) }
            #expect(error?.code == .signatureInvalid, "bit \(bit)")
        }
        // Nothing was remembered for the forgeries: the authentic request still passes.
        _ = try verifier.verify(head, body: Data(#"{"a":1}"#.utf8))
    }

    @Test func everyFlippedBitOfTheSignatureTextIsRejected() throws {
        let head = signedRequest()
        let text = Array(head.headerFields[HTTPField.Name("X-Courier-Signature")!]!.utf8)
        let verifier = verifier()
        for bit in 0..<(text.count * 8) {
            var flipped = text
            flipped[bit / 8] ^= 1 << (bit % 8)
            guard let value = String(validating: flipped, as: UTF8.self),
                  HTTPField(name: HTTPField.Name("X-Courier-Signature")!, value: value).value == value
            else { continue }   // not representable as a header field value
            var tampered = head
            tampered.headerFields[HTTPField.Name("X-Courier-Signature")!] = value
            let error = #expect(throws: CourierError.self) { try verifier.verify(tampered, body: Data(#"{"a":1}"#.utf8)) }
            #expect(error?.code == .signatureInvalid, "bit \(bit)")
        }
    }

    @Test func tamperedPartsOfTheRequestAreRejected() throws {
        let verifier = verifier()
        let body = Data(#"{"a":1}"#.utf8)
        var path = signedRequest(nonce: "p")
        path.path = "/v1/users?x=2"
        var method = signedRequest(nonce: "m")
        method.method = .put
        var type = signedRequest(nonce: "t")
        type.headerFields[.contentType] = "application/xml"
        var signedList = signedRequest(nonce: "s")
        signedList.headerFields[HTTPField.Name("X-Courier-Signed-Headers")!] = ""
        for head in [path, method, type, signedList] {
            let error = #expect(throws: CourierError.self) { try verifier.verify(head, body: body) }
            #expect(error?.code == .signatureInvalid)
        }
        let error = #expect(throws: CourierError.self) {
            try verifier.verify(signedRequest(nonce: "b"), body: Data(#"{"a":2}"#.utf8))
        }
        #expect(error?.code == .signatureInvalid)
    }

    @Test func missingFieldsAndUnknownKeys() throws {
        let verifier = verifier()
        for name in ["X-Courier-Key-Id", "X-Courier-Timestamp", "X-Courier-Nonce", "X-Courier-Signature"] {
            var head = signedRequest()
            head.headerFields[HTTPField.Name(name)!] = nil
            let error = #expect(throws: CourierError.self) { try verifier.verify(head, body: Data(#"{"a":1}"#.utf8)) }
            #expect(error?.code == .signatureMissing, "\(name)")
        }
        var head = signedRequest()
        head.headerFields[HTTPField.Name("X-Courier-Key-Id")!] = "someone-else"
        let error = #expect(throws: CourierError.self) { try verifier.verify(head, body: Data(#"{"a":1}"#.utf8)) }
        #expect(error?.code == .unknownKey)
    }

    @Test func requiredSignedHeaderMustBeSigned() throws {
        var options = SignatureVerifier.Options()
        options.requiredSignedHeaders = ["x-courier-encryption"]
        let time = time
        let verifier = SignatureVerifier(keys: [key], options: options, now: { time.now })
        let error = #expect(throws: CourierError.self) { try verifier.verify(signedRequest(), body: Data(#"{"a":1}"#.utf8)) }
        #expect(error?.code == .signatureInvalid)
    }
}
#endif
