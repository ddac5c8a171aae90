#if Security
import Crypto
import Foundation
import HTTPTypes
@testable import CourierSecurity

func bytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var iterator = hex.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        out.append(UInt8(String([high, low]), radix: 16)!)
    }
    return out
}

func hex<D: Sequence>(_ data: D) -> String where D.Element == UInt8 {
    data.map { String(format: "%02x", $0) }.joined()
}

let testService = APIService(name: "api", baseURL: URL(string: "http://api.example.test")!)

func makeModule(_ interceptors: [any Interceptor] = [], rule: BusinessRule? = nil) -> APIModule {
    APIModule(name: "secure", service: testService, interceptors: interceptors, businessRule: rule)
}

func makeEndpoint(
    _ module: APIModule, method: HTTPRequest.Method = .post, path: String = "/v1/users",
    query: [QueryItem] = [], body: Value? = nil
) -> Endpoint {
    Endpoint(name: "call", module: module, method: method, path: path, query: query, body: body)
}

func jsonResponse(_ status: HTTPResponse.Status = .ok, _ text: String) -> (HTTPResponse, Data) {
    (HTTPResponse(status: status, headerFields: [.contentType: "application/json"]), Data(text.utf8))
}

/// A server played inside an InMemoryTransport handler with the public server-side API: verifies the
/// signature, opens an encrypted body, answers with `answer`, encrypts and signs the answer.
struct PlayedServer: Sendable {
    var verifier: SignatureVerifier?
    var sealer: EnvelopeSealer?
    var signsResponses = true

    /// Returns the response, or a 401/400 JSON error naming the failed code.
    func handle(
        _ head: HTTPRequest, _ body: Data?,
        answer: @Sendable (HTTPRequest, Value?) throws -> (HTTPResponse.Status, Value)
    ) throws -> (HTTPResponse, Data) {
        var verified: VerifiedRequest?
        if let verifier {
            do {
                verified = try verifier.verify(head, body: body)
            } catch let error as CourierError {
                return jsonResponse(.unauthorized, #"{"code":\#(error.code.number),"message":"\#(error.code.name)"}"#)
            }
        }
        var fields = head.headerFields
        var plaintext = body ?? Data()
        if let sealer, let opened = try sealer.open(plaintext, headerFields: &fields) {
            plaintext = opened
        }
        var value: Value?
        if !plaintext.isEmpty {
            value = try JSONCodec().decode(plaintext, hints: CodingHints())
        }
        var request = head
        request.headerFields = fields
        let (status, reply) = try answer(request, value)
        var responseFields: HTTPFields = [.contentType: "application/json"]
        var responseBody = try JSONCodec().encode(reply, hints: CodingHints())
        if let sealer, head.headerFields[.init("X-Courier-Encryption")!] != nil {
            responseBody = try sealer.seal(responseBody, headerFields: &responseFields)
        }
        if signsResponses, let verifier, let verified,
           let signature = verifier.responseSignature(status: Int(status.code), body: responseBody, for: verified) {
            responseFields[.init("X-Courier-Signature")!] = signature
        }
        return (HTTPResponse(status: status, headerFields: responseFields), responseBody)
    }
}

/// A clock the tests move by hand.
final class ManualTime: Sendable {
    private let seconds: Locked<TimeInterval>
    init(_ start: TimeInterval = 1_767_225_600) { seconds = Locked(start) }
    var now: Date { Date(timeIntervalSince1970: seconds.withLock { $0 }) }
    func advance(by delta: TimeInterval) { seconds.withLock { $0 += delta } }
}


/// A counter shared with @Sendable closures.
final class Counter: Sendable {
    private let value = Locked(0)
    @discardableResult func increment() -> Int { value.withLock { $0 += 1; return $0 } }
    var count: Int { value.withLock { $0 } }
}

/// BearerAuth options for test servers that answer an expired token with a bare 401 (no challenge).
func bareUnauthorizedExpires() -> BearerAuth.Options {
    var options = BearerAuth.Options()
    options.expiry = .status([401])
    return options
}
#endif
