import CourierSchema
import CourierTestSupport
import Foundation
import Testing

/// Load-time failures: unknown references, cycles that consume no input, malformed schemas, bad
/// regexes — each a `CourierError` with an enumerated code, never a crash or a hang.
@Suite struct SchemaCompileErrorTests {
    static let base = "https://courier.example/tests/"

    static func compile(_ schema: Value, options: CompiledSchema.Options = .init()) throws -> CompiledSchema {
        var registry = SchemaRegistry()
        let uri = try registry.add(schema, uri: base + "schema.json")
        return try registry.compile(id: uri, options: options)
    }

    static func code(of schema: Value) -> CourierError.Code? {
        do {
            _ = try compile(schema)
            return nil
        } catch let error as CourierError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test(arguments: [
        ["$ref": "missing.json"] as Value,
        ["$ref": "#/$defs/missing"],
        ["$ref": "#no-such-anchor"],
        ["properties": ["a": ["$ref": "https://elsewhere.example/never-fetched.json"]]],
        ["$dynamicRef": "other.json#meta"],
    ])
    func unknownReferencesFailAtCompileTime(_ schema: Value) {
        #expect(Self.code(of: schema) == .unresolvedReference)
    }

    @Test(arguments: [
        ["$ref": "#"] as Value,
        ["$defs": ["a": ["$ref": "#/$defs/b"], "b": ["allOf": [["$ref": "#/$defs/a"]]]], "$ref": "#/$defs/a"],
        ["anyOf": [["not": ["$ref": "#"]]]],
        ["$schema": "http://json-schema.org/draft-07/schema#", "definitions": ["a": ["$ref": "#/definitions/a"]],
         "properties": ["x": ["$ref": "#/definitions/a"]]],
    ])
    func cyclesThatConsumeNoInputAreInvalid(_ schema: Value) {
        #expect(Self.code(of: schema) == .invalidSchema)
    }

    /// A folder with a dangling `$ref` or a cycle fails when it is loaded, naming the file; a folder whose
    /// schemas refer to each other in any file order loads.
    @Test func badReferencesFailWhenTheFolderIsLoaded() throws {
        func folder(_ files: [String: String]) throws -> URL {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-schemas-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for (name, text) in files { try Data(text.utf8).write(to: url.appendingPathComponent(name)) }
            return url
        }
        let good = try folder([
            "a-list.json": #"{"$id": "https://x.test/list", "type": "array", "items": {"$ref": "item"}}"#,
            "b-item.json": #"{"$id": "https://x.test/item", "type": "integer"}"#,
        ])
        var registry = SchemaRegistry()
        #expect(try registry.addDirectory(at: good).count == 2)
        #expect(try registry.compile(id: "https://x.test/list").isValid([1, 2]))

        let dangling = try folder([
            "user.json": #"{"$id": "https://x.test/user", "properties": {"address": {"$ref": "address.json"}}}"#,
        ])
        var second = SchemaRegistry()
        let error = try #require(throws: CourierError.self) { try second.addDirectory(at: dangling) }
        #expect(error.code == .unresolvedReference)
        #expect("\(error)".contains("user.json"))

        let cycle = try folder(["loop.json": ##"{"$id": "https://x.test/loop", "$ref": "#"}"##])
        var third = SchemaRegistry()
        let cycleError = try #require(throws: CourierError.self) { try third.addDirectory(at: cycle) }
        #expect(cycleError.code == .invalidSchema)

        // Added one by one, the same schema loads, and `verify()` finds the dangling reference.
        var fourth = SchemaRegistry()
        try fourth.add(contentsOf: dangling.appendingPathComponent("user.json"))
        let verifyError = #expect(throws: CourierError.self) { try fourth.verify() }
        #expect(verifyError?.code == .unresolvedReference)
    }

    @Test func recursionThroughChildrenIsFine() throws {
        let tree: Value = [
            "type": "object",
            "properties": ["value": ["type": "integer"], "children": ["type": "array", "items": ["$ref": "#"]]],
        ]
        let schema = try Self.compile(tree)
        #expect(schema.isValid(["value": 1, "children": [["value": 2, "children": []]]]))
        #expect(schema.validate(["value": 1, "children": [["value": "x"]]]).map(\.instanceLocation) == ["/children/0/value"])
    }

    @Test(arguments: [
        ["pattern": "a(b"] as Value,
        ["pattern": "[z-a]"],
        ["patternProperties": ["\\": true]],
        ["pattern": "\\q"],
    ])
    func invalidRegexesAreInvalidSchemas(_ schema: Value) {
        #expect(Self.code(of: schema) == .invalidSchema)
    }

    @Test(arguments: [
        ["type": "integr"] as Value,
        ["minimum": "0"],
        ["minLength": -1],
        ["multipleOf": 0],
        ["required": "name"],
        ["allOf": ["type": "string"]],
        ["properties": ["a": 5]],
        ["$id": "https://courier.example/x.json#fragment"],
        ["$schema": "https://unknown.example/meta"],
    ])
    func malformedSchemasAreInvalid(_ schema: Value) {
        #expect(Self.code(of: schema) == .invalidSchema)
    }

    @Test func unknownSchemaIDIsNotFound() throws {
        let registry = SchemaRegistry()
        let error = try #require(throws: CourierError.self) {
            try registry.compile(id: "https://courier.example/none.json")
        }
        #expect(error.code == .schemaNotFound)
        let relative = try #require(throws: CourierError.self) { try registry.compile(id: "none.json") }
        #expect(relative.code == .schemaNotFound)
    }

    @Test func conflictingRegistrationIsRejected() throws {
        var registry = SchemaRegistry()
        try registry.add(["type": "string"], uri: Self.base + "a.json")
        try registry.add(["type": "string"], uri: Self.base + "a.json")  // the same schema again is fine
        let error = try #require(throws: CourierError.self) {
            try registry.add(["type": "integer"], uri: Self.base + "a.json")
        }
        #expect(error.code == .invalidSchema)
        let notJSON = try #require(throws: CourierError.self) {
            try registry.add(json: Data("{".utf8), uri: Self.base + "b.json")
        }
        #expect(notJSON.code == .invalidSchema)
    }

