/// Annotations collected for `unevaluatedProperties` / `unevaluatedItems`: which members and items of
/// the instance some successful in-place subschema evaluated.
struct EvaluatedParts {
    var properties: Set<String> = []
    var allProperties = false
    /// Items `0..<prefix` were evaluated.
    var prefix = 0
    var allItems = false
    var items: Set<Int> = []

    mutating func merge(_ other: EvaluatedParts) {
        if other.allProperties {
            allProperties = true
        } else if !allProperties {
            properties.formUnion(other.properties)
        }
        prefix = max(prefix, other.prefix)
        allItems = allItems || other.allItems
        items.formUnion(other.items)
    }
}

/// One validation run over one instance: the dynamic scope and the violations found so far.
///
/// Locations are not tracked on the way down: a violation starts with empty instance and keyword paths,
/// and each level adds its step on the way back up, so valid parts of an instance cost nothing for them.
struct SchemaEvaluator {
    /// A violation whose paths are still being completed (their steps are stored innermost first).
    struct Pending {
        var instance: [PathComponent] = []
        var keywordPath: [String] = []
        var keyword: String
        var text: String
    }

    /// A memoised result: whether node `node` held at instance location `location` in dynamic scope
    /// `scope` (interned ids, see ``SchemaEvaluator/currentLocation()`` and ``scopeIDs``).
    struct MemoKey: Hashable {
        var node: Int
        var location: Int
        var scope: Int
    }

    /// What a memoised evaluation found: its validity and, when it was asked for, the properties and
    /// items it evaluated (its annotations, for `unevaluatedProperties`/`unevaluatedItems`).
    struct MemoEntry {
        var valid: Bool
        var parts: EvaluatedParts?
    }

    /// An interned instance location: the location it is in, and which member or item (a member's
    /// name, for `propertyNames`, is `-1 - index`).
    struct LocationKey: Hashable {
        var parent: Int
        var component: Int
    }

    /// An interned dynamic scope: the scope it extends and the resource entered.
    struct ScopeKey: Hashable {
        var parent: Int
        var resource: Int
    }

    let spans: [SchemaProgram.Span]
    let keywords: [SchemaKeyword]
    let resources: [SchemaResource]
    let limit: Int
    /// The evaluation limits (``CompiledSchema/Options``).
    let limits: CompiledSchema.Options
    /// Whether memoised results must be keyed by the dynamic scope too.
    let usesDynamicScope: Bool
    private var pending: [Pending] = []
    private var scope: [Int] = []
    /// The interned id of each prefix of ``scope`` (only when ``usesDynamicScope``).
    private var scopeIDs: [Int] = []
    private var scopeTable: [ScopeKey: Int] = [:]
    private var depth = 0
    private var stopped = false
    /// Keyword applications so far (``CompiledSchema/Options/maximumSteps``).
    private var steps = 0
    /// Subschema evaluations so far (``CompiledSchema/Options/maximumSubschemaEvaluations``).
    private var evaluations = 0
    /// References followed in a row without moving into the instance
    /// (``CompiledSchema/Options/maximumReferenceDepth``).
    private var referenceDepth = 0
    /// The results of memoised nodes (``SchemaProgram/Span/memoize``) per location and scope.
    private var memo: [MemoKey: MemoEntry] = [:]
    /// The members and items descended into, outermost first, and their interned ids (−1 until a memo
    /// look-up needs one: locations are interned lazily, so validations that never meet a memoised node
    /// never hash a location).
    private var locationComponents: [Int] = []
    private var locationIDs: [Int] = []
    private var locationTable: [LocationKey: Int] = [:]
    /// Why the validation gave up, when it did: the detail of its ``CourierError/Code/validationLimitExceeded``.
    private(set) var exceeded: String?

    /// Where the thread's stack ends, looked up on the first check below (at depth 32): finding it costs a
    /// read of `/proc/self/maps` on a process's main thread, which shallow validations never need.
    private var stack: StackGuard?

    init(program: SchemaProgram, limit: Int, options: CompiledSchema.Options) {
        spans = program.spans
        keywords = program.keywords
        resources = program.resources
        usesDynamicScope = program.usesDynamicScope
        self.limit = max(1, limit)
        limits = options
    }

    /// The violations found, with their locations and messages.
    var violations: [SchemaViolation] {
        pending.map { found in
            var keywordLocation = ""
            for token in found.keywordPath.reversed() { keywordLocation += "/" + JSONPointer.escape(token) }
            let instanceLocation = PathComponent.jsonPointer(found.instance.reversed())
            let shown = instanceLocation.isEmpty ? "(root)" : String(instanceLocation.dropFirst())
            if found.keyword == CompiledSchema.limitKeyword {
                return SchemaViolation(
                    instanceLocation: instanceLocation, keywordLocation: keywordLocation, keyword: found.keyword,
                    message: "\(shown): validation gave up here: \(found.text)")
            }
            return SchemaViolation(
                instanceLocation: instanceLocation, keywordLocation: keywordLocation, keyword: found.keyword,
                message: "\(shown): \(found.text)")
        }
    }

