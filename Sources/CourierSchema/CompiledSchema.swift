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

    /// Validates `value`; returns the violations (empty when the value is valid), in the order found.
    public func validate(_ value: Value) -> [CourierError.Violation] {
        var evaluator = SchemaEvaluator(
            program: program, limit: options.collectAllViolations ? options.maximumViolations : 1)
        var parts: EvaluatedParts? = nil
        _ = evaluator.evaluate(program.root, value, report: true, parts: &parts)
        return evaluator.violations
    }

    /// Whether `value` is valid. Faster than ``validate(_:)`` for invalid values: it stops at the
    /// first failure and builds no messages.
    public func isValid(_ value: Value) -> Bool {
        var evaluator = SchemaEvaluator(program: program, limit: 1)
        var parts: EvaluatedParts? = nil
        return evaluator.evaluate(program.root, value, report: false, parts: &parts)
    }

    /// Validates `value` and throws ``CourierError/Code/schemaViolation`` with every violation attached
    /// (``CourierError/violations``) when it is invalid. The error's coding path is the first
    /// violation's instance location.
    public func check(_ value: Value) throws {
        let violations = validate(value)
        guard let first = violations.first else { return }
        var error = CourierError(
            .schemaViolation,
            context: CourierError.Context(codingPath: Self.path(fromPointer: first.instanceLocation)))
        error.violations = violations
        throw error
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
    /// pass it as ``CodingHints/shape`` so that `<age>42</age>` decodes as an integer and a single
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
