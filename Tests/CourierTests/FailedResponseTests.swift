import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// A failed call keeps what the server answered: status, header fields and (bounded) body.
@Suite struct FailedResponseTests {
    static let module = APIModule(name: "orders", service: APIService(name: "api", baseURL: URL(string: "https://api.test")!))
    static let endpoint = Endpoint(name: "create", module: module, method: .post, path: "/orders")

    static func answering(_ status: HTTPResponse.Status, _ type: String?, _ body: Data) -> CourierClient {
        CourierClient(transport: InMemoryTransport { _, _ in
            var fields: HTTPFields = [HTTPField.Name("X-Trace")!: "abc123", .retryAfter: "30"]
            if let type { fields[.contentType] = type }
            return (HTTPResponse(status: status, headerFields: fields), body)
        })
    }

    @Test func aServerErrorKeepsStatusFieldsAndBody() async throws {
        let body = Data("Internal error: inventory service down\n\tat OrderController.create()".utf8)
        let client = Self.answering(.internalServerError, "text/plain; charset=utf-8", body)
        let error = try await #require(throws: CourierError.self) { try await client.send(Self.endpoint) }
        #expect(error.code == .http(status: 500))
        let response = try #require(error.response)
        #expect(response.status == .internalServerError)
        #expect(response.headerFields[HTTPField.Name("X-Trace")!] == "abc123")
        #expect(response.headerFields[.retryAfter] == "30")
        #expect(response.body == body)
        #expect(!response.isTruncated)
        #expect(response.bodyText == String(decoding: body, as: UTF8.self))
        // One line, white space runs folded: the description shows it after the context.
        #expect(response.excerpt == "Internal error: inventory service down at OrderController.create()")
        #expect(error.description.hasSuffix("body: Internal error: inventory service down at OrderController.create()"))
        // The localized message for people does not carry the raw body.
        #expect(!error.message.contains("inventory"))
    }

    @Test func theBodyIsBoundedAndTheExcerptShort() async throws {
        let huge = Data(#"{"error":""#.utf8) + Data(repeating: UInt8(ascii: "x"), count: 200_000) + Data(#""}"#.utf8)
        let error = try await #require(throws: CourierError.self) {
            try await Self.answering(.badGateway, "application/json", huge).send(Self.endpoint)
        }
        let response = try #require(error.response)
        #expect(response.body.count == ResponseSnapshot.bodyLimit)
        #expect(response.bodySize == huge.count)
        #expect(response.isTruncated)
        let excerpt = try #require(response.excerpt)
        #expect(excerpt.count == ResponseSnapshot.excerptLength + 1 && excerpt.hasSuffix("…"))
        #expect(error.description.count < 400)
    }

    @Test func binaryAndHostileBodiesShowNoRawBytes() async throws {
        let binary = Data([0x00, 0xFF, 0x1B, 0x5B, 0x32, 0x4A, 0x07])
        let error = try await #require(throws: CourierError.self) {
            try await Self.answering(.serviceUnavailable, "application/octet-stream", binary).send(Self.endpoint)
        }
        #expect(error.response?.body == binary)
        #expect(error.response?.excerpt == nil)
        #expect(!error.description.contains("body:"))
        // Terminal escapes, bells and bidi overrides in a text body are dropped from the excerpt.
        let sneaky = Data("oops\u{1B}[2J\u{07}\u{202E}evil\r\nnext".utf8)
        let other = try await #require(throws: CourierError.self) {
            try await Self.answering(.internalServerError, nil, sneaky).send(Self.endpoint)
        }
        #expect(other.response?.excerpt == "oops[2Jevil next")
    }

    @Test func aBodyThatDoesNotDecodeKeepsTheResponseToo() async throws {
        struct Order: Decodable, Sendable { var id: Int }
        let client = Self.answering(.ok, "application/json", Data(#"{"id":"not a number"}"#.utf8))
        let error = try await #require(throws: CourierError.self) {
            try await client.send(Self.endpoint, decoding: Order.self)
        }
        #expect(error.code == .typeMismatch)
        #expect(error.response?.status == .ok)
        #expect(error.response?.excerpt == #"{"id":"not a number"}"#)
    }

    @Test func aTransportFailureHasNoResponse() async throws {
        let client = CourierClient(transport: InMemoryTransport.failing(.timedOut))
        let error = try await #require(throws: CourierError.self) { try await client.send(Self.endpoint) }
        #expect(error.code == .timedOut)
        #expect(error.response == nil)
    }
}