    /// Looks up the thread's stack bounds once per validation, when evaluation first nests 32 deep.
    private mutating func makeStackGuard() -> StackGuard {
        let guardian = StackGuard()
        stack = guardian
        return guardian
    }

    // MARK: reporting

    private mutating func fail(_ keyword: String, _ message: String) {
        guard !stopped else { return }
        pending.append(Pending(keywordPath: keyword.isEmpty ? [] : [keyword], keyword: keyword, text: message))
        if pending.count >= limit { stopped = true }
    }

    /// Ends the validation: it ran into one of its limits (`detail` names it). The violation recorded
    /// here (keyword ``CompiledSchema/limitKeyword``) gets its locations on the way back up like any other,
    /// whether or not the evaluation was reporting, and every level then returns at once.
    private mutating func giveUp(_ detail: String) {
        guard !stopped else { return }
        exceeded = detail
        pending.append(Pending(keyword: CompiledSchema.limitKeyword, text: detail))
        stopped = true
    }

    /// Counts `count` keyword applications against ``CompiledSchema/Options/maximumSteps``; false (and
    /// the validation gives up) when they run out.
    @inline(__always)
    private mutating func spend(_ count: Int) -> Bool {
        steps &+= count
        if steps <= limits.maximumSteps { return true }
        giveUp("more than \(limits.maximumSteps) keyword applications (limit maximumSteps)")
        return false
    }

    /// Adds a step to the violations found since `mark` (called on the way back up).
    private mutating func prefix(since mark: Int, keyword token: String, _ second: String? = nil, instance: PathComponent? = nil) {
        for j in mark..<pending.count {
            if let second { pending[j].keywordPath.append(second) }
            pending[j].keywordPath.append(token)
            if let instance { pending[j].instance.append(instance) }
        }
    }

    // MARK: evaluation

    /// Evaluates node `number` against `instance`. With `report`, failures are recorded as
    /// violations; without, the first failure ends the evaluation. `parts` is non-nil when the caller
    /// needs the evaluated properties/items.
    mutating func evaluate(
        _ number: Int, _ instance: Value, report: Bool, parts: inout EvaluatedParts?
    ) -> Bool {
        if stopped { return false }
        evaluations &+= 1
        if evaluations > limits.maximumSubschemaEvaluations {
            giveUp("more than \(limits.maximumSubschemaEvaluations) subschema evaluations (limit maximumSubschemaEvaluations)")
            return false
        }
        let node = spans[number]
        if node.start == node.end { return true }
        depth += 1
        defer { depth -= 1 }
        if depth > limits.maximumDepth {
            giveUp("evaluation nests too deeply here: more than \(limits.maximumDepth) nested subschemas (limit maximumDepth)")
            return false
        }
        if depth & 7 == 0 && depth >= 32 && !(stack ?? makeStackGuard()).hasRoom() {
            giveUp("evaluation nests too deeply here: the thread's stack is nearly full (\(depth) nested subschemas)")
            return false
        }
        let resource = Int(node.resource)
        let enteredResource = scope.last != resource
        if enteredResource {
            scope.append(resource)
            if usesDynamicScope { scopeIDs.append(internScope(resource)) }
        }
        defer {
            if enteredResource {
                scope.removeLast()
                if usesDynamicScope { scopeIDs.removeLast() }
            }
        }

        var own: EvaluatedParts? = node.collectsAnnotations ? EvaluatedParts() : nil
        var valid = true
        for k in Int(node.start)..<Int(node.end) {
            guard spend(1) else { return false }
            let ok: Bool
            if node.collectsAnnotations {
                ok = apply(keywords[k], instance, report: report, parts: &own)
            } else {
                ok = apply(keywords[k], instance, report: report, parts: &parts)
            }
            if !ok {
                valid = false
                if !report || stopped { return false }
            }
        }
        if valid, node.collectsAnnotations, parts != nil, let own { parts!.merge(own) }
        return valid
    }

    private mutating func child(
        _ number: Int, _ instance: Value, _ token: String, report: Bool, parts: inout EvaluatedParts?
    ) -> Bool {
        let mark = pending.count
        let valid = evaluate(number, instance, report: report, parts: &parts)
        if pending.count > mark { prefix(since: mark, keyword: token) }
        return valid
    }

