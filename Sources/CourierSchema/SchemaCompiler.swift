/// Turns the schema at a URI of a registry into a ``SchemaProgram``: one node per reachable schema
/// location, references resolved, regexes compiled, vocabularies applied, cycles rejected.
struct SchemaCompiler {
    private let registry: SchemaRegistry
    private let options: CompiledSchema.Options
    private var nodes: [SchemaNode] = []
    private var locations: [SchemaLocation] = []
    private var nodeAt: [SchemaLocation: Int] = [:]
    private var resources: [SchemaResource] = []
    private var resourceAt: [String: Int] = [:]
    private var pending: [Int] = []
    private var patterns: [String: PatternMatcher] = [:]
    private var vocabularies: [String: Vocabularies] = [:]

    /// Which vocabularies' keywords assert.
    struct Vocabularies {
        var validation = true
        var formatAssertion = false
    }

    init(registry: SchemaRegistry, options: CompiledSchema.Options) {
        self.registry = registry
        self.options = options
    }

    mutating func compile(root id: String) throws(CourierError) -> SchemaProgram {
        let uri = URIReference(id)
        guard uri.isAbsolute else {
            throw CourierError(.schemaNotFound, detail: "\(id) is not an absolute URI")
        }
        guard registry.index.resources[uri.withoutFragment.description] != nil else {
            throw CourierError(.schemaNotFound, detail: "no schema is registered as \(uri.withoutFragment)")
        }
        let location = try resolve(uri, reference: id)
        let root = node(at: location)
        while let next = pending.popLast() {
            try compileNode(next)
        }
        try rejectCycles()
        return SchemaProgram(nodes: nodes, resources: resources, root: root, rootURI: id)
    }

    // MARK: - Locations and references

    private func value(at location: SchemaLocation) -> Value? {
        var current = registry.document(location.document).root
        guard let tokens = JSONPointer.tokens(location.pointer) else { return nil }
        for token in tokens {
            switch current {
            case .object(let object):
                guard let next = object[token] else { return nil }
                current = next
            case .array(let array):
                guard let i = Int(token), String(i) == token, array.indices.contains(i) else { return nil }
                current = array[i]
            default:
                return nil
            }
        }
        return current
    }

    /// The scope (base URI, draft) of a location; one not walked as a schema takes its nearest walked
    /// ancestor's.
    private func scope(at location: SchemaLocation) -> SchemaScope {
        if let found = registry.index.scopes[location] { return found }
        var pointer = location.pointer
        while let slash = pointer.lastIndex(of: "/") {
            pointer = String(pointer[..<slash])
            if let found = registry.index.scopes[SchemaLocation(document: location.document, pointer: pointer)] {
                return found
            }
        }
        let document = registry.document(location.document)
        return SchemaScope(base: document.uri, draft: registry.options.defaultDraft, metaSchema: nil)
    }

    /// Resolves an absolute URI (with an optional pointer or anchor fragment) to a location.
    private func resolve(_ uri: URIReference, reference: String) throws(CourierError) -> SchemaLocation {
        let resourceURI = uri.withoutFragment.description
        guard let resource = registry.index.resources[resourceURI] else {
            throw CourierError(
                .unresolvedReference, detail: "\(reference) (\(uri)) names no schema in the registry")
        }
        guard let fragment = uri.fragment, !fragment.isEmpty else { return resource }
        if fragment.hasPrefix("/") {
            // A pointer inside a URI is percent-encoded; a malformed escape or non-UTF-8 bytes make it malformed.
            guard let decoded = QueryItem.strictlyPercentDecoded(fragment), let tokens = JSONPointer.tokens(decoded) else {
                throw CourierError(.unresolvedReference, detail: "\(reference) has a malformed JSON Pointer")
            }
            var location = resource
            for token in tokens { location = location.appending(token) }
            guard value(at: location) != nil else {
                throw CourierError(.unresolvedReference, detail: "\(reference) points to nothing in \(resourceURI)")
            }
            return location
        }
        guard let anchored = registry.index.anchors[resourceURI + "#" + fragment] else {
            throw CourierError(.unresolvedReference, detail: "\(reference): no anchor \"\(fragment)\" in \(resourceURI)")
        }
        return anchored
    }

    /// The node for a location, allocated (and queued for compilation) on first request.
    private mutating func node(at location: SchemaLocation) -> Int {
        if let existing = nodeAt[location] { return existing }
        let number = nodes.count
        nodes.append(SchemaNode())
        locations.append(location)
        nodeAt[location] = number
        pending.append(number)
        return number
    }

