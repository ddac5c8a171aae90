import CourierSchema
import Foundation
import Testing

/// The catastrophic patterns the attack on the validator used, through every keyword that matches a
/// pattern (`pattern`, `patternProperties`, `propertyNames`, `additionalProperties` beside
/// `patternProperties`, `format: regex`): each answers correctly at once, and the backtracking-only ones
/// (backreferences) give up with the enumerated error instead of running away. No clock: the suite's time
/// limit is the hang guard.
@Suite(.timeLimit(.minutes(10))) struct HostilePatternSchemaTests {
    /// A catastrophic pattern, a string that used to hang the old engine, and whether it matches.
    struct Case: Sendable, CustomTestStringConvertible {
        var pattern: String
        var text: String
        var matches: Bool
        var testDescription: String { "\(pattern) on \(text.count) characters" }
    }

    static let email =
        #"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$"#

    static let cases: [Case] = [
        Case(pattern: "^(a+)+$", text: String(repeating: "a", count: 36) + "!", matches: false),
        Case(pattern: "^(a+)+$", text: String(repeating: "a", count: 5_000), matches: true),
        Case(pattern: "(a|aa)*b", text: String(repeating: "a", count: 5_000), matches: false),
        Case(pattern: "a*a*a*a*a*a*a*a*c", text: String(repeating: "a", count: 5_000), matches: false),
        Case(pattern: email, text: String(repeating: "a", count: 40) + "!", matches: false),
        Case(pattern: email, text: "first.last_name@example.com", matches: true),
        Case(pattern: #"\s*\s*$"#, text: String(repeating: " ", count: 20_000) + "x", matches: true),
        Case(pattern: #"^\s*\s*$"#, text: String(repeating: " ", count: 20_000) + "x", matches: false),
        Case(pattern: "(x+x+)+y", text: String(repeating: "x", count: 5_000), matches: false),
        Case(pattern: "(.*a){20}", text: String(repeating: "a", count: 19) + String(repeating: "b", count: 5_000), matches: false),
    ]

    private func compile(_ schema: Value) throws -> CompiledSchema {
        var registry = SchemaRegistry()
        let uri = try registry.add(schema, uri: "https://courier.example/t/hostile-pattern.json")
        var options = CompiledSchema.Options()
        options.assertFormat = true
        return try registry.compile(id: uri, options: options)
    }

    @Test(arguments: cases)
    func everyPatternKeywordAnswersAtOnce(_ c: Case) throws {
        let pattern = Value.string(c.pattern)
        let text = Value.string(c.text)
        #expect(try compile(["pattern": pattern]).isValid(text) == c.matches)
        // A member whose name matches must hold a string; others must hold integers.
        let properties = try compile(["patternProperties": .object([c.pattern: ["type": "string"]]),
                                      "additionalProperties": ["type": "integer"]])
        let member = Value.object([c.text: "text"])
        #expect(properties.isValid(member) == c.matches)
        #expect(try compile(["propertyNames": ["pattern": pattern]]).isValid(member) == c.matches)
        #expect(try compile(["format": "regex"]).isValid(pattern))
    }

    @Test func backreferencesThatExhaustTheBudgetGiveUpInEveryKeyword() throws {
        let pattern: Value = #"^(a+)+\1b$"#
        let text = String(repeating: "a", count: 40)
        for schema: Value in [
            ["pattern": pattern],
            ["propertyNames": ["pattern": pattern]],
            ["patternProperties": .object([#"^(a+)+\1b$"#: true]), "additionalProperties": false],
        ] {
            let compiled = try compile(schema)
            let value: Value = schema["pattern"] == nil ? .object([text: 1]) : .string(text)
            let error = #expect(throws: CourierError.self) { try compiled.check(value) }
            #expect(error?.code == .validationLimitExceeded, "\(schema)")
            #expect(!compiled.isValid(value))
        }
    }

    @Test(arguments: [3_000, 100_000])
    func deeplyNestedPatternsCompileWithoutOverflowingTheStack(_ depth: Int) throws {
        let source = String(repeating: "(", count: depth) + "a" + String(repeating: ")", count: depth)
        // Either compiled (it fits the program limit) or refused as an invalid schema: never a crash.
        do {
            let schema = try compile(["pattern": .string(source)])
            #expect(schema.isValid("xa"))
            #expect(!schema.isValid("b"))
        } catch let error as CourierError {
            #expect(error.code == .invalidSchema)
        }
        let formats = try compile(["format": "regex"])
        _ = formats.isValid(.string(source))
        let unbalanced = String(repeating: "(", count: depth)
        #expect(!formats.isValid(.string(unbalanced)))
    }

    /// Format checks on strings built to make the standard library's character steps or a per-character
    /// rescan quadratic: two megabytes of flags (regional indicators: a step back over a run of them reads the
    /// whole run) for `email`, and of katakana middle dots (each once checked the whole label for a Japanese
    /// character) for `idn-hostname` and `idn-email`. Quadratic, each took many minutes; the suite's limit is
    /// the clock.
    @Test func formatChecksStayLinearOnHostileStrings() throws {
        let flags = String(repeating: "\u{1F1E6}", count: 500_000)
        let dots = String(repeating: "\u{30FB}", count: 700_000) + "\u{3042}"
        let cases: [(format: String, text: String, valid: Bool)] = [
            ("email", flags, false),
            ("email", "a@" + flags, false),
            ("email", flags + "@example.com", false),
            ("idn-email", "a@" + flags, false),
            ("idn-hostname", dots, false),  // a label of 2 MB is far over 63 bytes
            ("idn-email", "a@" + dots, false),
            // The answers on ordinary strings are unchanged.
            ("email", "first.last@example.com", true),
            ("email", "a@b@example.com", false),
            ("idn-email", "\u{5B9E}\u{4F8B}@\u{6D4B}\u{8BD5}.example", true),
            ("idn-hostname", "\u{30FB}\u{3042}", true),
            ("idn-hostname", "\u{30FB}a", false),
        ]
        for (format, text, valid) in cases {
            let schema = try compile(["format": .string(format)])
            #expect(schema.isValid(.string(text)) == valid, "\(format) on \(text.prefix(20))…")
        }
    }
}