    private mutating func child(
        _ number: Int, _ instance: Value, _ token: String, _ second: String, report: Bool,
        parts: inout EvaluatedParts?
    ) -> Bool {
        let mark = pending.count
        let valid = evaluate(number, instance, report: report, parts: &parts)
        if pending.count > mark { prefix(since: mark, keyword: token, second) }
        return valid
    }

    /// Evaluates a child at a member or element of the instance (no annotations flow back).
    ///
    /// `slot` is the member's position in its object (for a `.key` component), which names the member
    /// among the instance's locations.
    private mutating func descend(
        _ number: Int, _ instance: Value, at component: PathComponent, slot: Int = 0, _ token: String,
        _ second: String? = nil, report: Bool
    ) -> Bool {
        let mark = pending.count
        var none: EvaluatedParts? = nil
        let savedReferenceDepth = referenceDepth
        referenceDepth = 0
        if case .index(let i) = component {
            locationComponents.append(i)
        } else {
            locationComponents.append(slot)
        }
        locationIDs.append(-1)
        let valid = evaluate(number, instance, report: report, parts: &none)
        locationComponents.removeLast()
        locationIDs.removeLast()
        referenceDepth = savedReferenceDepth
        if pending.count > mark { prefix(since: mark, keyword: token, second, instance: component) }
        return valid
    }

    /// Follows a `$ref` or `$dynamicRef` to `target`, counting ``CompiledSchema/Options/maximumReferenceDepth``
    /// and memoising the target's result at this instance location when the target is marked
    /// (``SchemaProgram/Span/memoize``) or the reference is dynamic.
    ///
    /// A memoised valid result is reused in every mode (with its annotations when the caller collects
    /// them and they were recorded); a memoised invalid result is reused only when not reporting, since a
    /// report needs the violations. The annotations are collected afresh and merged, which is what the
    /// target would have added to the caller's own.
    private mutating func follow(
        _ target: Int, _ instance: Value, _ token: String, dynamic: Bool, report: Bool, parts: inout EvaluatedParts?
    ) -> Bool {
        referenceDepth += 1
        defer { referenceDepth -= 1 }
        if referenceDepth > limits.maximumReferenceDepth {
            giveUp("evaluation nests too deeply here: more than \(limits.maximumReferenceDepth) references followed "
                + "without moving into the instance (limit maximumReferenceDepth)")
            return false
        }
        guard dynamic || spans[target].memoize else {
            return child(target, instance, token, report: report, parts: &parts)
        }
        let key = MemoKey(node: target, location: currentLocation(), scope: usesDynamicScope ? (scopeIDs.last ?? 0) : 0)
        if let entry = memo[key] {
            if entry.valid {
                if parts == nil { return true }
                if let recorded = entry.parts {
                    parts!.merge(recorded)
                    return true
                }
            } else if !report {
                return false
            }
        }
        var mine: EvaluatedParts? = parts == nil ? nil : EvaluatedParts()
        let valid = child(target, instance, token, report: report, parts: &mine)
        if let mine { parts!.merge(mine) }
        if !stopped { memo[key] = MemoEntry(valid: valid, parts: mine) }
        return valid
    }

    /// The interned id of the current instance location (0 for the root), interning the members and
    /// items descended into since the last look-up.
    private mutating func currentLocation() -> Int {
        var start = locationIDs.count
        while start > 0 && locationIDs[start - 1] < 0 { start -= 1 }
        var id = start == 0 ? 0 : locationIDs[start - 1]
        for j in start..<locationIDs.count {
            let key = LocationKey(parent: id, component: locationComponents[j])
            if let found = locationTable[key] {
                id = found
            } else {
                id = locationTable.count + 1
                locationTable[key] = id
            }
            locationIDs[j] = id
        }
        return id
    }

    /// The interned id of the current dynamic scope extended by `resource`.
    private mutating func internScope(_ resource: Int) -> Int {
        let key = ScopeKey(parent: scopeIDs.last ?? 0, resource: resource)
        if let found = scopeTable[key] { return found }
        let id = scopeTable.count + 1
        scopeTable[key] = id
        return id
    }

    /// Tests `text` against a pattern; a pattern that runs out of its matching budget ends the
    /// validation (nil). The matcher's work (backtracking steps, or threads the Pike VM stepped) also counts
    /// against ``CompiledSchema/Options/maximumSteps``, one keyword application per
    /// ``backtrackingStepsPerStep``: a backtracking test has a budget of its own, which an instance of many
    /// strings could spend again and again, and the Pike VM none (its work is linear, but a large pattern
    /// makes each byte cost thousands of steps).
    private mutating func test(_ matcher: PatternMatcher, _ source: String, _ text: String) -> Bool? {
        var taken = 0
        do {
            let matched = try matcher.test(text, steps: &taken)
            guard taken < Self.backtrackingStepsPerStep || spend(taken / Self.backtrackingStepsPerStep) else {
                return nil
            }
            return matched
        } catch {
            giveUp("the pattern \(source) ran out of its matching budget: \(error.reason)")
            return nil
        }
    }

