/// The compiled form of a schema: a flat array of nodes, one per schema location reached from the
/// root, with every reference resolved to a node number.
struct SchemaProgram: Sendable {
    var resources: [SchemaResource]
    var root: Int
    /// The URI the schema was compiled from.
    var rootURI: String
    /// Every node's keywords, concatenated: node `n` owns `keywords[spans[n].start ..< spans[n].end]`.
    var keywords: [SchemaKeyword]
    var spans: [Span]
    /// Whether some `$dynamicRef` resolves through the dynamic scope (then a memoised result also depends
    /// on the scope it was computed in).
    var usesDynamicScope: Bool

    /// Where a node's keywords are, and what the evaluator needs to know about the node, without
    /// reference-counted fields (reading it costs no retain).
    struct Span: Sendable {
        var start: Int32
        var end: Int32
        var resource: Int32
        var collectsAnnotations: Bool
        /// Whether the evaluator memoises the node's results when it follows a reference to it (see
        /// ``SchemaProgram/init(nodes:resources:root:rootURI:)``).
        var memoize: Bool
    }

    /// Flattens `nodes` and marks the nodes worth memoising.
    ///
    /// A node is evaluated more than once at one instance location only when it can be reached along two
    /// paths: it has two or more incoming edges (references and applicator children together). Without
    /// references every node has one parent, so only reference targets with a second way in are marked;
    /// the evaluator caches their results per instance location, which bounds the evaluations of every
    /// node at a location by the length of the reference chains above it instead of their product (the
    /// exponential `allOf`/`anyOf` fan-out over `$ref`s becomes linear). Nodes reached once (the usual
    /// `"items": {"$ref": "#/$defs/user"}`) cost no cache look-ups.
    init(nodes: [SchemaNode], resources: [SchemaResource], root: Int, rootURI: String) {
        self.resources = resources
        self.root = root
        self.rootURI = rootURI
        var incoming = [Int](repeating: 0, count: nodes.count)
        var dynamic = false
        for node in nodes {
            for keyword in node.keywords {
                keyword.forEachChild { incoming[$0] += 1 }
                if case .dynamicRef(_, let anchor) = keyword, anchor != nil { dynamic = true }
            }
        }
        usesDynamicScope = dynamic
        keywords = []
        spans = []
        spans.reserveCapacity(nodes.count)
        for (number, node) in nodes.enumerated() {
            let start = Int32(keywords.count)
            keywords.append(contentsOf: node.keywords)
            spans.append(
                Span(start: start, end: Int32(keywords.count), resource: Int32(node.resource),
                     collectsAnnotations: node.collectsAnnotations,
                     memoize: incoming[number] > 1 && !node.keywords.isEmpty))
        }
    }
}

/// A schema resource (an `$id` scope): its URI and its `$dynamicAnchor`s.
struct SchemaResource: Sendable {
    var uri: String
    var dynamicAnchors: [String: Int]
}

/// One compiled schema location.
struct SchemaNode: Sendable {
    var keywords: [SchemaKeyword] = []
    var resource: Int = 0
    /// Whether the node has `unevaluatedProperties` or `unevaluatedItems` (and so needs the annotations
    /// of its in-place applicators).
    var collectsAnnotations = false
}

/// Which JSON types a `type` keyword allows.
struct TypeMask: OptionSet, Sendable {
    let rawValue: UInt8
    static let null = TypeMask(rawValue: 1)
    static let boolean = TypeMask(rawValue: 2)
    static let integer = TypeMask(rawValue: 4)
    static let number = TypeMask(rawValue: 8)
    static let string = TypeMask(rawValue: 16)
    static let array = TypeMask(rawValue: 32)
    static let object = TypeMask(rawValue: 64)

    static func named(_ name: String) -> TypeMask? {
        switch name {
        case "null": return .null
        case "boolean": return .boolean
        case "integer": return .integer
        case "number": return .number
        case "string": return .string
        case "array": return .array
        case "object": return .object
        default: return nil
        }
    }

