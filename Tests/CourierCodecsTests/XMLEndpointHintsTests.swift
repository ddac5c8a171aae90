import CourierCodecs
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// An XML request body is shaped per endpoint: its root element's name and its arrays' layout.
@Suite struct XMLEndpointHintsTests {
    static let service = APIService(name: "api", baseURL: URL(string: "https://api.test")!)

    /// A client with the XML codec (repeated arrays, the codec's default) that records request bodies.
    static func client(codec: XMLCodec = XMLCodec()) -> (CourierClient, InMemoryTransport) {
        let transport = InMemoryTransport { _, _ in
            (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data("{}".utf8))
        }
        var codecs = CodecSet.standard
        codecs.register(codec)
        return (CourierClient(transport: transport, configuration: .init(codecs: codecs)), transport)
    }

    static func body(_ transport: InMemoryTransport) throws -> String {
        String(decoding: try #require(transport.requests.last?.body), as: UTF8.self)
    }

    static let user: Value = ["name": "Ada", "tags": ["admin", "ops"]]

    @Test func eachEndpointNamesItsRootAndLaysOutItsArrays() async throws {
        let (client, transport) = Self.client()
        let module = APIModule(name: "users", service: Self.service)
        var create = Endpoint(name: "createUser", module: module, method: .post, path: "/users", body: Self.user)
        create.requestFormat = .xml
        create.requestHints.rootName = "user"
        create.requestHints.xmlArrayLayout = .wrapped(.dropTrailingS)
        _ = try await client.send(create)
        #expect(try Self.body(transport).hasSuffix("<user><name>Ada</name><tags><tag>admin</tag><tag>ops</tag></tags></user>"))

        // Another endpoint of the same client keeps the codec's defaults…
        var legacy = Endpoint(name: "legacy", module: module, method: .post, path: "/legacy", body: Self.user)
        legacy.requestFormat = .xml
        _ = try await client.send(legacy)
        #expect(try Self.body(transport).hasSuffix("<response><name>Ada</name><tags>admin</tags><tags>ops</tags></response>"))

        // …or picks its own item name.
        var items = legacy
        items.requestHints.rootName = "batch"
        items.requestHints.xmlArrayLayout = .wrapped("item")
        _ = try await client.send(items)
        #expect(try Self.body(transport).hasSuffix("<batch><name>Ada</name><tags><item>admin</item><item>ops</item></tags></batch>"))
    }

    @Test func anEndpointCanGoBackToRepeatedElementsOnAWrappingClient() async throws {
        var options = XMLCodec.Options()
        options.arrayItemName = .dropTrailingS
        let (client, transport) = Self.client(codec: XMLCodec(options: options))
        var endpoint = Endpoint(name: "flat", module: APIModule(name: "m", service: Self.service), method: .put,
                                path: "/flat", body: Self.user)
        endpoint.requestFormat = .xml
        _ = try await client.send(endpoint)
        #expect(try Self.body(transport).contains("<tags><tag>admin</tag><tag>ops</tag></tags>"))
        endpoint.requestHints.xmlArrayLayout = .repeated
        _ = try await client.send(endpoint)
        #expect(try Self.body(transport).contains("<tags>admin</tags><tags>ops</tags>"))
    }

    /// A root name that is not an XML name is refused before anything is sent.
    @Test func anInvalidRootNameFailsAsAnEncodingError() async throws {
        let (client, transport) = Self.client()
        var endpoint = Endpoint(name: "bad", module: APIModule(name: "m", service: Self.service), method: .post,
                                path: "/bad", body: Self.user)
        endpoint.requestFormat = .xml
        endpoint.requestHints.rootName = "1<bad"
        let error = try await #require(throws: CourierError.self) { try await client.send(endpoint) }
        #expect(error.category == .encoding)
        #expect(transport.requests.isEmpty)
    }

    /// The hints reach the codec itself too, outside a client.
    @Test func theCodecReadsTheLayoutHint() throws {
        var hints = CodingHints()
        hints.rootName = "r"
        #expect(hints.xmlArrayLayout == nil)
        hints.xmlArrayLayout = .wrapped(.named("v"))
        let xml = String(decoding: try XMLCodec().encode(["xs": [1, 2]], hints: hints), as: UTF8.self)
        #expect(xml.hasSuffix("<r><xs><v>1</v><v>2</v></xs></r>"))
        var back = hints
        back.shape = .object(["xs": .array(.integer)])
        #expect(try XMLCodec().decode(Data(xml.utf8), hints: back) == ["xs": [1, 2]])
    }
}