    /// Matcher steps per keyword application counted against ``CompiledSchema/Options/maximumSteps``: a step
    /// is a few nanoseconds, a keyword application a hundred or so.
    static let backtrackingStepsPerStep = 32

    private func dynamicTarget(_ fallback: Int, anchor: String?) -> Int {
        guard let anchor else { return fallback }
        for resource in scope {
            if let found = resources[resource].dynamicAnchors[anchor] { return found }
        }
        return fallback
    }

    /// Applies one keyword. The cases live in four functions so that the frame on the recursive path
    /// stays small (each evaluation level costs stack; deep instances need many levels).
    private mutating func apply(
        _ keyword: SchemaKeyword, _ instance: Value, report: Bool, parts: inout EvaluatedParts?
    ) -> Bool {
        switch keyword {
        case .never, .type, .const, .enumeration, .minimum, .maximum, .multipleOf, .minLength, .maxLength,
            .pattern, .format, .minItems, .maxItems, .uniqueItems, .minProperties, .maxProperties, .required,
            .dependentRequired:
            return applyAssertion(keyword, instance, report: report, parts: &parts)
        case .ref, .dynamicRef, .allOf, .anyOf, .oneOf, .not, .ifThenElse, .dependentSchemas:
            return applyInPlace(keyword, instance, report: report, parts: &parts)
        case .properties, .patternProperties, .additionalProperties, .propertyNames, .unevaluatedProperties:
            return applyToMembers(keyword, instance, report: report, parts: &parts)
        case .prefixItems, .items, .contains, .unevaluatedItems:
            return applyToItems(keyword, instance, report: report, parts: &parts)
        }
    }