    /// "an integer", "a string or null".
    var phrase: String {
        var names: [String] = []
        if contains(.object) { names.append("an object") }
        if contains(.array) { names.append("an array") }
        if contains(.string) { names.append("a string") }
        if contains(.number) { names.append("a number") } else if contains(.integer) { names.append("an integer") }
        if contains(.boolean) { names.append("a boolean") }
        if contains(.null) { names.append("null") }
        return names.joined(separator: " or ")
    }
}

/// A property-name pattern with the child node it applies.
struct PatternChild: Sendable {
    var source: String
    var matcher: PatternMatcher
    var node: Int
}

/// One keyword of a compiled node. Keyword locations are rebuilt from `name` during evaluation.
indirect enum SchemaKeyword: Sendable {
    /// The `false` schema.
    case never
    case type(TypeMask)
    case const(Value)
    case enumeration([Value])
    case minimum(Value, exclusive: Bool)
    case maximum(Value, exclusive: Bool)
    /// draft-07 / draft-04 style boolean exclusive flags are not needed: draft-07 uses numeric forms.
    case multipleOf(Value, SchemaDivisor)
    case minLength(Int)
    case maxLength(Int)
    case pattern(PatternChild)
    case format(String, FormatChecker)
    case minItems(Int)
    case maxItems(Int)
    case uniqueItems
    case minProperties(Int)
    case maxProperties(Int)
    case required([String])
    case dependentRequired([(String, [String])], keyword: String)
    case ref(Int, keyword: String)
    case dynamicRef(Int, anchor: String?)
    case allOf([Int])
    case anyOf([Int])
    case oneOf([Int])
    case not(Int)
    case ifThenElse(condition: Int, then: Int?, else: Int?)
    case dependentSchemas([(String, Int)], keyword: String)
    /// `properties`: by name, and as parallel lists for a linear scan when there are few.
    case properties([String: Int], names: [String], nodes: [Int])
    case patternProperties([PatternChild])
    /// `additionalProperties`: applies to members not named in `properties` nor matched by a pattern.
    case additionalProperties(Int, named: Set<String>, patterns: [PatternMatcher], alwaysFalse: Bool)
    case propertyNames(Int)
    /// `prefixItems` (2020-12) or array-form `items` (draft-07; `keyword` says which).
    case prefixItems([Int], keyword: String)
    /// `items` (2020-12, after `prefixItems`), single-schema `items` (draft-07, start 0) or
    /// `additionalItems` (draft-07, after array-form `items`).
    case items(Int, start: Int, keyword: String, alwaysFalse: Bool)
    case contains(Int, min: Int, max: Int?)
    case unevaluatedProperties(Int, alwaysFalse: Bool)
    case unevaluatedItems(Int, alwaysFalse: Bool)
}

extension SchemaKeyword {
    /// Calls `body` with every node this keyword applies (its edges in the evaluation graph).
    func forEachChild(_ body: (Int) -> Void) {
        switch self {
        case .ref(let target, _), .dynamicRef(let target, _), .not(let target), .propertyNames(let target):
            body(target)
        case .allOf(let list), .anyOf(let list), .oneOf(let list), .prefixItems(let list, _):
            list.forEach(body)
        case .ifThenElse(let condition, let then, let otherwise):
            body(condition)
            if let then { body(then) }
            if let otherwise { body(otherwise) }
        case .dependentSchemas(let list, _):
            for (_, target) in list { body(target) }
        case .properties(_, _, let targets):
            targets.forEach(body)
        case .patternProperties(let patterns):
            for pattern in patterns { body(pattern.node) }
        case .additionalProperties(let target, _, _, _), .items(let target, _, _, _), .contains(let target, _, _),
            .unevaluatedProperties(let target, _), .unevaluatedItems(let target, _):
            body(target)
        case .never, .type, .const, .enumeration, .minimum, .maximum, .multipleOf, .minLength, .maxLength, .pattern,
            .format, .minItems, .maxItems, .uniqueItems, .minProperties, .maxProperties, .required,
            .dependentRequired:
            break
        }
    }
}
