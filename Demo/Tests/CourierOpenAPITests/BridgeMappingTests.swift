import Courier
import CourierOpenAPI
import CourierTesting
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The bridge's mapping between swift-openapi's request/response and Courier's, over an in-memory transport:
/// where requests go, which bodies are buffered or streamed, what comes back.
@Suite struct BridgeMappingTests {
    static let service = APIService(name: "api", baseURL: URL(string: "http://service.test:8080")!)

    static func echoing(status: HTTPResponse.Status = .ok) -> InMemoryTransport {
        InMemoryTransport { request, body in
            var fields: HTTPFields = [.contentType: "application/octet-stream"]
            fields[HTTPField.Name("X-Seen-Path")!] = request.path ?? ""
            return (HTTPResponse(status: status, headerFields: fields), body ?? Data())
        }
    }

    static func bridge(
        _ transport: InMemoryTransport, _ configure: (inout CourierOpenAPITransport.Configuration) -> Void = { _ in }
    ) -> CourierOpenAPITransport {
        var configuration = CourierOpenAPITransport.Configuration()
        configure(&configuration)
        return CourierOpenAPITransport(
            client: CourierClient(transport: transport), module: APIModule(name: "api", service: service),
            configuration: configuration)
    }

    @Test func theServiceChoosesTheHostAndTheServerURLAddsItsPath() async throws {
        let transport = Self.echoing()
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/users/a%2Fb?q=x%20y&n=1")
        let (response, _) = try await Self.bridge(transport).send(
            request, body: nil, baseURL: URL(string: "https://elsewhere.test/v1/")!, operationID: "getUser")
        #expect(response.status == .ok)
        let sent = try #require(transport.requests.first?.head)
        #expect(sent.scheme == "http")
        #expect(sent.authority == "service.test:8080")
        #expect(sent.path == "/v1/users/a%2Fb?q=x%20y&n=1")   // percent-encoding kept as generated
    }

    @Test func serverURLRoutingSendsWhereTheGeneratedClientSays() async throws {
        let transport = Self.echoing()
        let bridge = Self.bridge(transport) { $0.routing = .serverURL }
        let request = HTTPRequest(method: .delete, scheme: nil, authority: nil, path: "/items/7")
        _ = try await bridge.send(request, body: nil, baseURL: URL(string: "https://elsewhere.test:9443/v1")!,
                                  operationID: "deleteItem")
        let sent = try #require(transport.requests.first?.head)
        #expect(sent.method == .delete)
        #expect(sent.scheme == "https")
        #expect(sent.authority == "elsewhere.test:9443")
        #expect(sent.path == "/v1/items/7")
        let relative = await #expect(throws: CourierError.self) {
            try await bridge.send(request, body: nil, baseURL: URL(string: "/v1")!, operationID: "deleteItem")
        }
        #expect(relative?.code == .invalidURL)
    }

    @Test func everyStatusIsAResponseWithItsFieldsAndBody() async throws {
        for status in [HTTPResponse.Status.notFound, .internalServerError, .created] {
            let transport = Self.echoing(status: status)
            let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/things",
                                      headerFields: [.contentType: "application/json"])
            let (response, body) = try await Self.bridge(transport).send(
                request, body: HTTPBody(#"{"a":1}"#), baseURL: URL(string: "/")!, operationID: "make")
            #expect(response.status == status)
            #expect(response.headerFields[HTTPField.Name("X-Seen-Path")!] == "/things")
            let bytes = try await Data(collecting: try #require(body), upTo: 1024)
            #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":1}"#)
        }
    }

    @Test func aHeadResponseHasNoBody() async throws {
        let transport = Self.echoing()
        let request = HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/ping")
        let (response, body) = try await Self.bridge(transport).send(
            request, body: nil, baseURL: URL(string: "/")!, operationID: "ping")
        #expect(response.status == .ok)
        #expect(body == nil)
    }

    @Test func smallBodiesAreBufferedAndReplayableLargeOnesStream() async throws {
        let bridge = Self.bridge(Self.echoing()) { $0.maximumBufferedRequestBodySize = 8 }
        let request = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/blob",
                                  headerFields: [.contentType: "application/octet-stream"])
        let small = try await bridge.endpoint(
            for: request, body: HTTPBody([1, 2, 3]), baseURL: URL(string: "/")!, operationID: "put")
        #expect(small.rawBody == Data([1, 2, 3]))
        #expect(small.bodyStream == nil)
        #expect(small.isReplayable)
        #expect(small.requestFormat == .binary)

        let large = try await bridge.endpoint(
            for: request, body: HTTPBody(Array(repeating: 7, count: 9)), baseURL: URL(string: "/")!, operationID: "put")
        #expect(large.rawBody == nil)
        #expect(large.bodyStream?.length == 9)
        #expect(large.isReplayable == false)

        let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
        continuation.yield([1, 2])
        continuation.yield([3])
        continuation.finish()
        let unknown = try await bridge.endpoint(
            for: request, body: HTTPBody(stream, length: .unknown), baseURL: URL(string: "/")!, operationID: "put")
        #expect(unknown.bodyStream?.length == nil)
        #expect(unknown.isReplayable == false)
        let streamed = try #require(unknown.bodyStream)
        #expect(try await streamed.collect(upTo: 100) == Data([1, 2, 3]))
    }

    @Test func aStreamedBodyArrivesWhole() async throws {
        let transport = Self.echoing()
        let bridge = Self.bridge(transport) { $0.maximumBufferedRequestBodySize = 0 }
        let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
        for chunk in ["he", "llo", " world"] { continuation.yield(ArraySlice(chunk.utf8)) }
        continuation.finish()
        let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/upload",
                                  headerFields: [.contentType: "text/plain"])
        let (response, body) = try await bridge.send(
            request, body: HTTPBody(stream, length: .unknown), baseURL: URL(string: "/")!, operationID: "upload")
        #expect(response.status == .ok)
        #expect(transport.requests.first?.body == Data("hello world".utf8))
        #expect(try await Data(collecting: try #require(body), upTo: 100) == Data("hello world".utf8))
    }

    @Test func aBodyLongerThanItDeclaresFails() async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
        continuation.yield([1, 2, 3, 4])
        continuation.finish()
        let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/x")
        let error = await #expect(throws: CourierError.self) {
            try await Self.bridge(Self.echoing()).endpoint(
                for: request, body: HTTPBody(stream, length: .known(2)), baseURL: URL(string: "/")!, operationID: "x")
        }
        #expect(error?.code == .sizeLimitExceeded)
        #expect(error?.context.endpoint == "x")
    }

    @Test func configureEndpointAppliesPerOperation() async throws {
        let transport = InMemoryTransport { _, _ in
            try await Task.sleep(for: .seconds(600))     // only the 50 ms timeout can end it
            return (HTTPResponse(status: .ok), Data())
        }
        let bridge = Self.bridge(transport) { configuration in
            configuration.configureEndpoint = { endpoint in
                if endpoint.name == "slow" { endpoint.timeout = .milliseconds(50) }
                endpoint.tags.insert("openapi")
            }
        }
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/slow")
        let endpoint = try await bridge.endpoint(for: request, body: nil, baseURL: URL(string: "/")!, operationID: "slow")
        #expect(endpoint.timeout == .milliseconds(50))
        #expect(endpoint.tags == ["openapi"])
        let error = await #expect(throws: CourierError.self) {
            try await bridge.send(request, body: nil, baseURL: URL(string: "/")!, operationID: "slow")
        }
        #expect(error?.code == .timedOut)
    }
}