    private mutating func resource(for base: String) -> Int {
        if let existing = resourceAt[base] { return existing }
        let number = resources.count
        resources.append(SchemaResource(uri: base, dynamicAnchors: [:]))
        resourceAt[base] = number
        var anchors: [String: Int] = [:]
        for (name, location) in registry.index.dynamicAnchorsByResource[base] ?? [:] {
            anchors[name] = node(at: location)
        }
        resources[number].dynamicAnchors = anchors
        return number
    }

    private mutating func vocabularies(for scope: SchemaScope) throws(CourierError) -> Vocabularies {
        guard scope.draft == .draft2020_12, let meta = scope.metaSchema else { return Vocabularies() }
        let metaURI = URIReference(meta).withoutFragment.description
        if let cached = vocabularies[metaURI] { return cached }
        var result = Vocabularies()
        if SchemaIndex.knownDraft(metaURI) == nil {
            guard let location = registry.index.resources[metaURI] else {
                throw CourierError(.unresolvedReference, detail: "the meta-schema \(meta) is not in the registry")
            }
            if case .object(let declared)? = value(at: location)?["$vocabulary"] {
                result.validation = false
                for (vocabulary, required) in declared {
                    switch vocabulary {
                    case "https://json-schema.org/draft/2020-12/vocab/validation": result.validation = true
                    case "https://json-schema.org/draft/2020-12/vocab/format-assertion": result.formatAssertion = true
                    case "https://json-schema.org/draft/2020-12/vocab/core",
                        "https://json-schema.org/draft/2020-12/vocab/applicator",
                        "https://json-schema.org/draft/2020-12/vocab/unevaluated",
                        "https://json-schema.org/draft/2020-12/vocab/meta-data",
                        "https://json-schema.org/draft/2020-12/vocab/format-annotation",
                        "https://json-schema.org/draft/2020-12/vocab/content":
                        break
                    default:
                        if required.boolValue == true {
                            throw CourierError(
                                .invalidSchema,
                                detail: "the meta-schema \(meta) requires the unknown vocabulary \(vocabulary)")
                        }
                    }
                }
            }
        }
        vocabularies[metaURI] = result
        return result
    }

    private mutating func pattern(_ source: String, at location: SchemaLocation) throws(CourierError) -> PatternMatcher {
        if let cached = patterns[source] { return cached }
        do {
            let matcher = try PatternMatcher(ecmaScript: source)
            patterns[source] = matcher
            return matcher
        } catch {
            throw CourierError(
                .invalidSchema,
                detail: "invalid regular expression \"\(source)\" at \(describe(location)): \(error.reason)")
        }
    }

    private func describe(_ location: SchemaLocation) -> String {
        registry.document(location.document).uri + "#" + location.pointer
    }

    // MARK: - Keywords

    private mutating func compileNode(_ number: Int) throws(CourierError) {
        let location = locations[number]
        guard let schema = value(at: location) else {
            throw CourierError(.unresolvedReference, detail: "nothing at \(describe(location))")
        }
        let scope = scope(at: location)
        nodes[number].resource = resource(for: scope.base)
        switch schema {
        case .bool(let allowed):
            nodes[number].keywords = allowed ? [] : [.never]
            return
        case .object(let object):
            try compileObject(number, object, location: location, scope: scope)
        default:
            throw CourierError(
                .invalidSchema, detail: "a schema must be an object or a boolean at \(describe(location))")
        }
    }

    private func invalid(_ keyword: String, _ expectation: String, _ location: SchemaLocation) -> CourierError {
        CourierError(.invalidSchema, detail: "\"\(keyword)\" must be \(expectation) at \(describe(location))")
    }

    private func count(_ object: Value.Object, _ keyword: String, _ location: SchemaLocation) throws(CourierError) -> Int? {
        guard let value = object[keyword] else { return nil }
        guard value.isIntegral, let n = value.int64Value, n >= 0 else {
            throw invalid(keyword, "a non-negative integer", location)
        }
        return Int(clamping: n)
    }

    private func number(_ object: Value.Object, _ keyword: String, _ location: SchemaLocation) throws(CourierError) -> Value? {
        guard let value = object[keyword] else { return nil }
        guard value.isNumber else { throw invalid(keyword, "a number", location) }
        return value
    }

