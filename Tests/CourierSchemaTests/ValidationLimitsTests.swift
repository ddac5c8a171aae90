@testable import CourierSchema
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// Validation stays bounded whatever the schema and the value: the shapes that made the evaluator
/// exponential (applicator fan-out over `$ref`s, recursive schemas with fan-out over deep values), exact
/// `multipleOf` with any divisor and exponent, the limits of ``CompiledSchema/Options`` and how giving up
/// surfaces in each API. No test measures time: the suite's time limit is the only clock, and each shape
/// here would take longer than the age of the universe without memoisation.
@Suite(.timeLimit(.minutes(10))) struct ValidationLimitsTests {
    /// Compiles `schema` (as a value) with `options`.
    static func compile(_ schema: Value, options: CompiledSchema.Options = .init()) throws -> CompiledSchema {
        var registry = SchemaRegistry()
        let uri = try registry.add(schema, uri: "https://courier.example/t/limits.json")
        return try registry.compile(id: uri, options: options)
    }

    /// Compiles `json` with `options`.
    static func compile(json: String, options: CompiledSchema.Options = .init()) throws -> CompiledSchema {
        try compile(try SchemaTestSupport.json(json), options: options)
    }

    /// `{"c": {"c": … leaf …}}`, `depth` levels deep.
    static func chain(depth: Int, leaf: Value) -> Value {
        var value = leaf
        for _ in 0..<depth { value = ["c": value] }
        return value
    }

    /// Expects `schema` to give up on `value` at the limit named `limit`, in every API.
    static func expectGivesUp(_ schema: CompiledSchema, _ value: Value, naming limit: String) {
        let violations = schema.validate(value)
        #expect(violations.last?.keyword == CompiledSchema.limitKeyword)
        #expect(violations.last?.message.contains(limit) == true, "\(violations.last?.message ?? "none")")
        #expect(!schema.isValid(value))
        let error = #expect(throws: CourierError.self) { try schema.check(value) }
        #expect(error?.code == .validationLimitExceeded)
        #expect(error?.detail?.contains(limit) == true, "\(error?.detail ?? "no detail")")
        guard case .gaveUp(let detail, let found) = schema.validationOutcome(value) else {
            Issue.record("expected the validation to give up")
            return
        }
        #expect(detail.contains(limit))
        #expect(!found.contains { $0.keyword == CompiledSchema.limitKeyword })
    }

    // MARK: exponential shapes, now polynomial

    /// `node = {anyOf|allOf|oneOf: [fanOut branches, each {"properties": {"c": {"$ref": node}}}]}` over a
    /// chain 40 deep: fanOut^40 evaluations without memoisation.
    @Test(arguments: 3...8)
    func recursiveFanOutOverDeepValues(fanOut: Int) throws {
        let branches: [Value] = (0..<fanOut).map { i in
            ["properties": ["c": ["$ref": "#/$defs/node"]], "title": .string("branch \(i)")]
        }
        for applicator in ["anyOf", "allOf"] {
            let schema = try Self.compile(
                ["$defs": ["node": ["type": "object", applicator: .array(branches)]], "$ref": "#/$defs/node"])
            let valid = Self.chain(depth: 40, leaf: [:])
            let invalid = Self.chain(depth: 40, leaf: ["c": 5])
            #expect(schema.isValid(valid))
            #expect(schema.validate(valid).isEmpty)
            #expect(!schema.isValid(invalid))
            let violations = schema.validate(invalid)
            #expect(!violations.isEmpty)
            #expect(!violations.contains { $0.keyword == CompiledSchema.limitKeyword })
            let error = #expect(throws: CourierError.self) { try schema.check(invalid) }
            #expect(error?.code == .schemaViolation)
            if case .invalid = schema.validationOutcome(invalid) {} else { Issue.record("\(applicator): expected invalid") }
        }
        // oneOf: the branches differ by a const at the leaf, so exactly one matches at every level.
        let distinct: [Value] = (0..<fanOut).map { i in
            ["anyOf": [["properties": ["c": ["$ref": "#/$defs/node"]], "required": ["c"]],
                       ["properties": ["v": ["const": .int(Int64(i))]], "required": ["v"]]]]
        }
        let oneOf = try Self.compile(["$defs": ["node": ["oneOf": .array(distinct)]], "$ref": "#/$defs/node"])
        #expect(!oneOf.isValid(Self.chain(depth: 40, leaf: ["v": 0])))  // every branch matches through "c"
        #expect(oneOf.isValid(["v": 1]))
        #expect(!oneOf.isValid(Self.chain(depth: 40, leaf: ["v": .int(Int64(fanOut))])))
    }

    /// The same fan-out through `$dynamicRef` (memoised per dynamic scope): an extending schema
    /// overrides the anchor, so the answers depend on the scope and must not be shared across scopes.
    @Test(arguments: 3...8)
    func dynamicReferenceFanOut(fanOut: Int) throws {
        var registry = SchemaRegistry()
        let branches: [Value] = (0..<fanOut).map { i in
            ["properties": ["c": ["$dynamicRef": "#node"]], "title": .string("branch \(i)")]
        }
        try registry.add(
            ["$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://courier.example/t/tree.json",
             "$dynamicAnchor": "node", "type": "object", "anyOf": .array(branches)] as Value)
        let strict = try registry.add(
            ["$schema": "https://json-schema.org/draft/2020-12/schema",
             "$id": "https://courier.example/t/strict-tree.json", "$dynamicAnchor": "node",
             "$ref": "tree.json", "unevaluatedProperties": false] as Value)
        let tree = try registry.compile(id: "https://courier.example/t/tree.json")
        let strictTree = try registry.compile(id: strict)
        let plain = Self.chain(depth: 40, leaf: [:])
        let extra = Self.chain(depth: 40, leaf: ["extra": 1])
        #expect(tree.isValid(plain))
        #expect(tree.isValid(extra))
        #expect(strictTree.isValid(plain))
        #expect(!strictTree.isValid(extra))  // the strict node applies at every level, the leaf included
        #expect(strictTree.validate(extra).contains { $0.keyword == "unevaluatedProperties" })
        #expect(!tree.isValid(Self.chain(depth: 40, leaf: 5)))
    }

    /// `d0 … d30`, each an applicator over two references to the next: 2^30 evaluations without
    /// memoisation, in both the reporting and the quick mode.
    @Test(arguments: ["allOf", "anyOf", "oneOf"])
    func applicatorsOverReferenceChains30Deep(_ applicator: String) throws {
        var defs = Value.Object()
        for i in 0..<30 {
            let next: Value = ["$ref": .string("#/$defs/d\(i + 1)")]
            // oneOf needs exactly one match: the reference and its negation.
            let list: [Value] = applicator == "oneOf" ? [next, ["not": next]] : [next, next]
            defs["d\(i)"] = [applicator: .array(list)]
        }
        defs["d30"] = ["type": "integer"]
        let schema = try Self.compile(["$defs": .object(defs), "$ref": "#/$defs/d0"])
        switch applicator {
        case "oneOf":
            // At d29 exactly one of "integer" and "not integer" holds; above, exactly one of true and false.
            for value: Value in [1, "x", [1, 2]] {
                #expect(schema.isValid(value))
                #expect(schema.validate(value).isEmpty)
            }
        default:
            #expect(schema.isValid(7))
            #expect(schema.validate(7).isEmpty)
            #expect(!schema.isValid("x"))
            #expect(!schema.validate("x").isEmpty)
            let error = #expect(throws: CourierError.self) { try schema.check("x") }
            #expect(error?.code == .schemaViolation)
        }
    }

    /// The same chain with annotations: `unevaluatedProperties` at the top must see what the bottom of
    /// every path evaluated, memoised results included.
    @Test func annotationsThroughMemoisedReferenceChains() throws {
        var defs = Value.Object()
        for i in 0..<30 {
            let next: Value = ["$ref": .string("#/$defs/d\(i + 1)")]
            defs["d\(i)"] = ["anyOf": [next, next, ["properties": ["b": true]]]]
        }
        defs["d30"] = ["properties": ["a": ["type": "integer"]]]
        let schema = try Self.compile(
            ["$defs": .object(defs), "$ref": "#/$defs/d0", "unevaluatedProperties": false])
        #expect(schema.isValid(["a": 1]))
        #expect(schema.isValid(["a": 1, "b": 2]))
        #expect(!schema.isValid(["a": 1, "z": 2]))
        #expect(schema.validate(["a": 1, "z": 2]).map(\.keyword) == ["unevaluatedProperties"])
        #expect(!schema.isValid(["a": "one"]))  // d30 fails: only "b" is evaluated (by the third branch)
    }

    /// `unevaluatedProperties` in a recursive node whose `anyOf` must evaluate every branch (annotations
    /// are collected from all that match), 300 levels deep.
    @Test func unevaluatedPropertiesNestedDeep() throws {
        let schema = try Self.compile(json: #"""
            {"$defs": {"node": {
                "anyOf": [
                    {"properties": {"c": {"$ref": "#/$defs/node"}}},
                    {"properties": {"c": {"$ref": "#/$defs/node"}, "x": true}},
                    {"properties": {"c": {"$ref": "#/$defs/node"}, "y": true}}
                ],
                "unevaluatedProperties": false}},
             "$ref": "#/$defs/node"}
            """#)
        // Under ThreadSanitizer, whose frames are several times larger, the stack guard would rightly give
        // up first on a concurrency-pool thread: a shallower chain there.
        let depth = TestRun.underThreadSanitizer ? 80 : 300
        #expect(schema.isValid(Self.chain(depth: depth, leaf: ["x": 1, "y": 2])))
        #expect(!schema.isValid(Self.chain(depth: depth, leaf: ["x": 1, "z": 2])))
        // The leaf fails, so every anyOf above fails and, at the root, its annotations are dropped: "c"
        // is reported unevaluated there too.
        let violations = schema.validate(Self.chain(depth: depth, leaf: ["z": 2]))
        #expect(violations.map(\.keyword) == ["anyOf", "unevaluatedProperties"])
        #expect(violations.map(\.instanceLocation) == ["", ""])  // unevaluatedProperties: false reports at the object
    }

    /// `if`/`then`/`else` and `dependentSchemas` chains over references, 30 deep.
    @Test func conditionalAndDependentChains() throws {
        var conditional = Value.Object()
        var dependent = Value.Object()
        for i in 0..<30 {
            let next: Value = ["$ref": .string("#/$defs/d\(i + 1)")]
            conditional["d\(i)"] = ["if": next, "then": next, "else": ["not": next]]
            dependent["d\(i)"] = ["dependentSchemas": ["a": next, "b": next, "c": next]]
        }
        conditional["d30"] = ["minimum": 0]
        dependent["d30"] = ["required": ["a"]]
        let ifThenElse = try Self.compile(["$defs": .object(conditional), "$ref": "#/$defs/d0"])
        #expect(ifThenElse.isValid(5))
        #expect(ifThenElse.isValid(-5))  // else: not(-5 ≥ 0) holds, and so on up
        let dependentSchemas = try Self.compile(["$defs": .object(dependent), "$ref": "#/$defs/d0"])
        #expect(dependentSchemas.isValid(["a": 1, "b": 2, "c": 3]))
        #expect(!dependentSchemas.isValid(["b": 2, "c": 3]))
        #expect(!dependentSchemas.validate(["b": 2, "c": 3]).isEmpty)
    }

    /// A name checked by `propertyNames` is a location of its own: a memoised result for the object
    /// must not answer for its names.
    @Test func propertyNamesAreTheirOwnLocation() throws {
        let schema = try Self.compile(json: #"""
            {"$defs": {"t": {"type": "object"}},
             "allOf": [{"$ref": "#/$defs/t"}, {"propertyNames": {"$ref": "#/$defs/t"}}]}
            """#)
        #expect(schema.isValid(Value.object(Value.Object())))
        #expect(!schema.isValid(["a": 1]))
    }

    // MARK: large values

    /// `uniqueItems` over 100,000 items, including 2^17 spellings of one canonically equivalent string
    /// (Swift's `String` hashes them alike; JSON compares code points), with and without a duplicate.
    @Test func uniqueItemsOverAHundredThousandItems() throws {
        let schema = try Self.compile(["uniqueItems": true])
        let numbers = (0..<100_000).map { Value.int(Int64($0)) }
        #expect(schema.isValid(.array(numbers)))
        #expect(!schema.isValid(.array(numbers + [.double(99_999.0)])))
        let objects = (0..<100_000).map { i -> Value in ["id": .int(Int64(i)), "name": .string("n\(i % 7)")] }
        #expect(schema.isValid(.array(objects)))
        #expect(!schema.isValid(.array(objects + [["name": "n3", "id": 52]])))
        let spellings = (0..<100_000).map { i -> Value in
            var text = ""
            for bit in 0..<17 { text += (i >> bit) & 1 == 0 ? "\u{E9}" : "e\u{301}" }
            return .string(text)
        }
        #expect(schema.isValid(.array(spellings)))
        let violations = schema.validate(.array(spellings + [spellings[12_345]]))
        #expect(violations.first?.message.contains("items 12345 and 100000 are equal") == true)
    }

    /// `contains` with `minContains`/`maxContains` over 100,000 items, through a memoised reference.
    @Test func containsOverLargeArrays() throws {
        let schema = try Self.compile(json: #"""
            {"$defs": {"even": {"multipleOf": 2}},
             "allOf": [{"contains": {"$ref": "#/$defs/even"}, "minContains": 50000, "maxContains": 50000},
                       {"contains": {"$ref": "#/$defs/even"}, "minContains": 50000}]}
            """#)
        let items = (0..<100_000).map { Value.int(Int64($0)) }
        #expect(schema.isValid(.array(items)))
        #expect(!schema.isValid(.array(items + [2])))
        #expect(schema.validate(.array(items + [2])).map(\.keyword) == ["maxContains"])
    }

    /// A legitimate large validation (200 definitions referring to each other, 20,000 records) stays far
    /// within the default limits.
    @Test func legitimateLargeValidationDoesNotTrip() throws {
        var defs = Value.Object()
        for i in 0..<200 {
            defs["record\(i)"] = [
                "type": "object", "required": ["id", "name"],
                "properties": [
                    "id": ["$ref": "#/$defs/id"], "name": ["type": "string", "minLength": 1, "pattern": "^[a-z0-9 ]+$"],
                    "score": ["type": "number", "minimum": 0, "multipleOf": 0.01],
                    "tags": ["type": "array", "items": ["type": "string"], "uniqueItems": true],
                    "next": i < 199 ? ["$ref": .string("#/$defs/record\(i + 1)")] : ["type": "null"],
                ],
                "additionalProperties": false,
            ]
        }
        defs["id"] = ["type": "integer", "minimum": 1]
        let schema = try Self.compile(["$defs": .object(defs), "type": "array", "items": ["$ref": "#/$defs/record0"]])
        let records = (0..<20_000).map { i -> Value in
            ["id": .int(Int64(i + 1)), "name": .string("record \(i)"), "score": .double(Double(i % 1000) / 100),
             "tags": ["a", "b", .string("t\(i)")],
             "next": ["id": 1, "name": "x", "next": ["id": 2, "name": "y"]]]
        }
        #expect(schema.isValid(.array(records)))
        #expect(schema.validate(.array(records)).isEmpty)
        try schema.check(.array(records))
        guard case .valid = schema.validationOutcome(.array(records)) else {
            Issue.record("expected valid")
            return
        }
    }

    // MARK: multipleOf

    /// Exact answers (confirmed with Python's `fractions.Fraction`), for lexical numbers of any size and
    /// exponent, tiny and huge divisors, divisors with large factors of 2 and 5, and large coprime ones.
    @Test(arguments: [
        ("0.0075", "0.0001", true), ("1e308", "1e-300", true), ("1e-300", "1e300", false),
        ("7e300", "1e-300", true), ("1e300", "2.5e-3", true), ("1", "0.3333", false),
        ("123456789012345678901234567890123456789", "3", true),
        ("0.5", "9.094947017729282379150390625e-13", true), ("1e-13", "9.094947017729282379150390625e-13", false),
        ("1e-12", "9.094947017729282379150390625e-13", false), ("1.7976931348623157e308", "1e-300", true),
        ("5e-324", "1e-300", false), ("5e-324", "1e-324", true), ("4.9e-324", "1e-325", true),
        ("3.5", "0.7", true), ("0.07", "0.7", false), ("1e-20", "3e-21", false), ("9e-21", "3e-21", true),
        ("246913578024691357802469135780246913578", "123456789012345678901234567890123456789", true),
        ("246913578024691357802469135780246913579", "123456789012345678901234567890123456789", false),
        ("3802951800684688204490109616128000000", "1267650600228229401496703205376", true),
        ("633825300114114700748351602688", "1267650600228229401496703205376", false),
        ("1e100", "1e-100", true), ("1e-100", "3e-101", false), ("6e-101", "3e-101", true),
        ("7e100000", "7", true), ("1e100000", "7", false), ("1e100000", "1e-100000", true),
        ("3e-100000", "2e-100000", false), ("1e100000", "2.5e-3", true),
        ("1e100000", "1267650600228229401496703205376", true), ("1e99", "1267650600228229401496703205376", false),
        ("1e100", "1267650600228229401496703205376", true),
        ("123456789012345678901234567890123456789e100000", "123456789012345678901234567890123456789e-5", true),
        ("1e100000", "123456789012345678901234567890123456789", false), ("14e99999", "7e-99999", true),
        ("-0.02", "0.01", true), ("0", "1e-300", true), ("-1e400", "4e399", false), ("-12e400", "4e399", true),
    ])
    func multipleOfIsExactForAnyDivisor(_ instance: String, _ divisor: String, _ expected: Bool) throws {
        let schema = try Self.compile(["multipleOf": .number(divisor)])
        #expect(schema.isValid(.number(instance)) == expected, "\(instance) multipleOf \(divisor)")
        #expect(schema.validate(.number(instance)).isEmpty == expected)
    }

    /// Decoded doubles divide by their shortest spelling, like lexical numbers.
    @Test func multipleOfWithDoubles() throws {
        let tiny = try Self.compile(["multipleOf": .number("1e-300")])
        let huge = try Self.compile(["multipleOf": .number("1e300")])
        #expect(tiny.isValid(.double(1e308)))
        #expect(tiny.isValid(.double(0.1)))
        #expect(!tiny.isValid(.double(.leastNonzeroMagnitude)))  // spelled 5e-324
        #expect(huge.isValid(.double(1e308)))
        #expect(!huge.isValid(.double(1e299)))
        // Many numbers against tiny and huge divisors.
        let values = (0..<20_000).map { Value.double(Double($0) * 1.25e-3) }
        #expect(try Self.compile(["items": ["multipleOf": .number("1e-300")]]).isValid(.array(values)))
        let violations = try Self.compile(["items": ["multipleOf": .number("1e300")]]).validate(.array(values))
        #expect(violations.count == 100)  // the default maximumViolations; 0 is the only multiple
        #expect(!violations.contains { $0.keyword == CompiledSchema.limitKeyword })
    }

    /// A long division beyond ``CompiledSchema/Options/maximumNumberDigits`` gives up; the trivially
    /// decided cases still answer.
    @Test func multipleOfBeyondTheDigitLimitGivesUp() throws {
        var options = CompiledSchema.Options()
        options.maximumNumberDigits = 30
        let divisor = "123456789012345678901234567890123456789"  // 39 digits, coprime to 10
        let schema = try Self.compile(["multipleOf": .number(divisor)], options: options)
        Self.expectGivesUp(schema, .number(divisor + "1"), naming: "maximumNumberDigits")
        #expect(!schema.isValid(.number("1e-5")))  // smaller exponent than the divisor's: never a multiple
        #expect(schema.isValid(0))
        // Default limit: a 2,000-digit instance over a 40-digit divisor exceeds 1,000 digits.
        let wide = String(repeating: "7", count: 2_000)
        let defaults = try Self.compile(["multipleOf": .number(divisor)])
        Self.expectGivesUp(defaults, .number(wide), naming: "maximumNumberDigits")
        // A divisor made of 2s and 5s needs no long division: any length works.
        let power = try Self.compile(["multipleOf": .number("1267650600228229401496703205376")])
        #expect(power.isValid(.number(wide + "e100")))
        #expect(!power.isValid(.number(wide)))
    }

    // MARK: the limits

    @Test func defaultsAreDocumented() {
        let options = CompiledSchema.Options()
        #expect(options.maximumSteps == 20_000_000)
        #expect(options.maximumSubschemaEvaluations == 5_000_000)
        #expect(options.maximumReferenceDepth == 512)
        #expect(options.maximumDepth == 20_000)
        #expect(options.maximumNumberDigits == 1_000)
        #expect(CompiledSchema.limitKeyword == "$limit")
    }

    @Test func stepLimitTripsWithTheEnumeratedError() throws {
        var options = CompiledSchema.Options()
        options.maximumSteps = 1_000
        let schema = try Self.compile(["type": "array", "items": ["type": "integer", "minimum": 0]], options: options)
        #expect(schema.isValid(.array((0..<100).map { .int($0) })))
        let many = Value.array((0..<5_000).map { .int(Int64($0)) })
        Self.expectGivesUp(schema, many, naming: "maximumSteps")
        // The give-up violation is located where the budget ran out.
        let last = try #require(schema.validate(many).last)
        #expect(last.instanceLocation.hasPrefix("/"))
        #expect(last.message.contains("validation gave up here"))
    }

    /// A backreference compares a whole capture: each byte compared counts as a step, so `^(a+)\1$` on a long
    /// run of `a` runs out of its budget instead of going quadratic within it (120 KB used to take a second).
    @Test func backreferenceComparisonsCountAgainstTheBudget() throws {
        let schema = try Self.compile(json: #"{"pattern": "^(a+)\\1$"}"#)
        #expect(schema.isValid("aaaa"))
        #expect(!schema.isValid("aaab"))
        let long = Value.string(String(repeating: "a", count: 20_000) + "b")
        Self.expectGivesUp(schema, long, naming: "matching budget")
    }

    /// Each test has a budget of its own; across an instance the steps also count against `maximumSteps`, so
    /// many strings cannot spend a budget each (ten strings of 120 KB took 10 s).
    @Test func backtrackingStepsAddUpAcrossTheInstance() throws {
        var options = CompiledSchema.Options()
        options.maximumSteps = 100_000
        let schema = try Self.compile(json: #"{"items": {"pattern": "^(a+)\\1$"}}"#, options: options)
        // Each string is well within the budget of one test (about 2,000 steps for 60 bytes): a few pass.
        let string = Value.string(String(repeating: "a", count: 60))
        #expect(schema.isValid(.array(Array(repeating: string, count: 10))))
        // 10,000 of them add up past maximumSteps (a step per 32 backtracking steps).
        Self.expectGivesUp(schema, .array(Array(repeating: string, count: 10_000)), naming: "maximumSteps")
    }

    /// A large pattern that no automaton can run within its size limit goes to the Pike VM, whose work is linear
    /// but, for `(a{1,100}){1,100}b`, thousands of steps per byte (100 KB took 10 s): it counts too.
    @Test func pikeVMWorkCountsAgainstTheSteps() throws {
        var options = CompiledSchema.Options()
        options.maximumSteps = 100_000
        let schema = try Self.compile(json: #"{"pattern": "(a{1,100}){1,100}b"}"#, options: options)
        #expect(schema.isValid("aab"))
        #expect(!schema.isValid("aa"))
        Self.expectGivesUp(schema, .string(String(repeating: "a", count: 3_000)), naming: "maximumSteps")
    }

    @Test func invalidBeforeGivingUpStillGivesUp() throws {
        var options = CompiledSchema.Options()
        options.maximumSteps = 1_000
        let schema = try Self.compile(["items": ["type": "integer"]], options: options)
        let value = Value.array(["x"] + (0..<5_000).map { .int(Int64($0)) })
        let violations = schema.validate(value)
        #expect(violations.map(\.keyword) == ["type", CompiledSchema.limitKeyword])
        let error = #expect(throws: CourierError.self) { try schema.check(value) }
        #expect(error?.code == .validationLimitExceeded)
        #expect(error?.violations.count == 2)
        guard case .gaveUp(_, let found) = schema.validationOutcome(value) else {
            Issue.record("expected the validation to give up")
            return
        }
        #expect(found.map(\.keyword) == ["type"])
    }

    @Test func subschemaEvaluationLimit() throws {
        var options = CompiledSchema.Options()
        options.maximumSubschemaEvaluations = 500
        let schema = try Self.compile(["items": ["properties": ["a": ["type": "integer"]]]], options: options)
        Self.expectGivesUp(schema, .array((0..<1_000).map { _ in ["a": 1] }), naming: "maximumSubschemaEvaluations")
    }

    @Test func referenceDepthLimit() throws {
        var defs = Value.Object()
        for i in 0..<40 { defs["d\(i)"] = ["$ref": .string("#/$defs/d\(i + 1)")] }
        defs["d40"] = ["type": "integer"]
        let chain: Value = ["$defs": .object(defs), "$ref": "#/$defs/d0"]
        #expect(try Self.compile(chain).isValid(1))
        var options = CompiledSchema.Options()
        options.maximumReferenceDepth = 10
        Self.expectGivesUp(try Self.compile(chain, options: options), 1, naming: "maximumReferenceDepth")
        // References that move into the value start counting again: a recursive schema over a deep value.
        let recursive = try Self.compile(["items": ["$ref": "#"]], options: options)
        var deep: Value = []
        for _ in 0..<100 { deep = [deep] }
        #expect(recursive.isValid(deep))
    }

    @Test func depthLimit() throws {
        var options = CompiledSchema.Options()
        options.maximumDepth = 50
        let schema = try Self.compile(["items": ["$ref": "#"]], options: options)
        var deep: Value = []
        for _ in 0..<100 { deep = [deep] }
        Self.expectGivesUp(schema, deep, naming: "maximumDepth")
    }

    /// Past what the thread's stack holds, evaluation gives up (the stack guard, looked up lazily once
    /// evaluation nests 32 deep) instead of overflowing, whatever `maximumDepth` allows.
    @Test func theStackGuardStopsEvaluationBeforeTheStackRunsOut() async throws {
        var options = CompiledSchema.Options()
        options.maximumDepth = 10_000_000
        options.maximumReferenceDepth = 10_000_000
        let schema = try Self.compile(["items": ["$ref": "#"]], options: options)
        // A detached task: a cooperative thread, whose stack is far smaller than the main thread's.
        let outcome = await Task.detached { () -> (Bool, String?) in
            var deep: Value = []
            for _ in 0..<200_000 { deep = [deep] }
            let error = try? #require(throws: CourierError.self) { try schema.check(deep) }
            // Taken apart level by level, so that releasing the value does not recurse 200,000 deep.
            while case .array(let items) = deep, let inner = items.first { deep = inner }
            return (error?.code == .validationLimitExceeded, error?.detail)
        }.value
        #expect(outcome.0, "\(outcome.1 ?? "no error")")
        #expect(outcome.1?.contains("stack") == true)
    }

    /// With every violation collected, the reporting mode cannot reuse invalid results (each needs its
    /// violations): the exponential report is cut by the step limit instead of running away.
    @Test func unlimitedReportsGiveUpInsteadOfRunningAway() throws {
        var defs = Value.Object()
        for i in 0..<30 {
            let next: Value = ["$ref": .string("#/$defs/d\(i + 1)")]
            defs["d\(i)"] = ["allOf": [next, next]]
        }
        defs["d30"] = ["type": "integer"]
        var options = CompiledSchema.Options()
        options.maximumViolations = .max
        options.maximumSteps = 5_000
        let schema = try Self.compile(["$defs": .object(defs), "$ref": "#/$defs/d0"], options: options)
        #expect(!schema.isValid("x"))  // the quick mode reuses the invalid result: no limit
        Self.expectGivesUp(schema, "x", naming: "maximumSteps")
    }

    /// A transport that answers every request with the same JSON body.
    struct FixedTransport: Transport {
        /// The body of every answer.
        var json: String

        func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
            (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(json.utf8))
        }
    }

    /// The pipeline stage fails with `validationLimitExceeded`, naming the schema and the limit, and
    /// with `schemaViolation` for an answer that is merely invalid.
    @Test func stageThrowsValidationLimitExceeded() async throws {
        var registry = SchemaRegistry()
        let uri = try registry.add(["items": ["type": "integer"]], uri: "https://courier.example/t/stage.json")
        var options = CompiledSchema.Options()
        options.maximumSteps = 100
        let service = APIService(name: "api", baseURL: try #require(URL(string: "http://api.test")))
        let module = APIModule(
            name: "m", service: service,
            interceptors: [SchemaValidation(registry: registry, options: options, defaultSchema: uri)])
        let endpoint = Endpoint(name: "list", module: module, path: "/list")
        let many = "[" + (0..<1_000).map(String.init).joined(separator: ",") + "]"
        let error = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: FixedTransport(json: many)).send(endpoint)
        }
        #expect(error.code == .validationLimitExceeded)
        #expect(error.detail?.contains(uri) == true)
        #expect(error.detail?.contains("maximumSteps") == true, "\(error.detail ?? "")")
        let invalid = try await #require(throws: CourierError.self) {
            try await CourierClient(transport: FixedTransport(json: #"[1, "two"]"#)).send(endpoint)
        }
        #expect(invalid.code == .schemaViolation)
        let reply = try await CourierClient(transport: FixedTransport(json: "[1, 2]")).send(endpoint)
        #expect(reply.value == [1, 2])
    }
}
