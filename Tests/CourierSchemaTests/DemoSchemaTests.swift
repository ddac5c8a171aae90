import CourierSchema
import Foundation
import Testing

/// The demo API's schemas in `Schemas/` against the fixtures, and the exact violations of a broken user.
@Suite struct DemoSchemaTests {
    static let userList = "https://courier.example/schemas/userlist.schema.json"

    @Test(arguments: ["users_10.json", "users_5000.json"])
    func fixturesValidate(_ name: String) throws {
        let registry = try SchemaTestSupport.demoRegistry()
        let fixture = try SchemaTestSupport.fixture(name)
        var strict = CompiledSchema.Options()
        strict.assertFormat = true  // the fixtures' e-mail addresses are real addresses too
        for options in [CompiledSchema.Options(), strict] {
            let schema = try registry.compile(id: Self.userList, options: options)
            #expect(schema.validate(fixture) == [])
            #expect(schema.isValid(fixture))
            try schema.check(fixture)
        }
    }

    @Test func everyDemoSchemaIsRegisteredByItsID() throws {
        let registry = try SchemaTestSupport.demoRegistry()
        for name in ["user", "userlist", "topic"] {
            #expect(registry.contains("https://courier.example/schemas/\(name).schema.json"))
        }
        // Every demo schema is itself valid against the 2020-12 meta-schema.
        let meta = try registry.compile(id: "https://json-schema.org/draft/2020-12/schema")
        for name in ["user", "userlist", "topic"] {
            let data = try Data(contentsOf: SchemaTestSupport.schemasDirectory.appendingPathComponent("\(name).schema.json"))
            #expect(meta.validate(try JSONCodec().decode(data, hints: CodingHints())) == [])
        }
    }