    private mutating func applyAssertion(
        _ keyword: SchemaKeyword, _ instance: Value, report: Bool, parts: inout EvaluatedParts?
    ) -> Bool {
        switch keyword {
        case .never:
            if report { fail("", "no value is allowed here (the schema is false)") }
            return false

        case .type(let mask):
            if Self.matches(mask, instance) { return true }
            if report { fail("type", "\(render(instance)) is not \(mask.phrase)") }
            return false

        case .const(let expected):
            if Self.jsonEqual(instance, expected) { return true }
            if report { fail("const", "\(render(instance)) is not the constant \(render(expected))") }
            return false

        case .enumeration(let options):
            for option in options where Self.jsonEqual(option, instance) { return true }
            if report {
                fail("enum", "\(render(instance)) is not one of \(render(.array(options)))")
            }
            return false

        case .minimum(let bound, let exclusive):
            guard instance.isNumber, let order = compareNumbers(instance, bound) else { return true }
            if order > 0 || (order == 0 && !exclusive) { return true }
            if report {
                if exclusive {
                    fail("exclusiveMinimum", "\(render(instance)) is not greater than the exclusive minimum of \(render(bound))")
                } else {
                    fail("minimum", "\(render(instance)) is less than the minimum of \(render(bound))")
                }
            }
            return false

        case .maximum(let bound, let exclusive):
            guard instance.isNumber, let order = compareNumbers(instance, bound) else { return true }
            if order < 0 || (order == 0 && !exclusive) { return true }
            if report {
                if exclusive {
                    fail("exclusiveMaximum", "\(render(instance)) is not less than the exclusive maximum of \(render(bound))")
                } else {
                    fail("maximum", "\(render(instance)) is greater than the maximum of \(render(bound))")
                }
            }
            return false

        case .multipleOf(let divisor, let exact):
            guard instance.isNumber else { return true }
            let ok: Bool
            if case .int(let i) = instance, case .int(let d) = divisor {
                ok = i % d == 0
            } else if let value = SchemaNumber(instance) {
                if let parts = exact.parts, parts.smallCoprime == nil || parts.twos > 60 || parts.fives > 25 {
                    // Long division and large powers of 2 and 5: charge their digit work to the step budget.
                    let division = parts.smallCoprime == nil ? value.digits.count * exact.number.digits.count : 0
                    let powers = parts.twos * parts.twos + parts.fives * parts.fives
                    guard spend((division + powers) / 256) else { return false }
                }
                guard let answer = value.isMultiple(of: exact, maximumDigits: limits.maximumNumberDigits) else {
                    giveUp("multipleOf \(render(divisor)) needs exact division by more than "
                        + "\(limits.maximumNumberDigits) significant digits (limit maximumNumberDigits)")
                    return false
                }
                ok = answer
            } else {
                ok = false  // infinities are no multiple of anything
            }
            if ok { return true }
            if report { fail("multipleOf", "\(render(instance)) is not a multiple of \(render(divisor))") }
            return false

        case .minLength(let minimum):
            guard case .string(let text) = instance else { return true }
            let length = Self.length(text, upTo: minimum)
            if length >= minimum { return true }
            if report {
                fail("minLength", "\(render(instance)) is shorter than the minimum length of \(minimum)")
            }
            return false

        case .maxLength(let maximum):
            guard case .string(let text) = instance else { return true }
            if text.utf8.count <= maximum || Self.length(text, upTo: maximum + 1) <= maximum { return true }
            if report {
                fail("maxLength", "\(render(instance)) is longer than the maximum length of \(maximum)")
            }
            return false

        case .pattern(let pattern):
            guard case .string(let text) = instance else { return true }
            guard let matched = test(pattern.matcher, pattern.source, text) else { return false }
            if matched { return true }
            if report { fail("pattern", "\(render(instance)) does not match the pattern \(pattern.source)") }
            return false

        case .format(let name, let checker):
            guard case .string(let text) = instance else { return true }
            if checker.check(text) { return true }
            if report { fail("format", "\(render(instance)) is not a valid \(name)") }
            return false

        case .minItems(let minimum):
            guard case .array(let items) = instance, items.count < minimum else { return true }
            if report {
                fail("minItems", "has \(items.count) item\(items.count == 1 ? "" : "s"), fewer than the minimum of \(minimum)")
            }
            return false

        case .maxItems(let maximum):
            guard case .array(let items) = instance, items.count > maximum else { return true }
            if report {
                fail("maxItems", "has \(items.count) items, more than the maximum of \(maximum)")
            }
            return false

        case .uniqueItems:
            guard case .array(let items) = instance, items.count > 1 else { return true }
            guard let (first, second) = Self.duplicate(in: items) else { return true }
            if report {
                fail("uniqueItems", "items \(first) and \(second) are equal (\(render(items[first]))); items must be unique")
            }
            return false

        case .minProperties(let minimum):
            guard case .object(let object) = instance, object.count < minimum else { return true }
            if report {
                fail("minProperties", "has \(object.count) properties, fewer than the minimum of \(minimum)")
            }
            return false

        case .maxProperties(let maximum):
            guard case .object(let object) = instance, object.count > maximum else { return true }
            if report {
                fail("maxProperties", "has \(object.count) properties, more than the maximum of \(maximum)")
            }
            return false

        case .required(let names):
            guard case .object = instance else { return true }
            var valid = true
            for name in names where instance.objectContains(name) != true {
                valid = false
                guard report else { return false }
                fail("required", "the required property \(render(.string(name))) is missing")
            }
            return valid

        case .dependentRequired(let dependencies, let keyword):
            guard case .object(let object) = instance else { return true }
            var valid = true
            for (name, needed) in dependencies where object.contains(name) {
                for other in needed where !object.contains(other) {
                    valid = false
                    guard report else { return false }
                    let mark = pending.count
                    fail(keyword, "the property \(render(.string(other))) is required when \(render(.string(name))) is present")
                    if pending.count > mark { pending[mark].keywordPath.insert(name, at: 0) }
                }
            }
            return valid

        default:
            return true
        }
    }

