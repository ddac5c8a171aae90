import Courier
import CourierSchema
import Foundation

/// JSON Schema validation throughput: `userlist.schema.json` over the 5,000-user page, decoded once,
/// beside the JSON decode of the same bytes (the target: validating costs less than decoding).
enum SchemaBenchmarks {
    static func run(_ h: inout Harness) throws {
        let data = fixture("users_5000.json")
        let bytes = [UInt8](data)
        let codec = JSONCodec()
        let value = try codec.decode(bytes)

        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var registry = SchemaRegistry()
        try registry.addDirectory(at: root.appendingPathComponent("Schemas"))
        let id = "https://courier.example/schemas/userlist.schema.json"

        h.measure("schema: compile userlist.schema.json (fresh registry)") {
            var fresh = SchemaRegistry()
            _ = try? fresh.addDirectory(at: root.appendingPathComponent("Schemas"))
            _ = try? fresh.compile(id: id)
        }
        let schema = try registry.compile(id: id)
        guard schema.validate(value).isEmpty else { fatalError("users_5000.json does not validate") }

        let decode = try h.measure("json: decode users_5000.json (peer)", bytes: bytes.count) {
            _ = try codec.decode(bytes)
        }
        let validate = h.measure("schema: validate users_5000.json (all violations)", bytes: bytes.count) {
            precondition(schema.validate(value).isEmpty)
        }
        let quick = h.measure("schema: isValid users_5000.json", bytes: bytes.count) {
            precondition(schema.isValid(value))
        }
        var formats = CompiledSchema.Options()
        formats.assertFormat = true
        let strict = try registry.compile(id: id, options: formats)
        h.measure("schema: validate users_5000.json (assertFormat)", bytes: bytes.count) {
            precondition(strict.validate(value).isEmpty)
        }
        h.compare(validate, decode, target: 1.0)
        h.compare(quick, decode, target: 1.0)
    }
}
