#if Security
import CourierCodecs
import CourierTesting
import Foundation
import HTTPTypes
import Testing
import CourierSecurity

@Suite struct CommonParametersTests {
    static let common: [CommonParameters.Parameter] = [
        .constant("app_version", "1.4.2"),
        .constant("platform", "ios"),
        .dynamic("user_id") { _ in 42 },
        .dynamic("session_id") { _ in .null },          // null: left out
    ]

    static func query(of head: HTTPRequest) -> [QueryItem] {
        let path = head.path ?? ""
        guard let index = path.firstIndex(of: "?") else { return [] }
        return QueryItem.decode(String(path[path.index(after: index)...]))
    }

    static func send(_ endpoint: Endpoint, codecs: CodecSet = .standard) async throws -> (HTTPRequest, Data?) {
        let transport = InMemoryTransport.successful()
        _ = try await CourierClient(transport: transport, configuration: .init(codecs: codecs)).send(endpoint)
        let request = try #require(transport.requests.first)
        return (request.head, request.body)
    }

    @Test(arguments: [CommonParameters.ConflictPolicy.keepEndpoint, .overwrite])
    func queryPlacement(_ policy: CommonParameters.ConflictPolicy) async throws {
        let module = makeModule([CommonParameters(placement: .query, policy: policy, Self.common)])
        let endpoint = makeEndpoint(module, method: .get, path: "/v1/users",
                                    query: [QueryItem("page", "2"), QueryItem("platform", "web")])
        let (head, _) = try await Self.send(endpoint)
        let expected: [QueryItem] = policy == .keepEndpoint
            ? [QueryItem("page", "2"), QueryItem("platform", "web"), QueryItem("app_version", "1.4.2"),
               QueryItem("user_id", "42")]
            : [QueryItem("page", "2"), QueryItem("app_version", "1.4.2"), QueryItem("platform", "ios"),
               QueryItem("user_id", "42")]
        #expect(Self.query(of: head) == expected)
    }