    private mutating func applyInPlace(
        _ keyword: SchemaKeyword, _ instance: Value, report: Bool, parts: inout EvaluatedParts?
    ) -> Bool {
        switch keyword {
        case .ref(let target, let keyword):
            return follow(target, instance, keyword, dynamic: false, report: report, parts: &parts)

        case .dynamicRef(let fallback, let anchor):
            let target = dynamicTarget(fallback, anchor: anchor)
            return follow(target, instance, "$dynamicRef", dynamic: anchor != nil, report: report, parts: &parts)

        case .allOf(let list):
            var valid = true
            for (i, member) in list.enumerated() {
                if !child(member, instance, "allOf", String(i), report: report, parts: &parts) {
                    valid = false
                    if !report || stopped { return false }
                }
            }
            return valid

        case .anyOf(let list):
            var matched = false
            for (i, member) in list.enumerated() {
                var branch: EvaluatedParts? = parts == nil ? nil : EvaluatedParts()
                if child(member, instance, "anyOf", String(i), report: false, parts: &branch) {
                    matched = true
                    guard parts != nil, let branch else { break }
                    parts!.merge(branch)
                }
            }
            if matched { return true }
            if report { fail("anyOf", "\(render(instance)) does not match any of the \(list.count) schemas in anyOf") }
            return false

        case .oneOf(let list):
            var matches: [Int] = []
            var collected = EvaluatedParts()
            for (i, member) in list.enumerated() {
                var branch: EvaluatedParts? = parts == nil ? nil : EvaluatedParts()
                if child(member, instance, "oneOf", String(i), report: false, parts: &branch) {
                    matches.append(i)
                    if let branch { collected.merge(branch) }
                    if matches.count > 1 { break }
                }
            }
            if matches.count == 1 {
                if parts != nil { parts!.merge(collected) }
                return true
            }
            if report {
                if matches.isEmpty {
                    fail("oneOf", "\(render(instance)) matches none of the \(list.count) schemas in oneOf")
                } else {
                    fail("oneOf", "\(render(instance)) matches schemas \(matches[0]) and \(matches[1]) of oneOf; exactly one must match")
                }
            }
            return false

        case .not(let target):
            var none: EvaluatedParts? = nil
            if !child(target, instance, "not", report: false, parts: &none) { return true }
            if report { fail("not", "\(render(instance)) must not match the schema in not") }
            return false

        case .ifThenElse(let condition, let then, let otherwise):
            var branch: EvaluatedParts? = parts == nil ? nil : EvaluatedParts()
            if child(condition, instance, "if", report: false, parts: &branch) {
                if parts != nil, let branch { parts!.merge(branch) }
                guard let then else { return true }
                return child(then, instance, "then", report: report, parts: &parts)
            }
            guard let otherwise else { return true }
            return child(otherwise, instance, "else", report: report, parts: &parts)

        case .dependentSchemas(let dependencies, let keyword):
            guard case .object(let object) = instance else { return true }
            var valid = true
            for (name, target) in dependencies where object.contains(name) {
                if !child(target, instance, keyword, name, report: report, parts: &parts) {
                    valid = false
                    if !report || stopped { return false }
                }
            }
            return valid

        default:
            return true
        }
    }

    private mutating func applyToMembers(
        _ keyword: SchemaKeyword, _ instance: Value, report: Bool, parts: inout EvaluatedParts?
    ) -> Bool {
        switch keyword {
        case .properties(let byName, let names, let targets):
            // Read in place from the instance, without copying the object out of it.
            return instance.withObjectMembers { (keys, values) -> Bool in
                var valid = true
                let scan = names.count <= 16
                var expected = 0
                for i in keys.indices {
                    let target: Int
                    if scan {
                        // Few names: comparing strings beats hashing them, and members usually come in the
                        // schema's order, so the next name is tried first.
                        let position: Int
                        if expected < names.count, names[expected] == keys[i] {
                            position = expected
                        } else if let found = names.firstIndex(of: keys[i]) {
                            position = found
                        } else {
                            continue
                        }
                        expected = position + 1
                        target = targets[position]
                    } else {
                        guard let found = byName[keys[i]] else { continue }
                        target = found
                    }
                    if parts != nil { parts!.properties.insert(keys[i]) }
                    if !descend(target, values[i], at: .key(keys[i]), slot: i, "properties", keys[i], report: report) {
                        valid = false
                        if !report || stopped { return false }
                    }
                }
                return valid
            } ?? true

        case .patternProperties(let patterns):
            // Read in place from the instance, without copying the object out of it.
            return instance.withObjectMembers { (keys, values) -> Bool in
                var valid = true
                for i in keys.indices {
                    for pattern in patterns {
                        guard let matched = test(pattern.matcher, pattern.source, keys[i]) else { return false }
                        guard matched else { continue }
                        if parts != nil { parts!.properties.insert(keys[i]) }
                        if !descend(pattern.node, values[i], at: .key(keys[i]), slot: i, "patternProperties",
                                    pattern.source, report: report)
                        {
                            valid = false
                            if !report || stopped { return false }
                        }
                    }
                }
                return valid
            } ?? true

        case .additionalProperties(let target, let named, let patterns, let alwaysFalse):
            // Read in place from the instance, without copying the object out of it.
            return instance.withObjectMembers { (keys, values) -> Bool in
                var valid = true
                members: for i in keys.indices where !named.contains(keys[i]) {
                    for pattern in patterns {
                        guard let matched = test(pattern, "of patternProperties", keys[i]) else { return false }
                        if matched { continue members }
                    }
                    if alwaysFalse {
                        valid = false
                        guard report else { return false }
                        fail("additionalProperties", "the property \(render(.string(keys[i]))) is not allowed")
                    } else if !descend(target, values[i], at: .key(keys[i]), slot: i, "additionalProperties", report: report) {
                        valid = false
                        if !report || stopped { return false }
                    }
                }
                if parts != nil { parts!.allProperties = true }
                return valid
            } ?? true

        case .propertyNames(let target):
            guard case .object(let object) = instance else { return true }
            var valid = true
            for (i, key) in object.keys.enumerated() {
                var none: EvaluatedParts? = nil
                // The name is a location of its own (not the object's), for the memo.
                let savedReferenceDepth = referenceDepth
                referenceDepth = 0
                locationComponents.append(-1 - i)
                locationIDs.append(-1)
                let named = child(target, .string(key), "propertyNames", report: false, parts: &none)
                locationComponents.removeLast()
                locationIDs.removeLast()
                referenceDepth = savedReferenceDepth
                if stopped { return false }
                if !named {
                    valid = false
                    guard report else { return false }
                    fail("propertyNames", "the property name \(render(.string(key))) is not allowed by propertyNames")
                }
            }
            return valid

        case .unevaluatedProperties(let target, let alwaysFalse):
            guard case .object(let object) = instance else { return true }
            guard let seen = parts else { return true }
            var valid = true
            if !seen.allProperties {
                let keys = object.keys
                let values = object.values
                for i in keys.indices where !seen.properties.contains(keys[i]) {
                    if alwaysFalse {
                        valid = false
                        guard report else { return false }
                        fail("unevaluatedProperties", "the property \(render(.string(keys[i]))) is not allowed (unevaluated)")
                    } else if !descend(
                        target, values[i], at: .key(keys[i]), slot: i, "unevaluatedProperties", report: report)
                    {
                        valid = false
                        if !report || stopped { return false }
                    }
                }
            }
            parts!.allProperties = true
            return valid

        default:
            return true
        }
    }

