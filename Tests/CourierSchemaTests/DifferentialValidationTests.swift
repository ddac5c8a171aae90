import CourierSchema
import CourierTestSupport
import Foundation
import Testing

/// Courier's validator against python-jsonschema on ~2,000 generated instances of 47 schemas (draft 2020-12
/// and draft-07): `Tests/Differential/generate.py` draws valid instances and near-misses with
/// hypothesis-jsonschema (derandomized, so every run sees the same cases), mutates them, adds hand-picked
/// edge cases, and records python-jsonschema's verdict on each. Courier must give the same verdict.
///
/// The Python comes from the venv `make test` installs (`.build/venv`, from
/// `Tests/Differential/requirements.txt`); `COURIER_PYTHON` names another interpreter. Without it the test
/// fails: a differential test that cannot run must not pass.
///
/// Deliberate differences: where python-jsonschema departs from the specification, the generator also judges
/// the instance with that keyword replaced by one that follows the specification, and Courier is held to
/// that verdict (`expected`; `python` keeps the library's own). These are the only ones:
///
/// - `multipleOf` with a fractional divisor (`deviation: "multipleOf"`). python-jsonschema divides binary
///   floats, so `{"multipleOf": 0.1}` rejects `0.3` (`0.3 / 0.1 == 2.9999999999999996`) and
///   `{"multipleOf": 1e-300}` accepts or rejects values by rounding. JSON Schema Validation 2020-12 §6.2.1
///   (draft-07 §6.2.1): "A numeric instance is valid only if division by this keyword's value results in an
///   integer" — a property of the numbers the JSON text spells, which Courier computes exactly.
/// - `pattern`, `patternProperties` and `propertyNames`' patterns (`deviation: "pattern"`).
///   python-jsonschema uses Python's `re`, where `\d` and `\w` match any Unicode digit or word character
///   (`"ab-١٢٣"` matches `^[a-z]{2,4}-\d{3}$`), `\s` also matches U+001C–U+001F and U+0085, `.` matches
///   `\r` and U+2028, and `$` matches before a final `\n` (`"ab-123\n"` matches). JSON Schema Core 2020-12
///   §6.4 (draft-07 Validation §4.3): patterns follow the ECMA-262 dialect, where `\d` is `[0-9]`, `\w` is
///   `[A-Za-z0-9_]`, `\s` is WhiteSpace ∪ LineTerminator, `.` excludes every LineTerminator, and `$` without
///   the `m` flag matches only at the end of the input.
/// - `format: "date-time"`, asserted, on a leap second (`deviation: "leapSecond"`). python-jsonschema's
///   checker (rfc3339-validator) rejects every second of 60, so it rejects `"1990-12-31T15:59:60-08:00"`.
///   JSON Schema Validation 2020-12 §7.3.1 (draft-07 §7.3.1) defers to RFC 3339, whose §5.6 allows
///   `time-second` 60 and §5.7 places it on the last minute of a UTC day; JSON-Schema-Test-Suite's
///   optional/format/date-time.json holds the same, and Courier passes it.
/// - `format: "date-time"`, asserted, with a final newline (`deviation: "dateTimeNewline"`).
///   python-jsonschema accepts `"1985-04-12T23:20:50.52Z\n"`: rfc3339-validator's expression ends in `$`,
///   which in Python also matches before a final `\n`. RFC 3339 §5.6's `date-time` grammar has no such
///   character, so the string is not a date-time (Validation 2020-12 §7.3.1, draft-07 §7.3.1).
@Suite struct DifferentialValidationTests {
    /// The interpreter of the venv `make test` installs, or `COURIER_PYTHON`.
    static var python: String {
        if let configured = ProcessInfo.processInfo.environment["COURIER_PYTHON"], !configured.isEmpty {
            return configured
        }
        return Repository.root.appendingPathComponent(".build/venv/bin/python").path
    }

    /// The deviations of python-jsonschema from the specification that the suite's comment documents.
    static let documentedDeviations: Set<String> = ["multipleOf", "pattern", "leapSecond", "dateTimeNewline"]

    /// Runs `Tests/Differential/generate.py` and returns its cases.
    static func generateCases() throws -> Value {
        let python = Self.python
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            """
            no Python for the differential test at \(python): run `make test` (it installs the venv with \
            python-jsonschema and hypothesis-jsonschema under .build/venv), or set COURIER_PYTHON
            """)
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-differential-\(ProcessInfo.processInfo.processIdentifier).json")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            Repository.root.appendingPathComponent("Tests/Differential/generate.py").path, output.path,
        ]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let diagnostics = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let message = String(decoding: diagnostics, as: UTF8.self)
        try #require(
            process.terminationStatus == 0,
            "generate.py exited with \(process.terminationStatus) (run `make test` to install its venv):\n\(message)")
        print("differential: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        return try JSONCodec().decode(Data(contentsOf: output), hints: CodingHints())
    }

    static func text(_ value: Value) -> String {
        (try? JSONCodec().encode(value, hints: CodingHints())).map { String(decoding: $0, as: UTF8.self) }
            ?? "\(value)"
    }

    @Test func courierAgreesWithPythonJSONSchema() throws {
        let cases = try Self.generateCases()
        let schemas = try #require(cases["schemas"]?.arrayValue)
        var disagreements: [String] = []
        var deviations: [String: Int] = [:]
        var checked = 0
        for entry in schemas {
            let name = try #require(entry["name"]?.stringValue)
            let schemaValue = try #require(entry["schema"])
            var options = CompiledSchema.Options()
            options.assertFormat = entry["assertFormat"]?.boolValue ?? false
            var registry = SchemaRegistry()
            let uri = try registry.add(schemaValue, uri: "https://courier.example/differential/\(name).json")
            let schema = try registry.compile(id: uri, options: options)
            for instanceCase in try #require(entry["instances"]?.arrayValue) {
                let instance = try #require(instanceCase["instance"])
                let expected: Bool = try #require(instanceCase["expected"]?.boolValue as Bool?)
                let python: Bool = try #require(instanceCase["python"]?.boolValue as Bool?)
                for deviation in (instanceCase["deviation"]?.stringValue ?? "").split(separator: ",") {
                    deviations[String(deviation), default: 0] += 1
                    #expect(Self.documentedDeviations.contains(String(deviation)), "undocumented deviation \(deviation)")
                }
                let valid = schema.isValid(instance)
                let violations = schema.validate(instance)
                if case .gaveUp(let limit, _) = schema.validationOutcome(instance) {
                    disagreements.append("\(name) \(Self.text(instance)): Courier gave up at a limit (\(limit))")
                }
                checked += 1
                if valid != expected || violations.isEmpty != valid {
                    let source = instanceCase["source"]?.stringValue ?? "?"
                    disagreements.append(
                        "\(name) [\(source)] \(Self.text(instance)): Courier isValid \(valid), validate "
                            + "\(violations.isEmpty ? "valid" : "invalid: \(violations[0].message)"); expected "
                            + "\(expected) (python-jsonschema \(python))\n    schema \(Self.text(schemaValue))")
                }
            }
        }
        print("differential: \(checked) instances of \(schemas.count) schemas, \(disagreements.count) disagreements, "
              + "documented python-jsonschema deviations \(deviations.sorted { $0.key < $1.key })")
        #expect(schemas.count >= 30 && checked >= 1_000, "the generator produced too few cases")
        let listed = disagreements.prefix(40).joined(separator: "\n  ")
        #expect(disagreements.isEmpty, "\(disagreements.count) verdicts differ from python-jsonschema's:\n  \(listed)")
    }
}