    @Test func metaSchemasAreAvailableOffline() throws {
        let registry = SchemaRegistry()
        let modern = try registry.compile(id: "https://json-schema.org/draft/2020-12/schema")
        #expect(modern.isValid(["type": "string", "minLength": 1]))
        #expect(!modern.isValid(["type": "strin"]))
        #expect(!modern.isValid(["minLength": -1]))
        let draft7 = try registry.compile(id: "http://json-schema.org/draft-07/schema#")
        #expect(draft7.isValid(["items": [["type": "string"]], "additionalItems": false]))
        #expect(!draft7.isValid(["required": "name"]))
    }
}

/// Hostile instances end in a result, never a crash.
@Suite struct SchemaRobustnessTests {
    /// A schema document the JSON decoder refuses says why (here: nested too deeply), not only "not JSON".
    @Test func aSchemaNestedTooDeeplyNamesTheDepthLimit() throws {
        let text = String(repeating: #"{"not":"#, count: 100_000) + "{}" + String(repeating: "}", count: 100_000)
        var registry = SchemaRegistry()
        let error = try #require(throws: CourierError.self) { try registry.add(json: Data(text.utf8)) }
        #expect(error.code == .invalidSchema)
        #expect(error.detail?.contains("depthLimitExceeded") == true, "\(error.detail ?? "")")
    }

    @Test func deeplyNestedInstanceWithRecursiveSchema() throws {
        var registry = SchemaRegistry()
        let uri = try registry.add(["type": "array", "items": ["$ref": "#"]], uri: "https://courier.example/t/deep.json")
        let schema = try registry.compile(id: uri)
        // As deep as the JSON decoder allows; under ThreadSanitizer, whose frames are several times larger,
        // the stack guard would rightly give up first on a concurrency-pool thread, so a shallower instance.
        let depth = TestRun.underThreadSanitizer ? 120 : 500
        var nested: Value = []
        for _ in 0..<depth { nested = [nested] }
        #expect(schema.isValid(nested))
        var broken: Value = [1]
        for _ in 0..<depth { broken = [broken] }
        let violations = schema.validate(broken)
        #expect(violations.count == 1)
        #expect(violations.first?.instanceLocation == String(repeating: "/0", count: depth + 1))

        // Far deeper than any decoder produces: the stack guard answers instead of overflowing.
        var absurd: Value = []
        for _ in 0..<20_000 { absurd = [absurd] }
        #expect(!schema.isValid(absurd))
        #expect(schema.validate(absurd).first?.message.contains("nests too deeply") == true)
    }

    @Test func dynamicReferencesThatLoopAtRunTimeAreBounded() throws {
        // Statically the chain ends; at run time "#x" resolves to the outer schema, which refers back.
        var registry = SchemaRegistry()
        try registry.add(
            ["$id": "https://courier.example/t/inner.json", "$dynamicAnchor": "x", "type": "object",
             "$defs": ["loop": ["$dynamicRef": "#x"]]] as Value)
        let outer = try registry.add(
            ["$id": "https://courier.example/t/outer.json", "$dynamicAnchor": "x", "$ref": "inner.json#/$defs/loop"]
                as Value)
        let schema = try registry.compile(id: outer)
        #expect(!schema.isValid(1))
        #expect(schema.validate(["a": 1]).first?.message.contains("nests too deeply") == true)
    }
}