    private mutating func child(_ location: SchemaLocation, _ keyword: String) -> Int {
        node(at: location.appending(keyword))
    }

    private mutating func children(
        _ object: Value.Object, _ keyword: String, _ location: SchemaLocation
    ) throws(CourierError) -> [Int]? {
        guard let value = object[keyword] else { return nil }
        guard case .array(let items) = value else { throw invalid(keyword, "an array of schemas", location) }
        let base = location.appending(keyword)
        return items.indices.map { node(at: base.appending(String($0))) }
    }

    private mutating func childMap(
        _ object: Value.Object, _ keyword: String, _ location: SchemaLocation
    ) throws(CourierError) -> [(String, Int)]? {
        guard let value = object[keyword] else { return nil }
        guard case .object(let members) = value else { throw invalid(keyword, "an object of schemas", location) }
        let base = location.appending(keyword)
        return members.keys.map { ($0, node(at: base.appending($0))) }
    }

    private func isFalse(_ object: Value.Object, _ keyword: String) -> Bool {
        if case .bool(false)? = object[keyword] { return true }
        return false
    }

    private func stringList(_ value: Value, _ keyword: String, _ location: SchemaLocation) throws(CourierError) -> [String] {
        guard case .array(let items) = value else { throw invalid(keyword, "an array of strings", location) }
        var names: [String] = []
        for item in items {
            guard let name = item.stringValue else { throw invalid(keyword, "an array of strings", location) }
            names.append(name)
        }
        return names
    }

