/// A JSON Schema compiled once from a ``SchemaRegistry``, ready to validate any number of values.
///
/// Compilation resolves every `$ref` to a node, compiles every `pattern`, and fixes each node's keyword
/// list, so validating never parses or resolves anything again. A compiled schema is an immutable
/// value: share it freely across tasks.
///
/// ```swift
/// var registry = SchemaRegistry()
/// try registry.addDirectory(at: URL(fileURLWithPath: "Schemas"))
/// let users = try registry.compile(id: "https://courier.example/schemas/userlist.schema.json")
///
/// for violation in users.validate(response) {
///     print(violation.message)          // "data/users/3/age: -1 is less than the minimum of 0"
/// }
/// try users.check(response)             // throws CourierError(.schemaViolation) with all violations
/// ```
///
/// ## Bounded validation
///
/// Every validation is bounded, so a hostile value (or schema) cannot make it take exponential time or
/// memory: results of subschemas reached along several reference paths are memoised per instance
/// location (the `allOf`/`anyOf`/`oneOf` fan-out over `$ref`s that doubles at every level costs linear
/// time), `multipleOf` divides exactly on decimal digits without expanding exponents, patterns run on a
/// matcher with a budget, and the work left is counted against the limits in ``Options``:
///
/// | limit | default | counts |
/// | --- | --- | --- |
/// | ``Options/maximumSteps`` | 20,000,000 | keyword applications in one validation (and pattern matching steps, 32 to one) |
/// | ``Options/maximumSubschemaEvaluations`` | 5,000,000 | subschemas evaluated in one validation |
/// | ``Options/maximumReferenceDepth`` | 512 | `$ref`/`$dynamicRef` followed in a row at one instance location |
/// | ``Options/maximumDepth`` | 20,000 | nested subschema evaluations (and the thread's stack) |
/// | ``Options/maximumNumberDigits`` | 1,000 | significant digits in a `multipleOf` long division |
///
/// A validation that reaches a limit *gives up*: it can say neither "valid" nor "invalid", and every
/// API says so distinctly:
///
/// - ``validate(_:)`` returns the violations found so far followed by one whose keyword is
///   ``limitKeyword`` (`"$limit"`), located where it gave up, its message naming the limit. The list is
///   never empty, so a value that was not fully checked never passes for valid.
/// - ``isValid(_:)`` returns `false`.
/// - ``check(_:)`` throws `CourierError.Code.validationLimitExceeded` (not `schemaViolation`) whose
///   detail names the limit; the violations found before are attached.
/// - ``validationOutcome(_:)`` returns ``Outcome/gaveUp(limit:violations:)``, for callers that switch.
/// - The ``SchemaValidation`` stage throws `CourierError.Code.validationLimitExceeded`.
///
/// A pattern whose matching budget runs out (``Options`` has none: the budget belongs to the matcher)
/// gives up the same way.
public struct CompiledSchema: Sendable {
    /// How a schema is compiled and how much a validation reports.
    ///
    /// ```swift
    /// var options = CompiledSchema.Options()
    /// options.assertFormat = true            // "format": "email" now rejects "not-an-email"
    /// options.collectAllViolations = false   // stop at the first violation
    /// let schema = try registry.compile(id: uri, options: options)
    /// ```
    public struct Options: Sendable, Hashable {
        /// Whether `format` asserts (date-time, date, time, duration, email, idn-email, hostname,
        /// idn-hostname, ipv4, ipv6, uri, uri-reference, iri, iri-reference, uri-template, uuid,
        /// json-pointer, relative-json-pointer, regex). Default `false`: `format` is an annotation, as the
        /// specification says, unless a meta-schema enables the format-assertion vocabulary.
        public var assertFormat = false
        /// Whether validation goes on after the first violation to report them all (up to
        /// ``maximumViolations``). Default `true`.
        public var collectAllViolations = true
        /// The most violations one validation reports. Default 100.
        public var maximumViolations = 100
        /// The most keyword applications (one keyword of one subschema applied to one instance location)
        /// in one validation. Default 20,000,000: a 100,000-item array of objects with twenty validated
        /// properties each needs a few million; with memoisation, hostile reference fan-out needs far
        /// fewer than that before it is answered. A keyword's own linear work (`uniqueItems` over an array,
        /// `enum` over its list) counts once; a long `multipleOf` division counts its digit work / 256; a
        /// pattern counts its matching steps / 32 when its automaton cannot answer (backtracking steps, each
        /// test also having a budget of its own, or threads of the Pike VM), so a large pattern over many or
        /// long strings gives up rather than run for minutes.
        public var maximumSteps = 20_000_000
        /// The most subschema evaluations (a subschema applied to an instance location, memoised ones
        /// counted once) in one validation. Default 5,000,000.
        public var maximumSubschemaEvaluations = 5_000_000
        /// The most `$ref`/`$dynamicRef` followed in a row without moving into the instance (nested
        /// references at one instance location). Default 512: static reference cycles are refused when the
        /// schema is compiled, so only `$dynamicRef`s that loop at run time, or a chain of hundreds of
        /// references, reach it.
        public var maximumReferenceDepth = 512
        /// The deepest nesting of subschema evaluations (each member or item descended into adds at least
        /// one). Default 20,000; the evaluator also stops before the thread's stack runs out, whatever this
        /// says.
        public var maximumDepth = 20_000
        /// The most significant digits of a `multipleOf` divisor, and of an instance when the divisor
        /// without its factors 2 and 5 has more than 18 digits (a long division, costing the product of the
        /// two). Default 1,000. Other instances (any length, any exponent, such as `1e100000`) are divided
        /// exactly in one pass over their digits; a divisor's exponent (`1e-300`, `1e300`) costs nothing.
        /// Beyond the limit, a `multipleOf` that needs the division gives up; one decided without it (an
        /// instance of zero, or with a smaller exponent than the divisor's) still answers.
        public var maximumNumberDigits = 1_000

