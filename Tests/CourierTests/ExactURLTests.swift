import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The request line keeps the percent-encoding the endpoint was given: no decode/re-encode round trip.
@Suite struct ExactURLTests {
    /// Sends `path` (plus `query`) through a client and returns the path the transport was handed.
    private func sentPath(_ path: String, query: [QueryItem] = []) async throws -> String? {
        let transport = InMemoryTransport.successful()
        var endpoint = Endpoint(name: "files", module: APIModule(name: "files", service: service), path: path)
        endpoint.query = query
        _ = try await CourierClient(transport: transport).send(endpoint)
        return transport.requests.first?.head.path
    }

    @Test(arguments: [
        ("/files/a%2Fb", "/files/a%2Fb"),
        ("/files/a%20b", "/files/a%20b"),
        ("/files/a+b", "/files/a+b"),
        ("/files/%E4%BD%A0%E5%A5%BD", "/files/%E4%BD%A0%E5%A5%BD"),
        ("/files/dir/", "/files/dir/"),
        ("/search?q=a%2Fb&x=1+2", "/search?q=a%2Fb&x=1+2"),
        ("", "/"),
    ])
    func pathAndQueryKeepTheirEncoding(given: String, sent: String) async throws {
        #expect(try await sentPath(given) == sent)
    }

    /// `ResponseMetadata.url` is the URL the request line spells: the endpoint's own URL when the texts agree, and
    /// without the fragment (never sent) when it has one. The client works it out once per URL it keeps.
    @Test(arguments: [
        ("/files/a%2Fb", "https://api.test/files/a%2Fb"),
        ("/files/a?x=1#part", "https://api.test/files/a?x=1"),
        ("", "https://api.test/"),
    ])
    func theReplyNamesTheURLTheRequestWentTo(path: String, url: String) async throws {
        let module = APIModule(
            name: "files", service: APIService(name: "files", baseURL: URL(string: "https://api.test")!))
        let client = CourierClient(transport: InMemoryTransport.successful())
        for _ in 0..<2 {  // the second call reads the kept URL
            let reply = try await client.send(Endpoint(name: "files", module: module, path: path))
            #expect(reply.metadata.url?.absoluteString == url)
        }
    }

    @Test func queryItemsAreEncodedOnceAndAppendedToAnExistingQuery() async throws {
        let sent = try await sentPath("/search?kind=a%2Fb", query: [QueryItem("q", "a/b c"), QueryItem("flag", nil)])
        #expect(sent == "/search?kind=a%2Fb&q=a%2Fb%20c&flag")
    }

    @Test func anAbsoluteEndpointPathKeepsItsEncodingAndAuthority() async throws {
        let transport = InMemoryTransport.successful()
        let endpoint = Endpoint(
            name: "abs", module: APIModule(name: "files", service: service), path: "http://127.0.0.1:8080/a%2Fb?x=%26")
        _ = try await CourierClient(transport: transport).send(endpoint)
        let head = try #require(transport.requests.first?.head)
        #expect(head.path == "/a%2Fb?x=%26")
        #expect(head.authority == "127.0.0.1:8080")
    }

    @Test(arguments: ["http://127.0.0.1:99999/x", "http://127.0.0.1:65536/x"])
    func aPortOutsideItsRangeIsAnInvalidURL(path: String) async throws {
        let transport = InMemoryTransport.successful()
        let endpoint = Endpoint(name: "bad", module: APIModule(name: "files", service: service), path: path)
        let error = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: transport).send(endpoint)
        }
        #expect(error.code == .invalidURL)
        #expect(transport.requests.isEmpty)
    }
}