    private mutating func compileObject(
        _ number: Int, _ object: Value.Object, location: SchemaLocation, scope: SchemaScope
    ) throws(CourierError) {
        let draft = scope.draft
        var keywords: [SchemaKeyword] = []

        func reference(_ keyword: String) throws(CourierError) -> (Int, URIReference)? {
            guard let value = object[keyword] else { return nil }
            guard let text = value.stringValue else { throw invalid(keyword, "a URI reference", location) }
            let target = URIReference(scope.base).resolving(text)
            return (node(at: try resolve(target, reference: text)), target)
        }

        if let (target, _) = try reference("$ref") {
            keywords.append(.ref(target, keyword: "$ref"))
            if draft == .draft7 {
                // draft-07: "$ref" overrides every sibling keyword.
                nodes[number].keywords = keywords
                return
            }
        }
        if draft == .draft2020_12, let (target, uri) = try reference("$dynamicRef") {
            var anchor: String? = nil
            if let fragment = uri.fragment, !fragment.isEmpty, !fragment.hasPrefix("/"),
                registry.index.dynamicAnchors[uri.withoutFragment.description + "#" + fragment] == locations[target]
            {
                anchor = fragment
            }
            keywords.append(.dynamicRef(target, anchor: anchor))
        }

        let vocabulary = try vocabularies(for: scope)
        if vocabulary.validation {
            try compileValidation(object, location: location, draft: draft, into: &keywords)
        }
        if let name = object["format"]?.stringValue, options.assertFormat || vocabulary.formatAssertion,
            let checker = FormatChecker(name: name, draft: draft)
        {
            keywords.append(.format(name, checker))
        }

        // Applicators.
        if let list = try children(object, "allOf", location) { keywords.append(.allOf(list)) }
        if let list = try children(object, "anyOf", location) { keywords.append(.anyOf(list)) }
        if let list = try children(object, "oneOf", location) { keywords.append(.oneOf(list)) }
        if object["not"] != nil { keywords.append(.not(child(location, "not"))) }
        if object["if"] != nil {
            let condition = child(location, "if")
            let then = object["then"] != nil ? child(location, "then") : nil
            let otherwise = object["else"] != nil ? child(location, "else") : nil
            keywords.append(.ifThenElse(condition: condition, then: then, else: otherwise))
        }
        if draft == .draft2020_12, let map = try childMap(object, "dependentSchemas", location) {
            keywords.append(.dependentSchemas(map, keyword: "dependentSchemas"))
        }
        // draft-07's "dependencies"; 2020-12 keeps understanding it for compatibility (its meta-schema
        // still describes it), unless the schema already uses the keywords that replaced it.
        if draft == .draft7 || (object["dependentSchemas"] == nil && object["dependentRequired"] == nil) {
            if case .object(let dependencies)? = object["dependencies"] {
                var required: [(String, [String])] = []
                var schemas: [(String, Int)] = []
                let base = location.appending("dependencies")
                for (name, dependency) in dependencies {
                    if case .array = dependency {
                        required.append((name, try stringList(dependency, "dependencies", location)))
                    } else {
                        schemas.append((name, node(at: base.appending(name))))
                    }
                }
                if !required.isEmpty && vocabulary.validation {
                    keywords.append(.dependentRequired(required, keyword: "dependencies"))
                }
                if !schemas.isEmpty { keywords.append(.dependentSchemas(schemas, keyword: "dependencies")) }
            }
        }

        // Object members.
        var named: Set<String> = []
        var memberPatterns: [PatternMatcher] = []
        if let map = try childMap(object, "properties", location) {
            var byName: [String: Int] = [:]
            for (name, child) in map { byName[name] = child }
            named = Set(byName.keys)
            keywords.append(.properties(byName, names: map.map(\.0), nodes: map.map(\.1)))
        }
        if case .object(let map)? = object["patternProperties"] {
            let base = location.appending("patternProperties")
            var list: [PatternChild] = []
            for source in map.keys {
                let matcher = try pattern(source, at: base)
                memberPatterns.append(matcher)
                list.append(PatternChild(source: source, matcher: matcher, node: node(at: base.appending(source))))
            }
            keywords.append(.patternProperties(list))
        } else if object["patternProperties"] != nil {
            throw invalid("patternProperties", "an object of schemas", location)
        }
        if object["additionalProperties"] != nil {
            keywords.append(
                .additionalProperties(
                    child(location, "additionalProperties"), named: named, patterns: memberPatterns,
                    alwaysFalse: isFalse(object, "additionalProperties")))
        }
        if object["propertyNames"] != nil { keywords.append(.propertyNames(child(location, "propertyNames"))) }

        // Array items.
        switch draft {
        case .draft2020_12:
            var prefix = 0
            if let list = try children(object, "prefixItems", location) {
                prefix = list.count
                keywords.append(.prefixItems(list, keyword: "prefixItems"))
            }
            if object["items"] != nil {
                keywords.append(
                    .items(child(location, "items"), start: prefix, keyword: "items",
                           alwaysFalse: isFalse(object, "items")))
            }
        case .draft7:
            if case .array = object["items"] {
                let list = try children(object, "items", location) ?? []
                keywords.append(.prefixItems(list, keyword: "items"))
                if object["additionalItems"] != nil {
                    keywords.append(
                        .items(child(location, "additionalItems"), start: list.count, keyword: "additionalItems",
                               alwaysFalse: isFalse(object, "additionalItems")))
                }
            } else if object["items"] != nil {
                keywords.append(
                    .items(child(location, "items"), start: 0, keyword: "items", alwaysFalse: isFalse(object, "items")))
            }
        }
        if object["contains"] != nil {
            var minimum = 1
            var maximum: Int? = nil
            if draft == .draft2020_12 && vocabulary.validation {
                minimum = try count(object, "minContains", location) ?? 1
                maximum = try count(object, "maxContains", location)
            }
            keywords.append(.contains(child(location, "contains"), min: minimum, max: maximum))
        }

        // Unevaluated (2020-12), always last: they need the annotations of everything above.
        if draft == .draft2020_12 {
            if object["unevaluatedItems"] != nil {
                keywords.append(
                    .unevaluatedItems(child(location, "unevaluatedItems"), alwaysFalse: isFalse(object, "unevaluatedItems")))
                nodes[number].collectsAnnotations = true
            }
            if object["unevaluatedProperties"] != nil {
                keywords.append(
                    .unevaluatedProperties(
                        child(location, "unevaluatedProperties"), alwaysFalse: isFalse(object, "unevaluatedProperties")))
                nodes[number].collectsAnnotations = true
            }
        }
        nodes[number].keywords = keywords
    }

