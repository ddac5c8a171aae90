import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The doc-comment and README examples that name the user's endpoints (`.user(7, in: users)`), the client's
/// initializers and the reading helpers, compiled and run against an in-memory server so they stay true.
@Suite struct DocExampleTests {
    struct User: Codable, Sendable, Equatable { var id: Int64; var name: String; var email: String }
    struct Envelope<T: Codable & Sendable>: Codable, Sendable { var code: Int; var message: String; var data: T }

    static let transport = InMemoryTransport { request, _ in
        let json: String
        switch request.path {
        case "/users/7": json = #"{"code":0,"message":"ok","data":{"id":7,"name":"Ada","email":"ada@example.com"}}"#
        case "/users": json = #"{"code":0,"message":"ok","data":{"items":[{"id":1,"name":"Ada","email":"a@x.io"}]}}"#
        default:
            return (HTTPResponse(status: .internalServerError, headerFields: [.contentType: "application/json"]),
                    Data(#"{"error":"db down"}"#.utf8))
        }
        return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(json.utf8))
    }

    static let users = APIModule(name: "user", service: APIService(name: "api", baseURL: URL(string: "http://127.0.0.1:8080")!))

    /// `CourierClient`'s, `Pipeline`'s, `CallID`'s and `CallOptions`' examples.
    @Test func theClientExamplesWork() async throws {
        let users = Self.users
        let client = CourierClient(transport: Self.transport, configuration: .init(interceptors: [RequestID()]))
        let reply = try await client.send(.user(7, in: users), decoding: Envelope<User>.self)
        print(reply.value.data.name, reply.metadata.status, reply.metadata.duration)
        #expect(reply.value.data.name == "Ada")
        let raw = try await client.send(.user(7, in: users))          // Reply<Value>
        #expect(raw.value["data"]?["name"] == "Ada")
        let call = client.dispatch(.user(8, in: users))               // start now, cancel later
        client.cancelAll(module: "user")
        _ = try? await call.reply
        let pipeline = client.pipeline(for: .user(7, in: users))
        #expect(pipeline.stageNames.first == "result")
        let timed = try await client.send(.user(7, in: users), options: .init(trace: true, timeout: .seconds(2)))
        #expect(timed.metadata.trace != nil)
    }

    /// `Endpoint`'s example: endpoints built by static functions, one with a protobuf body.
    @Test func theEndpointExampleBuilds() throws {
        struct NewUser: Encodable { var name: String }
        let endpoint = try Endpoint.createUser(NewUser(name: "Ada"), in: Self.users)
        #expect(endpoint.method == .post && endpoint.body == ["name": "Ada"])
        #expect(endpoint.requestFormat == .protobuf && endpoint.requestMessage == "demo.NewUser")
        #expect(Endpoint.user(7, in: Self.users).path == "/users/7")
    }

    /// `CodecSet`'s example: a client over a codec set, no modules needed up front.
    @Test func theCodecSetExampleWorks() {
        let codecs = CodecSet.standard
        let client = CourierClient(configuration: .init(codecs: codecs))
        #expect(client.configuration.codecs.formats.contains("json"))
    }

    /// The README's "What the server said" snippet.
    @Test func theReadmeReadingSnippetWorks() async throws {
        let users = Self.users
        var configuration = CourierClient.Configuration()
        configuration.decoder.keyStrategy = .convertFromSnakeCase
        let client = CourierClient(transport: Self.transport, configuration: configuration)
        let user = try await client.send(.user(7, in: users), decoding: User.self, at: "data").value
        #expect(user.name == "Ada")
        let list = try await client.send(.users(in: users), decoding: [User].self, at: "data.items").value
        #expect(list.map(\.name) == ["Ada"])
        let error = try await #require(throws: CourierError.self) {
            try await client.send(.user(8, in: users), decoding: User.self, at: "data")
        }
        #expect(error.response?.status.code == 500)
        #expect(error.response?.bodyText == #"{"error":"db down"}"#)
        #expect("\(error)".hasSuffix(#"body: {"error":"db down"}"#))
    }

    /// The README's and `ReplayTransport`'s cassette snippet, the live server replaced by the in-memory one.
    @Test func theReplaySnippetWorks() async throws {
        let users = Self.users
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("doc-\(UUID().uuidString).cassette.json")
        defer { try? FileManager.default.removeItem(at: file) }
        let recorder = ReplayTransport(.record(Self.transport))
        _ = try await CourierClient(transport: recorder).send(.user(7, in: users))
        try recorder.save(to: file)
        var options = ReplayTransport.Options()
        options.matching.ignoredQueryItems = ["timestamp", "nonce_str", "sign"]
        let replay = ReplayTransport(.replay, cassette: try Cassette.load(from: file), options: options)
        let user = try await CourierClient(transport: replay).send(.user(7, in: users), decoding: Envelope<User>.self).value
        #expect(user.data.email == "ada@example.com")
    }
}

extension Endpoint {
    /// The README's endpoint: one user of `module`.
    fileprivate static func user(_ id: Int64, in module: APIModule) -> Endpoint {
        Endpoint(name: "getUser", module: module, path: "/users/\(id)")
    }

    /// `Endpoint`'s doc example: a user created with a protobuf body.
    fileprivate static func createUser(_ user: some Encodable, in module: APIModule) throws -> Endpoint {
        var endpoint = Endpoint(name: "createUser", module: module, method: .post, path: "/users")
        endpoint.body = try Value(encoding: user)
        endpoint.requestFormat = .protobuf
        endpoint.requestMessage = "demo.NewUser"
        endpoint.responseMessage = "demo.UserResponse"
        return endpoint
    }

    /// A page of users of `module`.
    fileprivate static func users(in module: APIModule) -> Endpoint {
        Endpoint(name: "users", module: module, path: "/users")
    }
}