        /// The defaults.
        public init() {}
    }

    let program: SchemaProgram
    /// The options the schema was compiled with.
    public let options: Options

    init(program: SchemaProgram, options: Options) {
        self.program = program
        self.options = options
    }

    /// The URI the schema was compiled from.
    public var id: String { program.rootURI }

    /// The number of compiled schema locations (nodes), for diagnostics.
    public var nodeCount: Int { program.spans.count }

    /// The keyword of the violation ``validate(_:)`` ends with when the validation gave up at one of the
    /// limits in ``Options``: `"$limit"` (no schema keyword starts with `$` and asserts, so it cannot be
    /// mistaken for one).
    public static let limitKeyword = "$limit"

    /// How a validation ended: valid, invalid, or given up at a limit.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Outcome: Sendable, Hashable {
        /// The value is valid.
        case valid
        /// The value is invalid; the violations, in the order found (at least one).
        case invalid([SchemaViolation])
        /// The validation reached a limit before it could decide. `limit` says which (the detail of
        /// `CourierError.Code.validationLimitExceeded`); `violations` are those found before it (the
        /// value may well be invalid too), without the ``CompiledSchema/limitKeyword`` one.
        case gaveUp(limit: String, violations: [SchemaViolation])
    }

    /// Validates `value` and says how the validation ended; the one API that needs no convention to tell
    /// "invalid" from "gave up" (see "Bounded validation" in ``CompiledSchema``).
    public func validationOutcome(_ value: Value) -> Outcome {
        let (violations, exceeded) = run(value)
        if let exceeded {
            return .gaveUp(limit: exceeded, violations: violations.filter { $0.keyword != Self.limitKeyword })
        }
        return violations.isEmpty ? .valid : .invalid(violations)
    }

    /// Validates `value`; returns the violations (empty when the value is valid), in the order found.
    ///
    /// When the validation gave up at a limit of ``Options``, the last violation has the keyword
    /// ``limitKeyword`` (`"$limit"`), the location where it gave up and a message naming the limit; the
    /// value was not fully checked and must not be taken as valid.
    public func validate(_ value: Value) -> [SchemaViolation] {
        run(value).violations
    }

    /// Whether `value` is valid. Faster than ``validate(_:)`` for invalid values: it stops at the
    /// first failure and builds no messages. `false` too when the validation gave up at a limit of
    /// ``Options`` (use ``validationOutcome(_:)`` to tell the two apart).
    public func isValid(_ value: Value) -> Bool {
        var evaluator = SchemaEvaluator(program: program, limit: 1, options: options)
        var parts: EvaluatedParts? = nil
        let valid = evaluator.evaluate(program.root, value, report: false, parts: &parts)
        return valid && evaluator.exceeded == nil
    }

    /// Validates `value` and throws `CourierError.Code.schemaViolation` with every violation attached
    /// (`CourierError.violations`) when it is invalid. The error's coding path is the first
    /// violation's instance location.
    ///
    /// When the validation gave up at a limit of ``Options`` it throws
    /// `CourierError.Code.validationLimitExceeded` instead, whatever it found before: its detail names
    /// the limit, its coding path is where it gave up, and the violations (the ``limitKeyword`` one last)
    /// are attached.
    public func check(_ value: Value) throws {
        let (violations, exceeded) = run(value)
        if let exceeded {
            let place = violations.last?.instanceLocation ?? ""
            var error = CourierError(
                .validationLimitExceeded, detail: exceeded,
                context: CourierError.Context(codingPath: Self.path(fromPointer: place)))
            error.violations = violations
            throw error
        }
        guard let first = violations.first else { return }
        var error = CourierError(
            .schemaViolation,
            context: CourierError.Context(codingPath: Self.path(fromPointer: first.instanceLocation)))
        error.violations = violations
        throw error
    }

    /// One reporting validation: the violations (the ``limitKeyword`` one last when it gave up) and the
    /// limit it gave up at, if any.
    private func run(_ value: Value) -> (violations: [SchemaViolation], exceeded: String?) {
        // The limit violation needs room beside the ones collected.
        let collected = options.collectAllViolations ? options.maximumViolations : 1
        var evaluator = SchemaEvaluator(program: program, limit: collected, options: options)
        var parts: EvaluatedParts? = nil
        _ = evaluator.evaluate(program.root, value, report: true, parts: &parts)
        return (evaluator.violations, evaluator.exceeded)
    }

    static func path(fromPointer pointer: String) -> [PathComponent] {
        guard let tokens = JSONPointer.tokens(pointer) else { return [] }
        return tokens.map { token in
            if let index = Int(token), String(index) == token { return .index(index) }
            return .key(token)
        }
    }
}

