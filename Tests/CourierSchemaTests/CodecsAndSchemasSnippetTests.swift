import Courier
import CourierCodecs
import CourierSchema
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

// The Swift code blocks of the article "Codecs and Schemas" (Sources/CourierCodecs/CourierCodecs.docc), word for
// word between `// doc-snippet:` markers (checked by `DocArticleSnippetCheck`), run against a played server.

/// Answers every request with one response (the schema test target has no CourierTesting).
private struct FixedAnswer: Transport {
    var contentType: String
    var body: Data
    func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
        (HTTPResponse(status: .ok, headerFields: [.contentType: contentType]), self.body)
    }
}

private struct CodecsAndSchemasDoc {
    // doc-snippet: CodecsAndSchemas
    func makeClient(transport: any Transport, descriptorSet: URL, schemaFolder: URL) throws -> CourierClient {
        let codecs = CodecSet.standard
            .adding(XMLCodec())
            .adding(ProtobufCodec(schema: try ProtobufSchema(contentsOf: descriptorSet)))
        var registry = SchemaRegistry()
        try registry.addDirectory(at: schemaFolder)
        try registry.verify()                 // a dangling $ref or a reference cycle fails here, naming the file
        return CourierClient(transport: transport, configuration: .init(
            interceptors: [SchemaValidation(registry: registry)], codecs: codecs))
    }
    // end-doc-snippet
}

@Suite(.timeLimit(.minutes(10))) struct CodecsAndSchemasSnippetTests {
    static let descriptorSet = Repository.schema("demo.pb")
    static let schemaFolder = Repository.root.appendingPathComponent("Schemas")

    static func endpoints() -> (getUser: Endpoint, getUserXML: Endpoint) {
        let users = APIModule(name: "user", service: APIService(name: "api", baseURL: URL(string: "https://api.example.com")!))
        // doc-snippet: CodecsAndSchemas
        var getUser = Endpoint(name: "getUser", module: users, path: "/users/7")
        getUser.responseFormat = .protobuf
        getUser.responseMessage = "demo.UserResponse"
        getUser.responseSchema = "https://courier.example/schemas/user.schema.json#/$defs/response"

        var getUserXML = Endpoint(name: "getUserXML", module: users, path: "/users/7")
        getUserXML.responseFormat = .xml
        getUserXML.responseSchema = "https://courier.example/schemas/user.schema.json#/$defs/response"
        // end-doc-snippet
        return (getUser, getUserXML)
    }

    static func client(_ transport: any Transport) throws -> CourierClient {
        try CodecsAndSchemasDoc().makeClient(
            transport: transport, descriptorSet: descriptorSet, schemaFolder: schemaFolder)
    }

    static func protobufAnswer(id: Int64) throws -> Data {
        var hints = CodingHints()
        hints.messageType = "demo.UserResponse"
        let codec = ProtobufCodec(schema: try ProtobufSchema(contentsOf: descriptorSet))
        return try codec.encode(
            ["code": 0, "message": "ok", "data": ["id": .int(id), "name": "Ada", "email": "ada@example.com"]], hints: hints)
    }

    static func xmlAnswer(id: Int) -> Data {
        Data("""
            <response><code>0</code><message>ok</message>\
            <data><id>\(id)</id><name>Ada</name><email>ada@example.com</email></data></response>
            """.utf8)
    }

    @Test func aProtobufAnswerIsDecodedAndValidated() async throws {
        let client = try Self.client(FixedAnswer(contentType: "application/x-protobuf", body: Self.protobufAnswer(id: 7)))
        let reply = try await client.send(Self.endpoints().getUser)
        #expect(reply.value["data"]?["name"] == "Ada")
        #expect(reply.value["data"]?["id"] == 7)
    }

    @Test func anXMLAnswerTakesItsShapeFromTheSchema() async throws {
        let client = try Self.client(FixedAnswer(contentType: "application/xml", body: Self.xmlAnswer(id: 7)))
        let reply = try await client.send(Self.endpoints().getUserXML)
        #expect(reply.value["code"] == 0)                          // a number, as the schema says, not "0"
        #expect(reply.value["data"]?["id"] == 7)
    }

    @Test func answersThatBreakTheSchemaFailInEveryFormat() async throws {
        let protobuf = try Self.client(FixedAnswer(contentType: "application/x-protobuf", body: Self.protobufAnswer(id: 0)))
        let fromProtobuf = try await #require(throws: CourierError.self) { try await protobuf.send(Self.endpoints().getUser) }
        #expect(fromProtobuf.code == .schemaViolation)
        let xml = try Self.client(FixedAnswer(contentType: "application/xml", body: Self.xmlAnswer(id: 0)))
        let fromXML = try await #require(throws: CourierError.self) { try await xml.send(Self.endpoints().getUserXML) }
        #expect(fromXML.code == .schemaViolation)
    }

    @Test func aCodecWorksWithoutAClient() throws {
        // doc-snippet: CodecsAndSchemas
        let xml = Data("<user><id>7</id><name>Ada</name></user>".utf8)
        let (root, value) = try XMLCodec().decodeDocument(xml)
        print(root, value["name"] ?? "none")          // the root element's name and the name field
        let json = try JSONCodec().encode(value, hints: CodingHints())
        print(String(decoding: json, as: UTF8.self))
        // end-doc-snippet
        #expect(root == "user")
        #expect(value["name"] == "Ada")
        #expect(try JSONCodec().decode(json, hints: CodingHints()) == value)
    }

    @Test func modelsDecodeAndEncodeDirectly() throws {
        // doc-snippet: CodecsAndSchemas
        struct User: Codable, Equatable { var id: Int; var name: String }
        let body = Data(#"{"id":7,"name":"Ada"}"#.utf8)
        let user = try JSONCodec().decode(User.self, from: body, hints: CodingHints(), decoder: ValueDecoder())
        let fromXML = try CodecSet([XMLCodec()]).decode(
            User.self, from: Data("<user><id>7</id><name>Ada</name></user>".utf8), format: .xml)
        let bytes = try JSONCodec().encode(model: user, hints: CodingHints(), encoder: ValueEncoder())
        print(user == fromXML, String(decoding: bytes, as: UTF8.self))   // true {"id":7,"name":"Ada"}
        // end-doc-snippet
        #expect(user == User(id: 7, name: "Ada"))
        #expect(fromXML == user)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"id":7,"name":"Ada"}"#)
    }
}