    private mutating func applyToItems(
        _ keyword: SchemaKeyword, _ instance: Value, report: Bool, parts: inout EvaluatedParts?
    ) -> Bool {
        switch keyword {
        case .prefixItems(let list, let keyword):
            guard case .array(let items) = instance else { return true }
            var valid = true
            let n = min(items.count, list.count)
            for i in 0..<n {
                if !descend(list[i], items[i], at: .index(i), keyword, String(i), report: report) {
                    valid = false
                    if !report || stopped { return false }
                }
            }
            if parts != nil { parts!.prefix = max(parts!.prefix, n) }
            return valid

        case .items(let target, let start, let keyword, let alwaysFalse):
            guard case .array(let items) = instance else { return true }
            guard start < items.count else { return true }
            if alwaysFalse {
                if report {
                    fail(keyword, "has \(items.count) items, but at most \(start) are allowed")
                }
                return false
            }
            var valid = true
            for i in start..<items.count {
                if !descend(target, items[i], at: .index(i), keyword, report: report) {
                    valid = false
                    if !report || stopped { return false }
                }
            }
            if parts != nil { parts!.allItems = true }
            return valid

        case .contains(let target, let minimum, let maximum):
            guard case .array(let items) = instance else { return true }
            var found = 0
            for i in items.indices {
                if descend(target, items[i], at: .index(i), "contains", report: false) {
                    found += 1
                    if parts != nil { parts!.items.insert(i) }
                    if parts == nil, maximum == nil, found >= minimum { return true }
                    if let maximum, found > maximum, parts == nil { break }
                }
            }
            if found < minimum {
                if report {
                    if minimum == 1 {
                        fail("contains", "no item matches the schema in contains")
                    } else {
                        fail("minContains", "\(found) items match the schema in contains, fewer than the minimum of \(minimum)")
                    }
                }
                return false
            }
            if let maximum, found > maximum {
                if report {
                    fail("maxContains", "more than \(maximum) items match the schema in contains")
                }
                return false
            }
            return true

        case .unevaluatedItems(let target, let alwaysFalse):
            guard case .array(let items) = instance else { return true }
            guard let seen = parts else { return true }
            var valid = true
            if !seen.allItems {
                for i in seen.prefix..<max(seen.prefix, items.count) where !seen.items.contains(i) {
                    if alwaysFalse {
                        valid = false
                        guard report else { return false }
                        let mark = pending.count
                        fail("unevaluatedItems", "the item is not allowed (unevaluated)")
                        if pending.count > mark { pending[mark].instance.append(.index(i)) }
                    } else if !descend(target, items[i], at: .index(i), "unevaluatedItems", report: report) {
                        valid = false
                        if !report || stopped { return false }
                    }
                }
            }
            parts!.allItems = true
            return valid
        default:
            return true
        }
    }


    // MARK: helpers

    static func matches(_ mask: TypeMask, _ value: Value) -> Bool {
        switch value {
        case .null: return mask.contains(.null)
        case .bool: return mask.contains(.boolean)
        case .int, .uint: return mask.contains(.integer) || mask.contains(.number)
        case .double, .number:
            return mask.contains(.number) || (mask.contains(.integer) && value.isIntegral)
        case .string, .bytes: return mask.contains(.string)
        case .array: return mask.contains(.array)
        case .object: return mask.contains(.object)
        }
    }