extension MetaSchemas {
    static func parse(_ json: String) throws -> Value {
        try JSONCodec().decode(Array(json.utf8))
    }
}

extension CompiledSchema {
    /// The shape of the values this schema describes, for formats that cannot say it themselves (XML):
    /// pass it as `CodingHints.shape` so that `<age>42</age>` decodes as an integer and a single
    /// `<tags>` element as a one-element array.
    ///
    /// It follows `type`, `properties`, `additionalProperties`, `items`, `$ref` and `allOf`; a
    /// `type` list of one type and `"null"` gives an optional shape; anything else is `.any`.
    ///
    /// ```swift
    /// var hints = CodingHints()
    /// hints.shape = userList.shape
    /// let value = try xmlCodec.decode(body, hints: hints)
    /// ```
    public var shape: ValueShape { shape(of: program.root, depth: 0) }

    private func shape(of node: Int, depth: Int) -> ValueShape {
        guard depth < 32 else { return .any }  // recursive schemas: deeper levels decode as the format says
        let span = program.spans[node]
        var mask: TypeMask? = nil
        var members: [String: ValueShape]? = nil
        var map: ValueShape? = nil
        var element: ValueShape? = nil
        var inherited: ValueShape = .any
        for keyword in program.keywords[Int(span.start)..<Int(span.end)] {
            switch keyword {
            case .type(let types): mask = types
            case .properties(_, let names, let nodes):
                var found: [String: ValueShape] = [:]
                for (name, child) in zip(names, nodes) { found[name] = shape(of: child, depth: depth + 1) }
                members = found
            case .additionalProperties(let child, _, _, let alwaysFalse) where !alwaysFalse:
                map = shape(of: child, depth: depth + 1)
            case .items(let child, let start, _, let alwaysFalse) where start == 0 && !alwaysFalse:
                element = shape(of: child, depth: depth + 1)
            case .ref(let target, _), .dynamicRef(let target, _):
                if case .any = inherited { inherited = shape(of: target, depth: depth + 1) }
            case .allOf(let list):
                for child in list {
                    guard case .any = inherited else { break }
                    inherited = shape(of: child, depth: depth + 1)
                }
            default:
                break
            }
        }
        var base: ValueShape
        if let members {
            base = .object(members)
        } else if let map {
            base = .map(map)
        } else if let element {
            base = .array(element)
        } else if let mask {
            var concrete = mask
            concrete.remove(.null)
            switch concrete {
            case .object: base = .object([:])
            case .array: base = .array(.any)
            case .string: base = .string
            case .integer: base = .integer
            case .number, [.number, .integer]: base = .number
            case .boolean: base = .bool
            default: base = .any
            }
        } else {
            base = inherited
        }
        if case .any = base { base = inherited }
        if let mask, mask.contains(.null), mask != .null, base != .any { return .optional(base) }
        return base
    }
}
