import Courier
import CourierCodecs
import CourierDemoServer
import CourierSchema
import Foundation
import HTTPTypes
import Testing

@Suite(.serialized) struct FormatAndSchemaTests {
    @Test func embeddedSchemasMatchTheSchemasFolder() throws {
        let registry = try DemoAPI.schemaRegistry()
        let files = try FileManager.default.contentsOfDirectory(atPath: Repository.root.appendingPathComponent("Schemas").path)
            .filter { $0.hasSuffix(".schema.json") }
        #expect(!files.isEmpty)
        for file in files {
            let onDisk = try JSONCodec().decode(Data(contentsOf: Repository.root.appendingPathComponent("Schemas/\(file)")), hints: CodingHints())
            let id = try #require(onDisk["$id"]?.stringValue)
            #expect(registry.contains(id), "run `make schemas`: \(file) is not embedded")
        }
    }

    @Test(arguments: [ContentFormat.json, .xml, .protobuf])
    func theSameTypedCallInEachFormat(format: ContentFormat) async throws {
        try await withDemoServer { _, api in
            let client = CourierClient(configuration: .init(codecs: DemoAPI.codecs))
            let reply = try await client.send(api.users(page: 1, size: 10, format: format), decoding: DemoAPI.UserPageEnvelope.self)
            #expect(reply.metadata.format == format)
            let json = try await client.send(api.users(page: 1, size: 10), decoding: DemoAPI.UserPageEnvelope.self)
            #expect(reply.value == json.value)
            #expect(reply.value.data.users.count == 10)
        }
    }

    @Test(arguments: [ContentFormat.json, .xml, .protobuf])
    func validResponsesPassTheirSchemaInEachFormat(format: ContentFormat) async throws {
        try await withDemoServer { _, api in
            var api = api
            api.users.interceptors = [SchemaValidation(registry: try DemoAPI.schemaRegistry())]
            let client = CourierClient(configuration: .init(codecs: DemoAPI.codecs))
            let list = try await client.send(api.users(page: 1, size: 20, format: format))
            #expect(list.value["data"]?["users"]?.arrayValue?.count == 20)
            let one = try await client.send(api.user(id: 3, format: format))
            #expect(one.value["data"]?["id"] == 3)
        }
    }

    @Test func validationRunsBeforeTypedDecoding() async throws {
        try await withDemoServer { _, api in
            let client = CourierClient(configuration: .init(codecs: DemoAPI.codecs))
            // Unvalidated, the broken user decodes into the typed model: nothing in `Int` says age ≥ 0.
            let unchecked = try await client.send(api.invalidUser(id: 2), decoding: DemoAPI.UserEnvelope.self)
            #expect(unchecked.value.data.age == -1)
            var api = api
            api.users.interceptors = [SchemaValidation(registry: try DemoAPI.schemaRegistry())]
            for format in [ContentFormat.json, .xml, .protobuf] {
                var endpoint = api.invalidUser(id: 2)
                endpoint.responseFormat = format
                let error = try await #require(throws: CourierError.self) {
                    try await client.send(endpoint, decoding: DemoAPI.UserEnvelope.self)
                }
                #expect(error.code == .schemaViolation, "\(format)")
                #expect(error.violations.map(\.instanceLocation).sorted() == ["/data/address/zip", "/data/age"])
            }
            let valid = try await client.send(api.user(id: 2, format: .xml), decoding: DemoAPI.UserEnvelope.self)
            #expect(valid.value.data.id == 2)
        }
    }

    @Test func aViolatingResponseFailsWithTheSameViolationsInEveryFormat() async throws {
        try await withDemoServer { _, api in
            var api = api
            api.users.interceptors = [SchemaValidation(registry: try DemoAPI.schemaRegistry())]
            let client = CourierClient(configuration: .init(codecs: DemoAPI.codecs))
            var violations: [[SchemaViolation]] = []
            for format in [ContentFormat.json, .xml, .protobuf] {
                var endpoint = api.invalidUser(id: 2)
                endpoint.responseFormat = format
                let error = try await #require(throws: CourierError.self) { try await client.send(endpoint) }
                #expect(error.code == .schemaViolation)
                #expect(error.category == .validation)
                #expect(error.context.status == 200)
                violations.append(error.violations)
            }
            let json = try #require(violations.first)
            #expect(json.map(\.instanceLocation).sorted() == ["/data/address/zip", "/data/age"])
            #expect(json.contains { $0.message == "data/age: -1 is less than the minimum of 0" })
            #expect(violations.count == 3)
            for other in violations.dropFirst() { #expect(other == json) }
        }
    }
}
