import CourierSchema
import CourierTestSupport
import Foundation
import Testing

/// Helpers shared by the schema tests: fixtures as Values and the demo schemas (files come from
/// `Repository`).
enum SchemaTestSupport {
    static var schemasDirectory: URL { Repository.root.appendingPathComponent("Schemas") }

    static func fixture(_ name: String) throws -> Value {
        try JSONCodec().decode(Repository.fixture(name), hints: CodingHints())
    }

    static func json(_ text: String) throws -> Value {
        try JSONCodec().decode(Array(text.utf8))
    }

    /// The registry of the demo API's schemas (`Schemas/*.schema.json`).
    static func demoRegistry() throws -> SchemaRegistry {
        var registry = SchemaRegistry()
        try registry.addDirectory(at: schemasDirectory)
        return registry
    }
}