    @Test func shapeForXMLDecoding() throws {
        let schema = try SchemaTestSupport.demoRegistry().compile(id: Self.userList)
        let user: ValueShape = .object([
            "id": .integer, "name": .string, "email": .string, "age": .integer, "score": .number, "active": .bool,
            "tags": .array(.string), "address": .object(["city": .string, "street": .string, "zip": .string]),
        ])
        #expect(
            schema.shape
                == .object([
                    "code": .integer, "message": .string,
                    "data": .object(["page": .integer, "total": .integer, "users": .array(user)]),
                ]))
        var registry = SchemaRegistry()
        let uri = try registry.add(
            ["type": ["string", "null"], "$defs": ["tree": ["properties": ["kids": ["items": ["$ref": "#/$defs/tree"]]]]]],
            uri: "https://courier.example/t/shape.json")
        #expect(try registry.compile(id: uri).shape == .optional(.string))
        let tree = try registry.compile(id: uri + "#/$defs/tree")
        #expect(tree.shape.member("kids").element?.member("kids").element != nil)  // recursion is cut, not endless
    }

    @Test func brokenUserGivesExactViolations() throws {
        let registry = try SchemaTestSupport.demoRegistry()
        let schema = try registry.compile(id: Self.userList)
        var response = try SchemaTestSupport.fixture("users_10.json")
        guard case .array(var users)? = response["data"]?["users"] else {
            Issue.record("fixture has no users")
            return
        }
        users[3]["age"] = -1
        users[3]["address"]?["zip"] = "1234"
        response["data"]?["users"] = .array(users)

        let violations = schema.validate(response)
        #expect(
            violations == [
                SchemaViolation(
                    instanceLocation: "/data/users/3/age",
                    keywordLocation: "/properties/data/properties/users/items/$ref/properties/age/minimum",
                    keyword: "minimum",
                    message: "data/users/3/age: -1 is less than the minimum of 0"),
                SchemaViolation(
                    instanceLocation: "/data/users/3/address/zip",
                    keywordLocation:
                        "/properties/data/properties/users/items/$ref/properties/address/$ref/properties/zip/pattern",
                    keyword: "pattern",
                    message: #"data/users/3/address/zip: "1234" does not match the pattern ^[0-9]{5}$"#),
            ])

        let error = try #require(throws: CourierError.self) { try schema.check(response) }
        #expect(error.code == .schemaViolation)
        #expect(error.violations.count == 2)
        #expect(error.context.codingPath == ["data", "users", 3, "age"])
        #expect(error.message.contains("data/users/3/age: -1 is less than the minimum of 0"))
        #expect(!schema.isValid(response))
    }

    @Test func violationsOfTypesAndRequiredMembers() throws {
        let registry = try SchemaTestSupport.demoRegistry()
        let schema = try registry.compile(id: Self.userList)
        let response: Value = ["code": 200, "message": "OK", "data": ["page": "x", "users": [["id": 0, "name": ""]]]]
        let messages = schema.validate(response).map(\.message)
        #expect(
            messages == [
                #"data: the required property "total" is missing"#,
                #"data/page: "x" is not an integer"#,
                #"data/users/0: the required property "email" is missing"#,
                "data/users/0/id: 0 is less than the minimum of 1",
                #"data/users/0/name: "" is shorter than the minimum length of 1"#,
            ])
        #expect(schema.validate(["code": 1]).map(\.message) == [
            #"(root): the required property "message" is missing"#,
            #"(root): the required property "data" is missing"#,
        ])
    }

    @Test func violationLimits() throws {
        let registry = try SchemaTestSupport.demoRegistry()
        let users = Value.array((0..<10).map { _ in ["id": 0, "name": "", "email": "x"] })
        let response: Value = ["code": 200, "message": "OK", "data": ["page": 1, "total": 10, "users": users]]

        #expect(try registry.compile(id: Self.userList).validate(response).count == 20)

        var firstOnly = CompiledSchema.Options()
        firstOnly.collectAllViolations = false
        #expect(try registry.compile(id: Self.userList, options: firstOnly).validate(response).count == 1)

        var capped = CompiledSchema.Options()
        capped.maximumViolations = 3
        #expect(try registry.compile(id: Self.userList, options: capped).validate(response).count == 3)
    }

    @Test func compiledSchemasAreCachedAndReused() throws {
        var registry = try SchemaTestSupport.demoRegistry()
        // Loading the folder compiled (verified) each of its three schemas once.
        #expect(registry.statistics.compilations == 3)
        #expect(registry.statistics.cacheHits == 0)
        let first = try registry.compile(id: Self.userList)
        let second = try registry.compile(id: Self.userList)
        #expect(registry.statistics.compilations == 3)
        #expect(registry.statistics.cacheHits == 2)
        #expect(first.nodeCount == second.nodeCount)

        // A copy shares the cache until it changes; a change starts a fresh cache.
        let copy = registry
        _ = try copy.compile(id: Self.userList)
        #expect(registry.statistics.cacheHits == 3)
        try registry.add(["type": "string"], uri: "https://courier.example/schemas/extra.json")
        _ = try registry.compile(id: Self.userList)
        #expect(registry.statistics.compilations == 4)

        // Different options are a different compiled schema.
        var options = CompiledSchema.Options()
        options.assertFormat = true
        _ = try registry.compile(id: Self.userList, options: options)
        #expect(registry.statistics.compilations == 5)
    }

    @Test func compiledSchemaIsUsableFromManyTasks() async throws {
        let schema = try SchemaTestSupport.demoRegistry().compile(id: Self.userList)
        let fixture = try SchemaTestSupport.fixture("users_10.json")
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { schema.isValid(fixture) } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))

        // A pattern the Swift Regex engine runs (groups, alternation), shared by concurrent tasks.
        var registry = SchemaRegistry()
        let uri = try registry.add(["items": ["pattern": "^(ab|cd)+(?:-\\d{2})?$"]], uri: "https://courier.example/t/p.json")
        let patterned = try registry.compile(id: uri)
        let values: Value = ["abcd", "abab-12", "cd"]
        let concurrent = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { (0..<50).allSatisfy { _ in patterned.isValid(values) && !patterned.isValid(["x"]) } } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(concurrent == Array(repeating: true, count: 8))
    }
}
