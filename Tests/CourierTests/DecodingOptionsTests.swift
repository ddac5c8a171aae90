import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Typed calls decode with the client's decoder or the call's, and can decode a value inside an envelope.
@Suite struct DecodingOptionsTests {
    struct Account: Codable, Sendable, Equatable { var userId: Int; var createdAt: Date }
    struct User: Codable, Sendable, Equatable { var id: Int; var name: String }

    static let module = APIModule(name: "users", service: APIService(name: "api", baseURL: URL(string: "https://api.test")!))
    static let endpoint = Endpoint(name: "get", module: module, path: "/things")

    static func transport(_ json: String) -> InMemoryTransport {
        InMemoryTransport { _, _ in
            (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(json.utf8))
        }
    }

    @Test func theClientsDecoderAppliesToEveryTypedCall() async throws {
        var configuration = CourierClient.Configuration()
        configuration.decoder.keyStrategy = .convertFromSnakeCase
        configuration.decoder.dateStrategy = .secondsSince1970
        let client = CourierClient(transport: Self.transport(#"{"user_id":7,"created_at":1700000000}"#),
                                   configuration: configuration)
        let account = try await client.send(Self.endpoint, decoding: Account.self).value
        #expect(account == Account(userId: 7, createdAt: Date(timeIntervalSince1970: 1_700_000_000)))
        // The default decoder reads neither.
        let plain = CourierClient(transport: Self.transport(#"{"user_id":7,"created_at":1700000000}"#))
        let error = try await #require(throws: CourierError.self) { try await plain.send(Self.endpoint, decoding: Account.self) }
        #expect(error.code == .missingValue)
    }

    @Test func aCallsDecoderReplacesTheClients() async throws {
        var configuration = CourierClient.Configuration()
        configuration.decoder.dateStrategy = .iso8601
        let client = CourierClient(transport: Self.transport(#"{"userId":1,"createdAt":1700000000000}"#),
                                   configuration: configuration)
        var decoder = ValueDecoder()
        decoder.dateStrategy = .millisecondsSince1970
        let account = try await client.send(Self.endpoint, decoding: Account.self, options: .init(decoder: decoder)).value
        #expect(account.createdAt == Date(timeIntervalSince1970: 1_700_000_000))
        let error = try await #require(throws: CourierError.self) { try await client.send(Self.endpoint, decoding: Account.self) }
        #expect(error.code == .typeMismatch)
    }

    @Test func aModelDecodesAtAKeyPathWithoutAnEnvelope() async throws {
        let client = CourierClient(transport: Self.transport(
            #"{"code":0,"data":{"items":[{"id":1,"name":"Ada"},{"id":2,"name":"Grace"}],"total":2}}"#))
        let users = try await client.send(Self.endpoint, decoding: [User].self, at: "data.items")
        #expect(users.value == [User(id: 1, name: "Ada"), User(id: 2, name: "Grace")])
        #expect(users.metadata.status == .ok)
        let second = try await client.send(Self.endpoint, decoding: User.self, at: "data.items[1]").value
        #expect(second.name == "Grace")
        let total = try await client.send(Self.endpoint, decoding: Int.self, at: "data.total").value
        #expect(total == 2)
        // On a raw reply, piece by piece.
        let raw = try await client.send(Self.endpoint)
        #expect(try raw.decoding(User.self, at: "data.items.0").value.name == "Ada")
        #expect(try raw.value.decode(Int.self, at: "code") == 0)
    }

    @Test func aMissingPathSaysWhereItStopped() async throws {
        let client = CourierClient(transport: Self.transport(#"{"code":0,"data":{"users":[]}}"#))
        let error = try await #require(throws: CourierError.self) {
            try await client.send(Self.endpoint, decoding: [User].self, at: "data.items")
        }
        #expect(error.code == .missingValue)
        #expect(error.context.codingPath == ["data", "items"])
        #expect(error.message.contains("data.items"))
        #expect(error.message.contains("data is object with users"))
        // A mismatch inside the nested value names the whole path.
        let bad = CourierClient(transport: Self.transport(#"{"data":{"items":[{"id":"x","name":"Ada"}]}}"#))
        let inner = try await #require(throws: CourierError.self) {
            try await bad.send(Self.endpoint, decoding: [User].self, at: "data.items")
        }
        #expect(inner.code == .typeMismatch)
        #expect(PathComponent.render(inner.context.codingPath) == "data.items[0].id")
    }

    /// Identical calls share one exchange only when they also decode alike: another key path or decoder is
    /// another call.
    @Test func sharedCallsDecodeEachTheirOwnWay() async throws {
        let sent = Locked(0)
        let transport = InMemoryTransport { _, _ in
            sent.withLock { $0 += 1 }
            try await Task.sleep(for: .seconds(2))     // the identical calls are all dispatched by then
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    Data(#"{"a":{"id":1,"name":"A"},"b":{"id":2,"name":"B"}}"#.utf8))
        }
        let client = CourierClient(transport: transport)
        var endpoint = Self.endpoint
        endpoint.duplicatePolicy = .share
        let a = client.dispatch(endpoint, decoding: User.self, at: "a")
        let b = client.dispatch(endpoint, decoding: User.self, at: "b")
        let alsoA = client.dispatch(endpoint, decoding: User.self, at: "a")
        let (first, second, third) = try await (a.reply.value, b.reply.value, alsoA.reply.value)
        #expect(first.name == "A" && second.name == "B" && third.name == "A")
        #expect(sent.withLock { $0 } == 2)           // "a" twice shared one exchange; "b" had its own
    }

    /// A shared exchange's failure reaches every call that waits for it, and the next identical call has its own.
    @Test(.timeLimit(.minutes(1))) func aSharedExchangesFailureReachesEveryIdenticalCall() async throws {
        let sent = Locked(0)
        let transport = InMemoryTransport { _, _ in
            sent.withLock { $0 += 1 }
            try await Task.sleep(for: .seconds(2))     // the identical calls are all dispatched by then
            return (HTTPResponse(status: .serviceUnavailable), Data())
        }
        let client = CourierClient(transport: transport)
        var endpoint = Self.endpoint
        endpoint.duplicatePolicy = .share
        func code(_ call: Call<Value>) async -> CourierError.Code? {
            do {
                _ = try await call.reply
                return nil
            } catch {
                return (error as? CourierError)?.code
            }
        }
        let calls = (0..<3).map { _ in client.dispatch(endpoint) }
        var codes: [CourierError.Code?] = []
        for call in calls { codes.append(await code(call)) }
        #expect(codes == Array(repeating: .http(status: 503), count: 3))
        #expect(sent.withLock { $0 } == 1)
        // The failed exchange is shared no longer: the next identical call sends again.
        #expect(await code(client.dispatch(endpoint)) == .http(status: 503))
        #expect(sent.withLock { $0 } == 2)
    }

    @Test func pathsParseAsTheyRender() {
        #expect(PathComponent.parse("data.items[0].name") == ["data", "items", 0, "name"])
        #expect(PathComponent.parse("data.items.0.name") == ["data", "items", 0, "name"])
        #expect(PathComponent.parse("grid[1][2]") == ["grid", 1, 2])
        #expect(PathComponent.parse("") == [])
        #expect(PathComponent.parse("a..b") == ["a", "b"])
        #expect(PathComponent.parse("odd[x]") == ["odd[x]"])
        #expect(PathComponent.parse("-1") == ["-1"])
        for path: [PathComponent] in [["a", 3, "b"], ["x"], ["list", 0, 1]] {
            #expect(PathComponent.parse(PathComponent.render(path)) == path)
        }
        // A member named by digits is found through an index step.
        let value: Value = ["byYear": ["2024": 5]]
        #expect(value[lenientPath: PathComponent.parse("byYear.2024")] == 5)
    }

    /// A path of many index groups reads in one pass (each group used to be inserted at the front), and a
    /// missing path that long is reported after one walk (each prefix used to be looked up from the root).
    @Test func longPathsParseAndFailInLinearTime() throws {
        let groups = 200_000
        let path = PathComponent.parse("a" + (0..<groups).map { "[\($0 % 7)]" }.joined())
        #expect(path.count == groups + 1)
        #expect(path.first == "a")
        #expect(Array(path.dropFirst().prefix(8)) == [0, 1, 2, 3, 4, 5, 6, 0])
        #expect(path.last == .index((groups - 1) % 7))
        let body: Value = ["a": [[[1]]]]
        let error = #expect(throws: CourierError.self) { try ValueDecoder().decode(Int.self, from: body, at: path) }
        #expect(error?.code == .missingValue)
        #expect(error?.detail?.contains(": a[0] is array") == true, "\(error?.detail ?? "")")
        #expect(error?.context.codingPath.count == groups + 1)
    }
}
