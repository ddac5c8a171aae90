import CProtobufC
@testable import CourierCodecs
import CourierTestSupport
import Foundation
import Testing

@Suite struct ProtobufSchemaTests {
    @Test func introspectsTheDemoSchema() throws {
        let schema = ProtobufTestSupport.demo
        #expect(schema.messageNames.first == "demo.Address")
        #expect(schema.messageNames.contains("demo.UserListResponse"))
        let user = try #require(schema.messageType(named: "demo.User"))
        #expect(user.fields.map(\.jsonName) == ["id", "name", "email", "age", "score", "active", "tags", "address"])
        #expect(user.fields[0].type == .int64)
        #expect(user.fields[0].cardinality == .implicit)
        #expect(user.fields[6].cardinality == .repeated)
        #expect(user.fields[7].cardinality == .optional)
        #expect(user.fields[7].typeName == "demo.Address")
        let topic = try #require(schema.messageType(named: "demo.Topic"))
        #expect(topic.fields.first { $0.name == "author_id" }?.jsonName == "authorId")
        #expect(topic.fields.first { $0.name == "status" }?.enumValues.map(\.name)
            == ["TOPIC_STATUS_DRAFT", "TOPIC_STATUS_PUBLISHED", "TOPIC_STATUS_ARCHIVED"])
        #expect(schema.messageType(named: "demo.Nope") == nil)
    }

    /// The runtime's lookup by name, which tries the type found last first: the dictionary's answer for every
    /// name in any order (each type after itself and after every other, unknown names and a prefix of a
    /// known one in between), from one thread and from many at once; the codec's lookup with a leading dot.
    @Test func messageLookupByNameTriesTheLastTypeFirst() async throws {
        let runtime = ProtobufTestSupport.demo.runtime
        let names = runtime.messages.map(\.fullName)
        let queries = names + ["demo.Nope", "", "demo.Use", "demo.UserX"]
        let expected = runtime.messageIndex
        for first in queries {
            for second in queries {
                #expect(runtime.messageIndex(named: first) == expected[first])
                #expect(runtime.messageIndex(named: second) == expected[second])
                #expect(runtime.messageIndex(named: second) == expected[second])
            }
        }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<2_000 {
                        let name = queries[(round * 7 + task) % queries.count]
                        if runtime.messageIndex(named: name) != expected[name] { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        let codec = ProtobufCodec(schema: ProtobufTestSupport.demo)
        for name in names {
            var hints = CodingHints()
            hints.messageType = name
            #expect(try codec.layout(for: hints).fullName == name)
            hints.messageType = "." + name
            #expect(try codec.layout(for: hints).fullName == name)
        }
        var hints = CodingHints()
        hints.messageType = "demo.Nope"
        #expect(throws: CourierError.self) { try codec.layout(for: hints) }
    }

    @Test func introspectsMapsOneofsAndOptionals() throws {
        let sink = try #require(ProtobufTestSupport.kitchen.messageType(named: "kitchen.KitchenSink"))
        #expect(sink.oneofs == ["choice"])  // the synthetic oneofs of proto3 `optional` are not listed
        let intMap = try #require(sink.fields.first { $0.name == "int_map" })
        #expect(intMap.cardinality == .map)
        let entryName = try #require(intMap.typeName)
        let entry = try #require(ProtobufTestSupport.kitchen.messageType(named: entryName))
        #expect(entry.isMapEntry)
        #expect(entry.fields.map(\.number) == [1, 2])
        #expect(sink.fields.first { $0.name == "choice_inner" }?.oneof == "choice")
        #expect(sink.fields.first { $0.name == "maybe_int32" }?.cardinality == .optional)
        #expect(sink.fields.first { $0.name == "maybe_int32" }?.oneof == nil)
        #expect(sink.fields.last?.number == 536_870_911)
        #expect(sink.fields.map(\.number) == sink.fields.map(\.number).sorted())
    }

    /// protobuf-c's own binary searches over our descriptors find every field and enum value: the sorted
    /// tables and ranges are right.
    @Test func cDescriptorsSatisfyProtobufCLookups() throws {
        for schema in [ProtobufTestSupport.demo, ProtobufTestSupport.kitchen] {
            for layout in schema.runtime.messages {
                let d = layout.descriptor
                #expect(d.pointee.magic == UInt32(PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC))
                #expect(d.pointee.sizeof_message % 8 == 0)
                for f in layout.fields {
                    let byNumber = protobuf_c_message_descriptor_get_field(d, f.number)
                    #expect(byNumber.map { String(cString: $0.pointee.name) } == f.name, "\(layout.fullName).\(f.name)")
                    let byName = protobuf_c_message_descriptor_get_field_by_name(d, f.name)
                    #expect(byName?.pointee.id == f.number, "\(layout.fullName).\(f.name)")
                    #expect(f.offset + f.type.cSizeForTests <= layout.sizeofMessage)
                    #expect(f.offset % min(8, f.type.cSizeForTests) == 0)
                }
                #expect(protobuf_c_message_descriptor_get_field(d, 999_999) == nil)
            }
            for e in schema.runtime.enums {
                for (name, number) in e.values {
                    #expect(protobuf_c_enum_descriptor_get_value(e.descriptor, number)?.pointee.value == number)
                    #expect(protobuf_c_enum_descriptor_get_value_by_name(e.descriptor, name)?.pointee.value == number)
                }
                #expect(protobuf_c_enum_descriptor_get_value_by_name(e.descriptor, "NOPE") == nil)
            }
        }
    }

    @Test func loadsAProtoFileThroughProtoc() throws {
        try #require(ProtobufTestSupport.hasProtoc)
        let compiled = try ProtobufSchema(contentsOf: Repository.schema("kitchen_sink.proto"))
        #expect(Set(compiled.messageNames) == Set(ProtobufTestSupport.kitchen.messageNames))
        #expect(compiled.messageType(named: "legacy.Legacy") != nil)  // the import came along
    }

    @Test func protocCompileErrorsAreReadable() throws {
        try #require(ProtobufTestSupport.hasProtoc)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("courier-proto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("broken.proto")
        try Data("syntax = \"proto3\";\nmessage Broken { int32 x = ; }\n".utf8).write(to: file)
        let error = try #require(throws: CourierError.self) { try ProtobufSchema(contentsOf: file) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.detail?.contains("broken.proto:2") == true)
    }

    /// Messages that reach themselves through several fields (and through map values): loading, the shape,
    /// decoding and encoding stay linear — the shape unrolled 32 levels used to cost 2^32 per message.
    @Test(.timeLimit(.minutes(10)))
    func messagesThatReferToThemselvesTwiceStayCheap() throws {
        try #require(ProtobufTestSupport.hasProtoc)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("courier-proto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("recursive.proto")
        try Data("""
            syntax = "proto3";
            package t;
            message R { R r = 1; R s = 2; repeated R rs = 3; int32 v = 4; }
            message M { map<string, M> m = 1; M n = 2; }
            """.utf8).write(to: file)
        let schema = try ProtobufSchema(contentsOf: file)
        for name in ["t.R", "t.M"] {
            let shape = try #require(schema.shape(of: name))
            guard case .object(let members) = shape else {
                Issue.record("\(name): \(shape)")
                continue
            }
            #expect(!members.isEmpty)
            let codec = ProtobufCodec(schema: schema)
            var hints = CodingHints()
            hints.messageType = name
            #expect(try codec.decode(Data(), hints: hints).objectValue != nil)
            #expect(try codec.encode([:], hints: hints).isEmpty)
        }
        let codec = ProtobufCodec(schema: schema)
        var hints = CodingHints()
        hints.messageType = "t.R"
        let nested: Value = ["r": ["s": ["v": 7], "rs": [["v": 1], ["v": 2]]]]
        #expect(try codec.decode(codec.encode(nested, hints: hints), hints: hints)["r"]?["s"]?["v"] == 7)
    }

    @Test func badDescriptorSetsAreConfigurationErrors() throws {
        let garbage = try #require(throws: CourierError.self) { try ProtobufSchema(descriptorSet: Data([0x0A, 0x05, 0x01])) }
        #expect(garbage.code == .invalidConfiguration)
        let missing = try #require(throws: CourierError.self) {
            try ProtobufSchema(contentsOf: URL(fileURLWithPath: "/nonexistent/schema.pb"))
        }
        #expect(missing.code == .invalidConfiguration)
        // A set compiled without --include_imports lacks legacy.Legacy.
        try #require(ProtobufTestSupport.hasProtoc)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).pb")
        defer { try? FileManager.default.removeItem(at: out) }
        _ = try ProtobufTestSupport.protoc(["--descriptor_set_out=\(out.path)", "kitchen_sink.proto"], input: Data())
        let unresolved = try #require(throws: CourierError.self) { try ProtobufSchema(contentsOf: out) }
        #expect(unresolved.code == .invalidConfiguration)
        #expect(unresolved.detail?.contains("legacy.Legacy") == true)
    }

    @Test func committedDescriptorSetsMatchTheirProtoFiles() throws {
        try #require(ProtobufTestSupport.hasProtoc)
        for name in ["demo", "kitchen_sink", "legacy", "bench_userlist"] {
            let out = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).pb")
            defer { try? FileManager.default.removeItem(at: out) }
            _ = try ProtobufTestSupport.protoc(
                ["--include_imports", "--descriptor_set_out=\(out.path)", "\(name).proto"], input: Data())
            #expect(try Data(contentsOf: out) == (try Data(contentsOf: Repository.schema("\(name).pb"))),
                "Schemas/\(name).pb is stale: run Schemas/generate.sh")
        }
    }
}

extension ProtobufSchema.FieldType {
    fileprivate var cSizeForTests: Int {
        switch self {
        case .int32, .sint32, .sfixed32, .uint32, .fixed32, .float, .bool, .enumeration: return 4
        case .bytes: return 16
        default: return 8
        }
    }
}
