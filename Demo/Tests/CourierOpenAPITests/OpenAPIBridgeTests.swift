import Courier
import CourierDemoServer
import CourierOpenAPI
import CourierSecurity
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// Starts the demo server, hands `body` a client generated from `openapi.yaml` that sends through a
/// ``CourierOpenAPITransport`` over a module of the server's service (shaped by `configure`), and stops the
/// server when `body` ends, on success or failure. The pipelines used here start no background work.
func withGeneratedClient<T>(
    configure: (inout APIModule) -> Void = { _ in },
    _ body: (Client, DemoServer) async throws -> T
) async throws -> T {
    let server = try await DemoServer.start()
    do {
        var module = APIModule(name: "demo", service: APIService(name: "demo", baseURL: server.baseURL))
        configure(&module)
        let transport = CourierOpenAPITransport(client: CourierClient(), module: module)
        let result = try await body(Client(serverURL: server.baseURL, transport: transport), server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// A generated client over the bridge against the demo server, over loopback.
@Suite(.serialized) struct OpenAPIBridgeLoopbackTests {
    @Test func typedResponsesDecode() async throws {
        try await withGeneratedClient { client, server in
            let output = try await client.getUser(path: .init(id: 3))
            let envelope = try output.ok.body.json
            #expect(envelope.code == 200)
            let user = try #require(envelope.data)
            #expect(user.id == 3)
            #expect(!user.name.isEmpty)
            #expect(user.tags.count <= 6)
            #expect(!user.address.city.isEmpty)
            // A business failure (HTTP 200, code 301) is the document's 200 with no `data`.
            let missing = try await client.getUser(path: .init(id: 404_404)).ok.body.json
            #expect(missing.code == 301)
            #expect(missing.data == nil)
            #expect(server.state.requestCount == 2)
        }
    }

    @Test func pathParametersAndJSONBodiesArrive() async throws {
        try await withGeneratedClient { client, _ in
            let new = Components.Schemas.NewUser(
                name: "Zoë Bridge \(UUID().uuidString.prefix(8))", email: "zoe@example.com", age: 41,
                tags: ["openapi", "café"])
            let created = try await client.createUser(body: .json(new))
            let user = try #require(try created.created.body.json.data)
            #expect(user.name == new.name)
            #expect(user.email == "zoe@example.com")
            #expect(user.age == 41)
            #expect(user.tags == ["openapi", "café"])
            // The new id goes back out as a path parameter and finds the same user.
            let fetched = try #require(try await client.getUser(path: .init(id: user.id)).ok.body.json.data)
            #expect(fetched.id == user.id)
            #expect(fetched.name == new.name)
            // The document's 200 for a business failure: the name is taken now.
            let again = try await client.createUser(body: .json(new))
            #expect(try again.ok.body.json.code == 302)
        }
    }

    @Test func theModulesInterceptorsShapeGeneratedRequests() async throws {
        try await withGeneratedClient(configure: { module in
            module.interceptors = [
                SetHeaders([HTTPField.Name("X-Client-Kind")!: "generated"]),
                CommonParameters(placement: .query, [.constant("app_version", "1.4.2"), .constant("platform", "linux")]),
            ]
        }) { client, _ in
            let echo = try await client.echo(query: .init(tag: "a b&c")).ok.body.json.data
            #expect(echo.method == "GET")
            #expect(echo.path == "/echo")
            #expect(echo.query.additionalProperties["tag"] == "a b&c")
            #expect(echo.query.additionalProperties["app_version"] == "1.4.2")
            #expect(echo.query.additionalProperties["platform"] == "linux")
            let headers = Dictionary(
                echo.headers.additionalProperties.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
            #expect(headers["x-client-kind"] == "generated")
            #expect(headers["accept"] == "application/json")   // the generated client's own field stays
        }
    }

    @Test func aSignedModuleSignsGeneratedQueries() async throws {
        var options = ParameterSigning.Options()
        options.timestampField = "timestamp"
        options.nonceField = "nonce"
        try await withGeneratedClient(configure: { module in
            module.interceptors = [
                CommonParameters(placement: .query, [.constant("app_version", "1.4.2")]),
                ParameterSigning(signer: DemoSecurity.parameterSigner, options: options),
            ]
        }) { client, _ in
            let pairs = try await client.signedEcho(query: .init(q: "名前 a+b&c")).ok.body.json.data.pairs
            #expect(pairs.first { $0.name == "q" }?.value == "名前 a+b&c")
            #expect(pairs.first { $0.name == "app_version" }?.value == "1.4.2")
            #expect(Set(pairs.map(\.name)).isSuperset(of: ["timestamp", "nonce", "sign"]))
        }
        // Without the signing stage the server refuses: the document's 401 comes back as its case.
        try await withGeneratedClient { client, _ in
            let refused = try await client.signedEcho(query: .init(q: "x"))
            let body = try refused.unauthorized.body.json
            #expect(body.code == CourierError.Code.signatureMissing.number)
        }
    }

    @Test func documentedErrorStatusesAreTheirCases() async throws {
        try await withGeneratedClient { client, _ in
            let notFound = try await client.getStatus(path: .init(code: 404))
            guard case .notFound(let answer) = notFound else {
                Issue.record("expected .notFound, got \(notFound)")
                return
            }
            #expect(try answer.body.json.code == 404)
            #expect(try answer.body.json.message == "status 404")   // the demo server's text for a bare status

            let unavailable = try await client.getStatus(path: .init(code: 503)).serviceUnavailable
            #expect(unavailable.headers.retryAfter == 1)
            #expect(try unavailable.body.json.code == 503)

            let teapot = try await client.getStatus(path: .init(code: 418))
            guard case .undocumented(let status, let payload) = teapot else {
                Issue.record("expected .undocumented, got \(teapot)")
                return
            }
            #expect(status == 418)
            let bytes = try await Data(collecting: try #require(payload.body), upTo: 1 << 16)
            #expect(String(decoding: bytes, as: UTF8.self).contains("418"))

            #expect(try await client.getStatus(path: .init(code: 200)).ok.body.json.code == 200)
        }
    }

    @Test func aTransportFailureIsAClientErrorAroundACourierError() async throws {
        let server = try await DemoServer.start()
        let url = server.baseURL
        await server.stop()
        let module = APIModule(name: "gone", service: APIService(name: "gone", baseURL: url))
        let client = Client(serverURL: url, transport: CourierOpenAPITransport(client: CourierClient(), module: module))
        let error = try await #require(throws: ClientError.self) { try await client.getUser(path: .init(id: 1)) }
        #expect(error.operationID == "getUser")
        #expect(error.response == nil)
        let courier = try #require(error.underlyingError as? CourierError)
        #expect(courier.code == .cannotConnect)
        #expect(courier.category == .transport)
        #expect(courier.context.module == "gone")
        #expect(courier.context.endpoint == "getUser")
    }
}
