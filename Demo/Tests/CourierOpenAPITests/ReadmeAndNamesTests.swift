import Courier
import CourierDemoServer
import CourierOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// Courier's names and swift-openapi's import together: `CourierClient`, `APIService`, `FoundationTransport`
/// and the generated `Client` are all unambiguous in one file importing `Courier`, `CourierOpenAPI` and
/// `OpenAPIRuntime` (this file compiles), and the generated client runs over the bridge on them.
@Suite struct NameClashTests {
    @Test func courierAndOpenAPINamesImportTogether() async throws {
        let server = try await DemoServer.start()
        do {
            let service = APIService(name: "names", baseURL: server.baseURL)
            let courier = CourierClient(transport: FoundationTransport())
            let transport: any ClientTransport = CourierOpenAPITransport(
                client: courier, module: APIModule(name: "names", service: service))
            let client = Client(serverURL: server.baseURL, transport: transport)
            let user = try await client.getUser(path: .init(id: 1)).ok.body.json.data
            #expect(user?.id == 1)
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }
}

/// The README's "OpenAPI clients" snippet, compiled and run against the demo server; the snippet's text must
/// be the README's, character for character.
@Suite struct ReadmeOpenAPISnippetTests {
    @Test func theReadmeSnippetRuns() async throws {
        let server = try await DemoServer.start()
        do {
            let api = APIService(name: "demo", baseURL: server.baseURL)
            // README: begin
            var demo = APIModule(name: "demo", service: api)
            demo.interceptors = [SetHeaders([.userAgent: "MyApp/2.1"])]
            var configuration = CourierOpenAPITransport.Configuration()
            configuration.configureEndpoint = { endpoint in endpoint.timeout = .seconds(10) }
            let transport = CourierOpenAPITransport(client: CourierClient(), module: demo, configuration: configuration)
            // The service picks scheme and host (environments, failover); the server URL adds only its path.
            let client = Client(serverURL: try Servers.Server1.url(), transport: transport)

            let output = try await client.getStatus(path: .init(code: 404))
            switch output {
            case .notFound(let answer): print("not found:", try answer.body.json.message)  // a documented status
            case .ok, .serviceUnavailable, .undocumented: print("something else")
            }
            do {
                _ = try await client.getUser(path: .init(id: 7))
            } catch let error as ClientError {
                if let courier = error.underlyingError as? CourierError { print(courier.code, courier.message) }
            }
            // README: end
            if case .notFound = output {} else { Issue.record("expected .notFound, got \(output)") }
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test func theReadmeShowsThisSnippet() throws {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let begin = try #require(lines.firstIndex { $0.hasSuffix("// README: begin") })
        let end = try #require(lines.firstIndex { $0.hasSuffix("// README: end") })
        let indent = lines[begin].prefix { $0 == " " }.count
        let snippet = lines[(begin + 1)..<end].map { $0.dropFirst(min(indent, $0.prefix { $0 == " " }.count)) }
            .joined(separator: "\n")
        // Demo/Tests/CourierOpenAPITests/<this file> → the repository root's README.
        let readmeURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md")
        let readme = try String(contentsOf: readmeURL, encoding: .utf8)
        #expect(readme.contains("## OpenAPI clients"))
        #expect(readme.contains(snippet), "README.md's OpenAPI snippet differs from this test's")
    }
}