    /// The length in Unicode code points, counting no further than `limit` (ASCII is one per byte).
    static func length(_ text: String, upTo limit: Int) -> Int {
        var n = 0
        for _ in text.unicodeScalars {
            n += 1
            if n >= limit { return n }
        }
        return n
    }

    static func duplicate(in items: [Value]) -> (Int, Int)? {
        if items.count <= 16 {
            for i in items.indices {
                for j in (i + 1)..<items.count where jsonEqual(items[i], items[j]) { return (i, j) }
            }
            return nil
        }
        // Buckets by a hash of the JSON data model itself (strings by code points): `Value`'s own hash
        // follows Swift's canonical equivalence, under which 2^n distinct spellings of "é…é" collide and
        // the buckets would make this quadratic.
        var seen: [Int: [Int]] = [:]
        seen.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            let hash = jsonHash(item)
            if let bucket = seen[hash] {
                for earlier in bucket where jsonEqual(items[earlier], item) { return (earlier, i) }
            }
            seen[hash, default: []].append(i)
        }
        return nil
    }

    /// A hash consistent with ``jsonEqual(_:_:)``: numbers by value, strings by their UTF-8 code units,
    /// arrays in order, objects independent of member order.
    static func jsonHash(_ value: Value) -> Int {
        var hasher = Hasher()
        combineJSON(value, into: &hasher)
        return hasher.finalize()
    }

    private static func combineJSON(_ value: Value, into hasher: inout Hasher) {
        switch value {
        case .string(let text):
            hasher.combine(3)
            hasher.combine(text.utf8.count)
            for byte in text.utf8 { hasher.combine(byte) }
        case .array(let items):
            hasher.combine(5)
            hasher.combine(items.count)
            for item in items { combineJSON(item, into: &hasher) }
        case .object(let object):
            hasher.combine(6)
            hasher.combine(object.count)
            var members = 0
            for i in object.keys.indices {
                var member = Hasher()
                combineJSON(.string(object.keys[i]), into: &member)
                combineJSON(object.values[i], into: &member)
                members = members &+ member.finalize()
            }
            hasher.combine(members)
        default:
            hasher.combine(value)  // null, booleans, bytes and numbers: `Value`'s hash is exact for them
        }
    }

    /// JSON data-model equality: numbers by mathematical value, strings by code points (not by Swift's
    /// canonical equivalence), arrays in order, objects as unordered sets of members.
    static func jsonEqual(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)):
            return x.utf8.elementsEqual(y.utf8)
        case (.array(let x), .array(let y)):
            guard x.count == y.count else { return false }
            for i in x.indices where !jsonEqual(x[i], y[i]) { return false }
            return true
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            for i in x.keys.indices {
                let key = x.keys[i]
                // The object's own look-up matches canonically equivalent names too; confirm by code points.
                let j: Int?
                if let found = y.position(of: key), y.keys[found].utf8.elementsEqual(key.utf8) {
                    j = found
                } else {
                    j = y.keys.firstIndex(where: { $0.utf8.elementsEqual(key.utf8) })
                }
                guard let j, jsonEqual(x.values[i], y.values[j]) else { return false }
            }
            return true
        default:
            return a == b
        }
    }

    /// A short JSON rendering of a value for messages.
    func render(_ value: Value) -> String {
        var out = ""
        Self.write(value, into: &out, budget: 80)
        return out
    }

    private static func write(_ value: Value, into out: inout String, budget: Int) {
        if out.count > budget {
            out += "…"
            return
        }
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .uint(let u): out += String(u)
        case .double(let d):
            if d.isFinite, d == d.rounded(.towardZero), abs(d) < 1e15 {
                out += String(Int64(d)) + ".0"
            } else {
                out += "\(d)"
            }
        case .number(let s): out += s
        case .string(let s):
            out += "\""
            var n = 0
            for c in s.unicodeScalars {
                n += 1
                if n > 60 {
                    out += "…"
                    break
                }
                switch c {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default:
                    if c.value < 0x20 {
                        out += "\\u" + String(repeating: "0", count: 4 - String(c.value, radix: 16).count)
                            + String(c.value, radix: 16)
                    } else {
                        out.unicodeScalars.append(c)
                    }
                }
            }
            out += "\""
        case .bytes(let b): out += "<\(b.count) bytes>"
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                if out.count > budget {
                    out += "…"
                    break
                }
                write(item, into: &out, budget: budget)
            }
            out += "]"
        case .object(let object):
            out += "{"
            for i in object.keys.indices {
                if i > 0 { out += "," }
                if out.count > budget {
                    out += "…"
                    break
                }
                write(.string(object.keys[i]), into: &out, budget: budget)
                out += ":"
                write(object.values[i], into: &out, budget: budget)
            }
            out += "}"
        }
    }
}
