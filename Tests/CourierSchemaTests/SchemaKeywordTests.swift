@testable import CourierSchema
import Testing

/// Keyword behaviour beyond the official suite: exact decimals, ECMAScript regex semantics, draft
/// selection, annotations through references, format assertion, URI resolution.
@Suite struct SchemaKeywordTests {
    static func schema(_ json: String, options: CompiledSchema.Options = .init()) throws -> CompiledSchema {
        var registry = SchemaRegistry()
        let uri = try registry.add(try SchemaTestSupport.json(json), uri: "https://courier.example/t/schema.json")
        return try registry.compile(id: uri, options: options)
    }

    @Test(arguments: [
        ("0.0075", "0.0001", true), ("0.0075", "0.001", false), ("19.99", "0.01", true), ("0.3", "0.1", true),
        ("1e308", "0.5", true), ("123456789012345678901234567890", "3", true),
        ("123456789012345678901234567891", "3", false), ("1e400", "7", false), ("14e399", "7", true),
        ("4.5", "1.5", true), ("-0.02", "0.01", true), ("10", "0.333", false),
        ("1e-300", "1e-301", true), ("2e30", "12345678901234567890123", false),
    ])
    func multipleOfIsExact(_ value: String, _ divisor: String, _ expected: Bool) throws {
        let schema = try Self.schema(#"{"multipleOf": \#(divisor)}"#)
        #expect(schema.isValid(try SchemaTestSupport.json(value)) == expected, "\(value) multipleOf \(divisor)")
    }

    @Test func numericBoundsCompareExactly() throws {
        let schema = try Self.schema(#"{"minimum": 0.1, "exclusiveMaximum": 12345678901234567890123}"#)
        #expect(schema.isValid(.double(0.1)))
        #expect(!schema.isValid(try SchemaTestSupport.json("0.09999999999999999999999")))
        #expect(schema.isValid(try SchemaTestSupport.json("12345678901234567890122.9")))
        #expect(!schema.isValid(try SchemaTestSupport.json("12345678901234567890123.0")))
        let integer = try Self.schema(#"{"type": "integer"}"#)
        #expect(integer.isValid(.double(1.0)))
        #expect(integer.isValid(try SchemaTestSupport.json("1e30")))
        #expect(!integer.isValid(.double(1.5)))
    }

    @Test func stringLengthCountsCodePoints() throws {
        let schema = try Self.schema(#"{"minLength": 2, "maxLength": 2}"#)
        #expect(schema.isValid("💩💩"))  // 2 code points, 4 UTF-16 units
        #expect(!schema.isValid("💩"))
        #expect(schema.isValid("e\u{301}"))  // one grapheme, two code points
    }

    @Test func patternsHaveECMAScriptMeaning() throws {
        let digits = try Self.schema(#"{"pattern": "^\\d+$"}"#)
        #expect(digits.isValid("123"))
        #expect(!digits.isValid("١٢٣"))  // Arabic-Indic digits are not \d in ECMAScript
        let word = try Self.schema(#"{"pattern": "^\\w+$"}"#)
        #expect(!word.isValid("é"))
        let letters = try Self.schema(#"{"pattern": "^\\p{Letter}+$"}"#)
        #expect(letters.isValid("éλ"))
        let dollar = try Self.schema(#"{"pattern": "^abc$"}"#)
        #expect(!dollar.isValid("abc\n"))
        let dot = try Self.schema(#"{"pattern": "^a.c$"}"#)
        #expect(!dot.isValid("a\nc"))
        #expect(dot.isValid("a💩c"))
        let unanchored = try Self.schema(#"{"pattern": "b+"}"#)
        #expect(unanchored.isValid("abbc"))
        let alternation = try Self.schema(#"{"pattern": "^(cat|dog)s?$"}"#)
        #expect(alternation.isValid("dogs"))
        #expect(!alternation.isValid("cow"))
    }

    @Test func draftSevenIsSelectedBySchemaKeyword() throws {
        let schema = try Self.schema(
            #"""
            {"$schema": "http://json-schema.org/draft-07/schema#",
             "definitions": {"s": {"type": "string"}},
             "properties": {"a": {"$ref": "#/definitions/s", "maxLength": 1}},
             "items": [{"type": "integer"}], "additionalItems": false}
            """#)
        #expect(schema.isValid(["a": "long text"]))  // $ref overrides maxLength in draft-07
        #expect(schema.isValid([1]))
        #expect(!schema.isValid([1, 2]))
        let modern = try Self.schema(
            ##"{"$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/s", "maxLength": 1}}}"##)
        #expect(!modern.isValid(["a": "long text"]))  // 2020-12: siblings apply
    }

    @Test func unevaluatedPropertiesSeeThroughReferencesAndBranches() throws {
        let schema = try Self.schema(
            #"""
            {"$defs": {"named": {"properties": {"name": {"type": "string"}}}},
             "allOf": [{"$ref": "#/$defs/named"}],
             "anyOf": [{"properties": {"a": true}, "required": ["a"]}, {"properties": {"b": true}, "required": ["b"]}],
             "if": {"properties": {"kind": {"const": "x"}}}, "then": {"properties": {"x": true}},
             "unevaluatedProperties": false}
            """#)
        #expect(schema.isValid(["name": "n", "a": 1]))
        #expect(schema.isValid(["name": "n", "a": 1, "b": 2]))
        #expect(schema.isValid(["a": 1, "kind": "x", "x": 1]))
        #expect(!schema.isValid(["a": 1, "kind": "y", "x": 1]))
        #expect(schema.validate(["a": 1, "extra": true]).map(\.keywordLocation) == ["/unevaluatedProperties"])
    }

    @Test func formatIsAnAnnotationUnlessAsserted() throws {
        let json = #"{"properties": {"mail": {"format": "email"}, "when": {"format": "date-time"}, "ip": {"format": "ipv4"}}}"#
        let lax = try Self.schema(json)
        #expect(lax.isValid(["mail": "nope", "when": "yesterday", "ip": "999.1.1.1"]))
        var options = CompiledSchema.Options()
        options.assertFormat = true
        let strict = try Self.schema(json, options: options)
        #expect(strict.isValid(["mail": "ada@example.com", "when": "2026-11-22T04:43:49Z", "ip": "10.0.0.1"]))
        #expect(
            strict.validate(["mail": "nope", "when": "2026-02-30T00:00:00Z", "ip": "999.1.1.1"]).map(\.message) == [
                #"mail: "nope" is not a valid email"#,
                #"when: "2026-02-30T00:00:00Z" is not a valid date-time"#,
                #"ip: "999.1.1.1" is not a valid ipv4"#,
            ])
    }

    @Test func dynamicReferencesFollowTheDynamicScope() throws {
        var registry = SchemaRegistry()
        try registry.add(
            try SchemaTestSupport.json(
                #"""
                {"$id": "https://courier.example/t/list.json", "$dynamicAnchor": "item",
                 "type": "array", "items": {"$dynamicRef": "#item"}, "$defs": {"item": {"$dynamicAnchor": "item"}}}
                """#))
        try registry.add(
            try SchemaTestSupport.json(
                #"""
                {"$id": "https://courier.example/t/strings.json", "$ref": "list.json",
                 "$defs": {"item": {"$dynamicAnchor": "item", "type": "string"}}}
                """#))
        let strings = try registry.compile(id: "https://courier.example/t/strings.json")
        #expect(strings.isValid(["a", "b"]))
        #expect(!strings.isValid(["a", 1]))
    }

    @Test(arguments: [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), (";x", "http://a/b/c/;x"), ("", "http://a/b/c/d;p?q"),
        (".", "http://a/b/c/"), ("..", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"),
        ("../../../g", "http://a/g"), ("/./g", "http://a/g"), ("g.", "http://a/b/c/g."), ("./../g", "http://a/b/g"),
        ("g;x=1/../y", "http://a/b/c/y"),
    ])
    func uriReferencesResolvePerRFC3986(_ reference: String, _ expected: String) {
        #expect(URIReference("http://a/b/c/d;p?q").resolving(reference).description == expected)
    }

    @Test func urnBasesResolveFragments() {
        let base = URIReference("urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed")
        #expect(base.resolving("#/$defs/bar").description == "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#/$defs/bar")
    }
}
