import Courier
import Foundation
import Testing

/// The request line a real server receives keeps the percent-encoding the endpoint was given — `%2F`,
/// `%20`, `+`, encoded non-ASCII — on every transport, through the whole chain (no decode/re-encode).
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExactRequestLineTests {
    /// What the loopback server saw for `path` (plus `query`) sent through a client on `kind`.
    private func requestLine(
        _ path: String, query: [QueryItem] = [], on kind: TransportUnderTest
    ) async throws -> String {
        try await HostileServer.with { server in
            try await kind.run { transport in
                let service = APIService(name: "echo", baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
                var endpoint = Endpoint(name: "echo", module: APIModule(name: "echo", service: service), path: path)
                endpoint.query = query
                let reply = try await CourierClient(transport: transport).send(endpoint)
                return String(decoding: reply.metadata.body, as: UTF8.self)
            }
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func pathAndQueryArriveAsGiven(_ kind: TransportUnderTest) async throws {
        let line = try await requestLine(
            "/echo-line/a%2Fb%20c+d/%E4%BD%A0?kind=x%26y", query: [QueryItem("q", "a/b c+d"), QueryItem("名", "值")], on: kind)
        #expect(line == "GET /echo-line/a%2Fb%20c+d/%E4%BD%A0?kind=x%26y&q=a%2Fb%20c%2Bd&%E5%90%8D=%E5%80%BC HTTP/1.1")
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aTrailingSlashAndAnEmptySegmentSurvive(_ kind: TransportUnderTest) async throws {
        #expect(try await requestLine("/echo-line//dir/", on: kind) == "GET /echo-line//dir/ HTTP/1.1")
    }
}