    @Test(arguments: [CommonParameters.ConflictPolicy.keepEndpoint, .overwrite])
    func bodyPlacementInJSON(_ policy: CommonParameters.ConflictPolicy) async throws {
        let module = makeModule([CommonParameters(placement: .body, policy: policy, Self.common)])
        let endpoint = makeEndpoint(module, body: ["name": "Ada", "platform": "web"])
        let (head, body) = try await Self.send(endpoint)
        let value = try JSONCodec().decode(try #require(body), hints: CodingHints())
        #expect(value["name"] == "Ada")
        #expect(value["platform"] == (policy == .overwrite ? "ios" : "web"))
        #expect(value["app_version"] == "1.4.2")
        #expect(value["user_id"] == 42)
        #expect(value["session_id"] == nil)
        #expect(Self.query(of: head).isEmpty)
    }

    @Test func bodyPlacementInFormBodies() async throws {
        let module = makeModule([CommonParameters(placement: .body, Self.common)])
        var endpoint = makeEndpoint(module, body: ["name": "Ada"])
        endpoint.requestFormat = .form
        let (head, body) = try await Self.send(endpoint)
        #expect(head.headerFields[.contentType] == "application/x-www-form-urlencoded")
        let items = QueryItem.decode(String(decoding: try #require(body), as: UTF8.self))
        #expect(Set(items) == [QueryItem("name", "Ada"), QueryItem("app_version", "1.4.2"),
                               QueryItem("platform", "ios"), QueryItem("user_id", "42")])
    }

    @Test func bodyPlacementInXMLBodies() async throws {
        let module = makeModule([CommonParameters(placement: .body, Self.common)])
        var endpoint = makeEndpoint(module, body: ["name": "Ada"])
        endpoint.requestFormat = .xml
        let (head, body) = try await Self.send(endpoint, codecs: CodecSet.standard.adding(XMLCodec()))
        #expect(head.headerFields[.contentType] == "application/xml")
        var hints = CodingHints()
        hints.shape = .object(["user_id": .integer])
        let value = try XMLCodec().decode(try #require(body), hints: hints)
        #expect(value == ["name": "Ada", "app_version": "1.4.2", "platform": "ios", "user_id": 42])
    }

    /// In a protobuf body the parameters are fields of the request message: they are encoded with it, and
    /// one the message does not declare is a readable encoding error naming it, not a silent loss.
    @Test func bodyPlacementInProtobufBodies() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let proto = folder.appendingPathComponent("signup.proto")
        try Data("""
            syntax = "proto3";
            package t;
            message Signup { string name = 1; string app_version = 2; string platform = 3; int64 user_id = 4; }
            """.utf8).write(to: proto)
        let codec = ProtobufCodec(schema: try ProtobufSchema(contentsOf: proto))
        var endpoint = makeEndpoint(makeModule([CommonParameters(placement: .body, Self.common)]), body: ["name": "Ada"])
        endpoint.requestFormat = .protobuf
        endpoint.requestMessage = "t.Signup"
        let (head, body) = try await Self.send(endpoint, codecs: CodecSet.standard.adding(codec))
        #expect(head.headerFields[.contentType] == "application/x-protobuf")
        var hints = CodingHints()
        hints.messageType = "t.Signup"
        // Decoded with proto3's JSON names (`app_version` is `appVersion`).
        let value = try codec.decode(try #require(body), hints: hints)
        #expect(value == ["name": "Ada", "appVersion": "1.4.2", "platform": "ios", "userId": 42])

        endpoint.module = makeModule([CommonParameters(placement: .body, [.constant("device_id", "D-1")])])
        let error = try await #require(throws: CourierError.self) {
            _ = try await Self.send(endpoint, codecs: CodecSet.standard.adding(codec))
        }
        #expect(error.category == .encoding)
        #expect("\(error)".contains("device_id"))
    }

    @Test func bodyPlacementOnGETEndsInTheQuery() async throws {
        let module = makeModule([CommonParameters(placement: .body, Self.common)])
        let (head, body) = try await Self.send(makeEndpoint(module, method: .get, path: "/v1/users"))
        #expect(body == nil)
        #expect(Set(Self.query(of: head)) == [QueryItem("app_version", "1.4.2"), QueryItem("platform", "ios"),
                                              QueryItem("user_id", "42")])
    }

    @Test func rawBodiesGetTheParametersInTheQuery() async throws {
        let module = makeModule([CommonParameters(placement: .body, Self.common)])
        var endpoint = makeEndpoint(module)
        endpoint.rawBody = Data("raw".utf8)
        let (head, body) = try await Self.send(endpoint)
        #expect(body == Data("raw".utf8))
        #expect(Self.query(of: head).map(\.name) == ["app_version", "platform", "user_id"])
    }

    @Test func headerPlacement() async throws {
        let module = makeModule([CommonParameters(placement: .headerFields, [
            .constant("X-App-Version", "1.4.2"), .constant("X-Platform", "ios"),
        ])])
        var endpoint = makeEndpoint(module)
        endpoint.headers[HTTPField.Name("X-Platform")!] = "web"
        let (head, _) = try await Self.send(endpoint)
        #expect(head.headerFields[HTTPField.Name("X-App-Version")!] == "1.4.2")
        #expect(head.headerFields[HTTPField.Name("X-Platform")!] == "web")

        let bad = makeModule([CommonParameters(placement: .headerFields, [.constant("bad name", "x")])])
        let error = await #expect(throws: CourierError.self) { try await Self.send(makeEndpoint(bad)) }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func valuesAreEvaluatedPerCall() async throws {
        let time = ManualTime()
        let module = makeModule([CommonParameters(placement: .query, [
            .timestamp("ts", now: { time.now }), .requestID("request_id"), .callID("call"),
        ])])
        let transport = InMemoryTransport.successful()
        let client = CourierClient(transport: transport)
        _ = try await client.send(makeEndpoint(module, method: .get))
        time.advance(by: 5)
        _ = try await client.send(makeEndpoint(module, method: .get))
        let first = Self.query(of: transport.requests[0].head)
        let second = Self.query(of: transport.requests[1].head)
        #expect(first.first { $0.name == "ts" }?.value == "1767225600")
        #expect(second.first { $0.name == "ts" }?.value == "1767225605")
        #expect(first.first { $0.name == "request_id" }?.value != second.first { $0.name == "request_id" }?.value)
        #expect(first.first { $0.name == "call" }?.value?.hasPrefix("#") == true)
    }

    /// A clock that gives an absurd date (an injected `now`) makes an absurd timestamp, never a trap: the
    /// common timestamp parameter, parameter signing and request signing clamp to `Int64`'s ends, NaN to 0.
    @Test func absurdClocksMakeClampedTimestamps() async throws {
        let cases: [(Date, String)] = [
            (Date(timeIntervalSince1970: 1e19), String(Int64.max)), (Date(timeIntervalSince1970: -1e300), String(Int64.min)),
            (Date(timeIntervalSince1970: .infinity), String(Int64.max)), (Date(timeIntervalSince1970: .nan), "0"),
        ]
        for (date, expected) in cases {
            let common = makeModule([CommonParameters(placement: .query, [
                .timestamp("ts", now: { date }), .timestamp("ms", milliseconds: true, now: { date }),
            ])])
            let (head, _) = try await Self.send(makeEndpoint(common, method: .get))
            #expect(Self.query(of: head).first { $0.name == "ts" }?.value == expected)
            #expect(Self.query(of: head).first { $0.name == "ms" }?.value == expected)

            var options = ParameterSigning.Options()
            options.timestampField = "timestamp"
            let parameters = ParameterSigning(
                signer: ParameterSigner(secret: "s"), options: options, now: { date }, makeNonce: { "n" })
            let (signed, _) = try await Self.send(makeEndpoint(makeModule([parameters]), method: .get))
            #expect(Self.query(of: signed).first { $0.name == "timestamp" }?.value == expected)

            let request = RequestSigning(key: SigningKey(id: "k", secret: "s"), now: { date })
            let (headers, _) = try await Self.send(makeEndpoint(makeModule([request]), method: .get))
            #expect(headers.headerFields[HTTPField.Name("X-Courier-Timestamp")!] == expected)
        }
    }

    @Test func providerClosureKeepsOrder() async throws {
        let module = makeModule([CommonParameters(placement: .query) { context in
            ["module": .string(context.module.name), "device_id": "D-1"]
        }])
        let (head, _) = try await Self.send(makeEndpoint(module, method: .get))
        #expect(Self.query(of: head) == [QueryItem("module", "secure"), QueryItem("device_id", "D-1")])
    }
}
#endif