    private mutating func compileValidation(
        _ object: Value.Object, location: SchemaLocation, draft: SchemaDraft, into keywords: inout [SchemaKeyword]
    ) throws(CourierError) {
        if let type = object["type"] {
            var mask: TypeMask = []
            switch type {
            case .string(let name):
                guard let one = TypeMask.named(name) else { throw invalid("type", "a JSON type name", location) }
                mask = one
            case .array(let names):
                for name in names {
                    guard let text = name.stringValue, let one = TypeMask.named(text) else {
                        throw invalid("type", "a list of JSON type names", location)
                    }
                    mask.insert(one)
                }
            default:
                throw invalid("type", "a type name or a list of them", location)
            }
            keywords.append(.type(mask))
        }
        if let value = object["const"] { keywords.append(.const(value)) }
        if let value = object["enum"] {
            guard case .array(let options) = value else { throw invalid("enum", "an array", location) }
            keywords.append(.enumeration(options))
        }
        if let bound = try number(object, "minimum", location) { keywords.append(.minimum(bound, exclusive: false)) }
        if let bound = try number(object, "exclusiveMinimum", location) {
            keywords.append(.minimum(bound, exclusive: true))
        }
        if let bound = try number(object, "maximum", location) { keywords.append(.maximum(bound, exclusive: false)) }
        if let bound = try number(object, "exclusiveMaximum", location) {
            keywords.append(.maximum(bound, exclusive: true))
        }
        if let divisor = try number(object, "multipleOf", location) {
            guard let exact = SchemaNumber(divisor), !exact.isZero, !exact.negative else {
                throw invalid("multipleOf", "a number greater than 0", location)
            }
            keywords.append(.multipleOf(divisor, SchemaDivisor(exact)))
        }
        if let n = try count(object, "minLength", location) { keywords.append(.minLength(n)) }
        if let n = try count(object, "maxLength", location) { keywords.append(.maxLength(n)) }
        if let value = object["pattern"] {
            guard let source = value.stringValue else { throw invalid("pattern", "a string", location) }
            let matcher = try pattern(source, at: location.appending("pattern"))
            keywords.append(.pattern(PatternChild(source: source, matcher: matcher, node: -1)))
        }
        if let n = try count(object, "minItems", location) { keywords.append(.minItems(n)) }
        if let n = try count(object, "maxItems", location) { keywords.append(.maxItems(n)) }
        if case .bool(true)? = object["uniqueItems"] { keywords.append(.uniqueItems) }
        if let n = try count(object, "minProperties", location) { keywords.append(.minProperties(n)) }
        if let n = try count(object, "maxProperties", location) { keywords.append(.maxProperties(n)) }
        if let value = object["required"] {
            let names = try stringList(value, "required", location)
            if !names.isEmpty { keywords.append(.required(names)) }
        }
        if draft == .draft2020_12, let value = object["dependentRequired"] {
            guard case .object(let map) = value else { throw invalid("dependentRequired", "an object", location) }
            var list: [(String, [String])] = []
            for (name, needed) in map { list.append((name, try stringList(needed, "dependentRequired", location))) }
            keywords.append(.dependentRequired(list, keyword: "dependentRequired"))
        }
    }

    // MARK: - Cycles

    /// Rejects a cycle of in-place references (`$ref`, `allOf`, `not`, ...): evaluating it would never
    /// consume input and never end.
    private func rejectCycles() throws(CourierError) {
        var state = [UInt8](repeating: 0, count: nodes.count)  // 0 new, 1 on stack, 2 done
        for start in nodes.indices where state[start] == 0 {
            var stack: [(node: Int, edges: [Int], next: Int)] = [(start, inPlaceEdges(start), 0)]
            state[start] = 1
            while !stack.isEmpty {
                let top = stack.count - 1
                if stack[top].next < stack[top].edges.count {
                    let target = stack[top].edges[stack[top].next]
                    stack[top].next += 1
                    switch state[target] {
                    case 1:
                        throw CourierError(
                            .invalidSchema,
                            detail: "the schema at \(describe(locations[target])) refers to itself without consuming input")
                    case 0:
                        state[target] = 1
                        stack.append((target, inPlaceEdges(target), 0))
                    default:
                        break
                    }
                } else {
                    state[stack[top].node] = 2
                    stack.removeLast()
                }
            }
        }
    }

    private func inPlaceEdges(_ number: Int) -> [Int] {
        var edges: [Int] = []
        for keyword in nodes[number].keywords {
            switch keyword {
            case .ref(let target, _), .dynamicRef(let target, _), .not(let target):
                edges.append(target)
            case .allOf(let list), .anyOf(let list), .oneOf(let list):
                edges.append(contentsOf: list)
            case .ifThenElse(let condition, let then, let otherwise):
                edges.append(condition)
                if let then { edges.append(then) }
                if let otherwise { edges.append(otherwise) }
            case .dependentSchemas(let list, _):
                edges.append(contentsOf: list.map(\.1))
            default:
                break
            }
        }
        return edges
    }
}
