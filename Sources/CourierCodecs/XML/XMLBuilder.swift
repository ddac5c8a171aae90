import CLibXML2
import Courier

/// What an XML parse makes of the elements ``XMLBuilder`` finishes: the pivot's `Value` tree
/// (``XMLTreeOutput``) or the direct path's tape (``XMLTapeOutput``).
///
/// The builder alone decides what becomes what (shapes, wrappers, repeated siblings, empty lists, `xsi:nil`,
/// limits); an output only makes the nodes it is asked for, so that both paths read a document the same way.
/// The builder is generic over its output, so each path runs its own specialised copy.
protocol XMLBuildOutput {
    /// A finished value: a `Value`, or a node of the tape.
    associatedtype Node

    /// Whether a failure is described as a `CourierError` (the pivot) or only stops the parse (the tape,
    /// which then leaves the document to the pivot).
    static var describesFailures: Bool { get }

    /// A scalar: any `Value` that is not a container, or an empty object.
    mutating func leaf(_ value: consuming Value) -> Node

    /// A scalar that is not an object (what ``XMLMapping/scalar(_:kind:optional:)`` makes).
    mutating func scalar(_ value: consuming Value) -> Node

    /// An array of `elements`.
    mutating func array(_ elements: [Node]) -> Node

    /// An array of the one element `element`.
    mutating func arrayOfOne(_ element: Node) -> Node

    /// A wrapper's array: the nodes of `members`, in order.
    mutating func array(of members: ArraySlice<XMLMember<Node>>) -> Node

    /// Appends the elements of `node` to `elements` when it is an array; `false` (and nothing appended)
    /// when it is not.
    func appendItems(of node: Node, to elements: inout [Node]) -> Bool

    /// The number of elements of `node` when it is an array.
    func itemCount(_ node: Node) -> Int?

    /// An object of the members `keys` (ids into `names`) with `values`, in order.
    mutating func object(keys: [Int32], values: [Node], names: [String]) -> Node

    /// The object of an element named `element` whose members are `members` (no name repeats, see
    /// ``XMLBuildOutput/node(of:)``), followed by `text` under `#text` (id 0) when there is one.
    mutating func object(
        element: Int32, members: UnsafeBufferPointer<XMLMember<Node>>, text: Node?, names: [String]
    ) -> Node

    /// `node` with an empty array added for each of `required` (ids into `names`) it has no member of,
    /// when it is an object; `node` itself otherwise.
    mutating func addingRequiredArrays(_ required: [Int32], to node: Node, names: [String]) -> Node

    /// Frees memory of the output's own; the output must not be used afterwards.
    mutating func release()
}

extension XMLBuildOutput {
    mutating func scalar(_ value: consuming Value) -> Node { leaf(value) }

    /// A member's value in its object: an element the shape expects as an array becomes an array of one.
    mutating func node(of member: XMLMember<Node>) -> Node {
        member.arrayShaped && !member.spread ? arrayOfOne(member.node) : member.node
    }
}

/// A finished attribute or child: its interned name, whether it is a wrapper's array to splice into the
/// parent's array, and its value.
struct XMLMember<Node> {
    var name: Int32
    var spread: Bool
    /// Whether the shape expects an array at this name (an element of one still becomes an array).
    var arrayShaped: Bool
    var node: Node
    /// For an empty element the shape expects as a list (`<tag/>`, read alone as `[]`): its value as one
    /// item among repeated siblings (`""` for text, `{}` for an object).
    var emptyItem: Node? = nil
}

/// The state of one parse, whatever it builds: a stack of open elements, the members and text they have
/// collected so far, the interned names, the shapes resolved from the model's, and the limits.
///
/// Names are interned per parse (libxml2 hands out dictionary pointers, so one lookup by pointer replaces a
/// string per callback), and text accumulates in one byte stack shared by all open elements.
struct XMLBuilder<Output: XMLBuildOutput> {
    typealias Member = XMLMember<Output.Node>

    var output: Output
    var context: xmlParserCtxtPtr?
    /// The names in the context's dictionary before this parse (a kept context's holds earlier parses' names).
    var namesBefore = 0
    /// Whether the start tag being read brought a name the builder had not seen (libxml2 may have just added it
    /// to its dictionary).
    var namesGrew = false
    let rootShape: ValueShape
    /// The limits checked on every event.
    let limits: DecodingLimits
    /// Elements, attributes and namespace declarations read so far (`limits.maximumTotalValues`).
    var totalNodes = 0
    var frames = XMLStack<XMLFrame>(capacity: 32)
    var members: [Member] = []
    var text = XMLStack<UInt8>(capacity: 256)
    var nameIDs = XMLNameTable()
    /// Guesses of the next start tag's name, by where it starts (``guessSlot(parent:)``): documents repeat the
    /// same children in the same order, so most start tags are the name seen at the same place before, told by
    /// comparing libxml2's two name pointers instead of looking them up in ``nameIDs``.
    var guesses: XMLStack<XMLNameGuess>
    /// Interned names by id; `names[0]` is `#text`. From the registry, and grown by this parse.
    var names: [String]
    /// Names by their text, for the ids of the registry.
    var nameIDsByText: [String: Int32]
    /// Whether an id already stands for a key of this parse (indexed by id; grown on demand): a name
    /// that two keys spell alike gets an id per key, as in a parse without a registry.
    var claimed: [Bool] = []
    /// Resolved shapes by id; id 0 is "anything".
    var resolvedShapes: [XMLResolvedShape]
    /// (parent shape id, child name id) → resolved shape id.
    var shapeCache: XMLIDTable
    /// Per shape id, the name ids of its required arrays (resolved lazily).
    var requiredIDs: [[Int32]?]
    /// The resolved id of the root shape (`-1` until registered).
    var rootShapeID: Int32
    /// The size of the registry the parse started from, to tell whether it learned anything.
    private let registrySize: (names: Int, shapes: Int, cache: Int)
    /// The kept registry the parse started from (``XMLRegistry/token``; 0 for a new one).
    let registryToken: Int
    /// The first failure (only when the output describes failures).
    var failure: CourierError?
    /// Whether the parse failed or stopped (checked on every event; cheaper than testing an optional).
    var failed = false
    /// An encoding error reported outside the parser, used when the parser reports nothing else.
    var pendingFailure: CourierError?
    /// The finished root element.
    var root: Output.Node?
    /// The interned name of the root element (`-1` before it starts).
    var rootName: Int32 = -1
    /// Whether the parse tells libxml2 that a UTF-8 document in memory is whole (see
    /// ``startDocument()``); `false` only in tests that compare both ways.
    var marksWholeInput = true
    /// Whether the parse takes a kept parser context from ``XMLParserPool`` and hands it back; `false` only
    /// in tests that compare a fresh context with a kept one.
    var reusesParser = true
    /// Whether start tags are first checked against the name guessed for their place (``guesses``); `false`
    /// only in tests that compare both ways.
    var guessesNames = true
    /// Whether libxml2 reads the tags without namespace processing (its SAX1 start and end tags, about a tenth
    /// faster): only for a UTF-8 document whose tags can have no prefix, namespace declaration or attribute
    /// (``XMLStartTagScanner/hasPlainTags(_:)``), whose events are then those of namespace processing. A
    /// start tag that brings attributes anyway, or input that is not UTF-8, stops the parse.
    var readsPlainTags = false

    /// A builder starting from what earlier parses with the same root shape learned (see
    /// ``XMLRegistry``).
    init(output: consuming Output, shape: ValueShape, limits: DecodingLimits) {
        let registry = XMLRegistry.cached(for: shape)
        self.output = output
        self.rootShape = shape
        self.limits = limits
        names = registry.names
        nameIDsByText = registry.nameIDs
        resolvedShapes = registry.resolvedShapes
        shapeCache = registry.shapeCache
        requiredIDs = registry.requiredIDs
        rootShapeID = registry.rootShapeID
        registrySize = (names.count, resolvedShapes.count, shapeCache.count)
        registryToken = registry.token
        // Two slots per shape the registry knows (see `guessSlot(parent:)`).
        guesses = XMLStack(capacity: 2 * resolvedShapes.count + 2)
        members.reserveCapacity(64)
    }

    /// Keeps what this parse learned about names and shapes for the next parse with the same root shape.
    func keepRegistry() {
        guard names.count > registrySize.names || resolvedShapes.count > registrySize.shapes
            || shapeCache.count > registrySize.cache
        else { return }
        XMLRegistry.keep(
            XMLRegistry(
                rootShape: rootShape, names: names, nameIDs: nameIDsByText, resolvedShapes: resolvedShapes,
                shapeCache: shapeCache, requiredIDs: requiredIDs, rootShapeID: rootShapeID))
    }

    /// Whether the parse learned no name: every id it interned is one of its registry's, so that its
    /// interning table holds for the next parse from the same registry on the same parser context.
    var learnedNoName: Bool { names.count == registrySize.names }

    /// Frees the stacks in memory of their own; the builder must not be used afterwards.
    mutating func release() {
        frames.release()
        text.release()
        guesses.release()
        output.release()
    }

    // MARK: Names

    private mutating func intern(
        prefix: UnsafePointer<xmlChar>?, local: UnsafePointer<xmlChar>?, kind: UInt8
    ) -> Int32 {
        let key = XMLNameKey(prefix: UnsafeRawPointer(prefix), local: UnsafeRawPointer(local), kind: kind)
        if let id = nameIDs.find(key) { return id }
        var name: String
        switch kind {
        case 2: name = "@xmlns"
        case 1: name = "@"
        default: name = ""
        }
        if let prefix {
            if kind == 2 {
                name += ":"
                name += String(cString: prefix)
            } else {
                name += String(cString: prefix)
                name += ":"
            }
        }
        if kind != 2, let local { name += String(cString: local) }
        var id = nameIDsByText[name] ?? -1
        if id >= 0, Int(id) < claimed.count, claimed[Int(id)] { id = -1 }
        if id < 0 {
            id = Int32(names.count)
            names.append(name)
            if nameIDsByText[name] == nil { nameIDsByText[name] = id }
        }
        if claimed.count < names.count { claimed.append(contentsOf: repeatElement(false, count: names.count - claimed.count)) }
        claimed[Int(id)] = true
        nameIDs.insert(key, id)
        namesGrew = true
        return id
    }

    /// Fails when this document has added more than `limits.maximumDistinctNames` names to libxml2's
    /// dictionary. libxml2 2.9 keeps every name it reads there (element and attribute names, namespace prefixes
    /// and URIs, processing-instruction targets, declared names) in a table that stops growing at 16,384
    /// chains, so past some 50,000 names each lookup walks a longer chain and the parse turns quadratic.
    /// Called where a name can be new: a start tag that brought one or declares namespaces, and every
    /// processing instruction and declaration.
    mutating func checkDistinctNames() {
        guard !failed, let context, let dictionary = context.pointee.dict else { return }
        if Int(xmlDictSize(dictionary)) - namesBefore > limits.maximumDistinctNames {
            failLimit("the document uses more distinct names", "maximumDistinctNames", limits.maximumDistinctNames)
        }
    }

    // MARK: Shapes

    /// Unwraps `shape` for an element and stores it; returns its id (0 for anything).
    private mutating func register(_ shape: ValueShape) -> Int32 {
        var shape = shape
        var optional = false
        if case .optional(let wrapped) = shape {
            shape = wrapped.unwrapped
            optional = true
        }
        var arrayMember = false
        if case .array(let element) = shape {
            arrayMember = true
            shape = element
            if case .optional(let wrapped) = shape {
                shape = wrapped.unwrapped
                optional = true
            }
        }
        if case .any = shape, !optional, !arrayMember { return 0 }
        var requiredArrays: [String] = []
        if case .object(let members) = shape {
            requiredArrays = members.compactMap { member -> String? in
                if case .array = member.value { return member.key }
                return nil
            }.sorted()
        }
        resolvedShapes.append(
            XMLResolvedShape(
                shape: shape, optional: optional, arrayMember: arrayMember, requiredArrays: requiredArrays,
                scalarKind: XMLMapping.scalarKind(of: shape)))
        requiredIDs.append(nil)
        return Int32(resolvedShapes.count - 1)
    }

    /// The resolved shape of a child named `name` (`-1`: a wrapper's item) of an element whose shape has
    /// id `parent`, computing it the first time (as the shape's member named `name`, or the shape itself
    /// for a wrapper's item).
    private mutating func resolve(parent: Int32, name: Int32) -> Int32 {
        let key = UInt64(UInt32(bitPattern: parent)) << 32 | UInt64(UInt32(bitPattern: name))
        if let id = shapeCache.find(key) { return id }
        let shape = resolvedShapes[Int(parent)].shape
        let id = register(name < 0 ? shape : shape.member(names[Int(name)]))
        shapeCache.insert(key, id)
        return id
    }

    /// Whether an element that the parent expects as an array, with element shape `shape`, is a wrapper
    /// of `child` elements rather than one element of the array (static: a method would copy the builder).
    private static func isWrapper(_ shape: ValueShape, child: String) -> Bool {
        switch shape {
        case .object(let members): return members[child] == nil
        case .map: return false
        default: return true
        }
    }

    /// The name ids of the members an object of shape `shapeID` always has as arrays. They are names of
    /// their own, appended to ``names``: members are matched to them by name, not by id.
    private mutating func requiredArrays(_ shapeID: Int32) -> [Int32] {
        if let known = requiredIDs[Int(shapeID)] { return known }
        var ids: [Int32] = []
        for key in resolvedShapes[Int(shapeID)].requiredArrays {
            ids.append(Int32(names.count))
            names.append(key)
        }
        requiredIDs[Int(shapeID)] = ids
        return ids
    }

    // MARK: Events

    mutating func startElement(_ tag: XMLStartTag) {
        guard !failed else { return }
        let (localname, prefix, namespaces, attributes) = (tag.localname, tag.prefix, tag.namespaces, tag.attributes)
        let (namespaceCount, attributeCount) = (tag.namespaceCount, tag.attributeCount)
        if frames.count >= limits.maximumDepth {
            return stop {
                CourierError(
                    .depthLimitExceeded,
                    detail:
                        "the XML document nests deeper than the limit of \($0.limits.maximumDepth) elements (maximumDepth)",
                    context: $0.position())
            }
        }
        totalNodes += 1 + namespaceCount + attributeCount
        if totalNodes > limits.maximumTotalValues {
            return failLimit(
                "the document has more elements and attributes", "maximumTotalValues", limits.maximumTotalValues)
        }
        if attributeCount + namespaceCount > limits.maximumAttributesPerElement {
            return failLimit(
                "an element has more attributes", "maximumAttributesPerElement", limits.maximumAttributesPerElement)
        }
        if let p = frames.count > 0 ? frames.count - 1 : nil,
            frames[p].childCount + frames[p].attributeCount >= limits.maximumContainerCount
        {
            return failLimit(
                "an element has more children and attributes", "maximumContainerCount", limits.maximumContainerCount)
        }
        let slot = !guessesNames || frames.isEmpty ? -1 : guessSlot(parent: frames[frames.count - 1])
        let name: Int32
        if slot >= 0, slot < guesses.count, guesses[slot].local == UnsafeRawPointer(localname),
            guesses[slot].prefix == UnsafeRawPointer(prefix)
        {
            name = guesses[slot].name
        } else {
            name = intern(prefix: prefix, local: localname, kind: 0)
            if slot >= 0 { guess(name, local: localname, prefix: prefix, at: slot) }
        }

        // The element's shape comes from its parent (or the hints, for the root), resolved once per
        // (parent shape, name) and then read from the cache.
        var resolvedID: Int32 = 0
        if !frames.isEmpty {
            let p = frames.count - 1
            defer { frames[p].lastChildShape = resolvedID }
            frames[p].childCount += 1
            if frames[p].childCount == 1 { frames[p].firstChild = name }
            if frames[p].wrapper {
                if name != frames[p].firstChild {
                    return failMismatch(
                        "the array <\(names[Int(frames[p].name)])> holds <\(names[Int(frames[p].firstChild)])> "
                            + "elements but also <\(names[Int(name)])>",
                        pending: .index(frames[p].childCount - 1))
                }
                resolvedID = resolve(parent: frames[p].shapeID, name: -1, guessedAt: slot)
            } else if frames[p].shapeID != 0 {
                if frames[p].childCount == 1, frames[p].arrayMember,
                    Self.isWrapper(resolvedShapes[Int(frames[p].shapeID)].shape, child: names[Int(name)])
                {
                    frames[p].wrapper = true
                    resolvedID = resolve(parent: frames[p].shapeID, name: -1, guessedAt: slot)
                } else {
                    resolvedID = resolve(parent: frames[p].shapeID, name: name, guessedAt: slot)
                }
            }
        } else {
            rootName = name
            if rootShapeID < 0 { rootShapeID = register(rootShape) }
            resolvedID = rootShapeID
        }
        let optional = resolvedShapes[Int(resolvedID)].optional
        let arrayMember = resolvedShapes[Int(resolvedID)].arrayMember
        let scalarKind = resolvedShapes[Int(resolvedID)].scalarKind

        // Namespace declarations and attributes become "@…" members, in document order.
        let membersStart = members.count
        var isNil = false
        frames.append(
            XMLFrame(
                name: name, shapeID: resolvedID, optional: optional, scalarKind: scalarKind, arrayMember: arrayMember, wrapper: false, isNil: false, textStart: text.count,
                membersStart: membersStart, attributeCount: 0, childCount: 0, firstChild: -1, lastChildShape: 0))
        if namespaceCount > 0, let namespaces {
            for i in 0..<namespaceCount {
                let id = intern(prefix: namespaces[2 * i], local: nil, kind: 2)
                let uri = namespaces[2 * i + 1].map { String(cString: $0) } ?? ""
                members.append(Member(name: id, spread: false, arrayShaped: false, node: output.leaf(.string(uri))))
            }
        }
        if attributeCount > 0, let attributes {
            for i in 0..<attributeCount {
                let base = 5 * i
                let id = intern(prefix: attributes[base + 1], local: attributes[base], kind: 1)
                guard let start = attributes[base + 3], let end = attributes[base + 4] else { continue }
                if end - start > limits.maximumStringLength {
                    return failLimit(
                        "an attribute value is longer", "maximumStringLength", limits.maximumStringLength,
                        pending: .key(names[Int(id)]))
                }
                let bytes = UnsafeBufferPointer(start: start, count: end - start)
                // Without entity substitution libxml2 hands `&` back as the character reference `&#38;`.
                let string: String
                if UnsafeRawBufferPointer(bytes).contains(UInt8(ascii: "&")) {
                    string = XMLParse.decodeAmpersands(bytes)
                } else {
                    string = XMLMapping.string(bytes)
                }
                if let uri = attributes[base + 2], xmlStrEqual(uri, XMLParse.xsiURI) != 0,
                    xmlStrEqual(attributes[base], XMLParse.nilName) != 0
                {
                    if string == "true" || string == "1" { isNil = true }
                    continue
                }
                var value = Value.string(string)
                let attributeShape = resolvedShapes[Int(resolvedID)].shape.member(names[Int(id)])
                if attributeShape != .any, attributeShape != .string {
                    var utf8 = string
                    let converted = utf8.withUTF8 { buffer in
                        Result { () throws(XMLMapping.Mismatch) in
                            try XMLMapping.scalar(buffer, shape: attributeShape.unwrapped, optional: true)
                        }
                    }
                    switch converted {
                    case .success(let v): value = v
                    case .failure(let error):
                        return failMismatch("is \"\(string)\", expected \(error.expected)", pending: .key(names[Int(id)]))
                    }
                }
                members.append(Member(name: id, spread: false, arrayShaped: false, node: output.leaf(value)))
            }
        }
        frames[frames.count - 1].isNil = isNil
        frames[frames.count - 1].attributeCount = members.count - membersStart
        if namesGrew || namespaceCount > 0 {
            namesGrew = false
            checkDistinctNames()
        }
    }

    /// Where the guess for the next child of `parent` is kept: after a child of a known shape, the slot of that
    /// shape's next sibling; for the first child of an element of a known shape, that shape's first child; `-1`
    /// otherwise. (A shape id other than 0 stands for one (parent shape, name) pair.)
    @inline(__always)
    private func guessSlot(parent: XMLFrame) -> Int {
        if parent.lastChildShape > 0 { return 2 * Int(parent.lastChildShape) + 1 }
        if parent.childCount == 0, parent.shapeID > 0 { return 2 * Int(parent.shapeID) }
        return -1
    }

    /// Remembers that the name at `slot` was `name`, spelled by libxml2's pointers `local` and `prefix`.
    private mutating func guess(
        _ name: Int32, local: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, at slot: Int
    ) {
        while guesses.count <= slot { guesses.append(XMLNameGuess(local: nil, prefix: nil, name: -1)) }
        guesses[slot] = XMLNameGuess(
            local: UnsafeRawPointer(local), prefix: prefix.map(UnsafeRawPointer.init), name: name)
    }

    /// ``resolve(parent:name:)``, answered from the guess at `slot` when the guess holds the same question.
    @inline(__always)
    private mutating func resolve(parent: Int32, name: Int32, guessedAt slot: Int) -> Int32 {
        guard slot >= 0, slot < guesses.count else { return resolve(parent: parent, name: name) }
        if guesses[slot].resolvedParent == parent, guesses[slot].resolvedName == name { return guesses[slot].resolved }
        let id = resolve(parent: parent, name: name)
        guesses[slot].resolvedParent = parent
        guesses[slot].resolvedName = name
        guesses[slot].resolved = id
        return id
    }

    /// A start tag read without namespace processing (``readsPlainTags``): its name is the local name.
    mutating func startPlainElement(
        _ name: UnsafePointer<xmlChar>?, attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard let name, attributes == nil else {
            return stop { CourierError(.malformedInput, detail: "a start tag has attributes", context: $0.position()) }
        }
        startElement(
            XMLStartTag(
                localname: name, prefix: nil, namespaceCount: 0, namespaces: nil, attributeCount: 0, attributes: nil))
    }

    mutating func characters(_ bytes: UnsafePointer<xmlChar>?, _ length: Int) {
        guard !failed, let bytes, length > 0, !frames.isEmpty else { return }
        if text.count - frames[frames.count - 1].textStart + length > limits.maximumStringLength {
            return failLimit("the text of an element is longer", "maximumStringLength", limits.maximumStringLength)
        }
        text.append(bytes, count: length)
    }

    mutating func endElement() {
        guard !failed, !frames.isEmpty else { return }
        let frame = frames.removeLast()
        var node: Output.Node
        let spread: Bool
        var emptyItem: Output.Node?
        do {
            (node, spread) = try finish(frame)
            if spread, frame.arrayMember, !frame.wrapper, output.itemCount(node) == 0,
                let item = try? XMLMapping.scalar(
                    UnsafeBufferPointer(start: nil, count: 0), shape: resolvedShapes[Int(frame.shapeID)].shape,
                    optional: frame.optional)
            {
                emptyItem = output.leaf(item)
            }
            // A list written as repeated siblings has no element at all when it is empty.
            if frame.shapeID != 0, !resolvedShapes[Int(frame.shapeID)].requiredArrays.isEmpty {
                let required = requiredArrays(frame.shapeID)
                if !required.isEmpty { node = output.addingRequiredArrays(required, to: node, names: names) }
            }
        } catch {
            frames.append(frame)  // for the coding path
            return failMismatch(error.expected)
        }
        text.truncate(to: frame.textStart)
        if members.count > frame.membersStart { members.removeLast(members.count - frame.membersStart) }
        if frames.isEmpty {
            root = frame.arrayMember && !spread ? output.arrayOfOne(node) : node
        } else {
            members.append(
                Member(name: frame.name, spread: spread, arrayShaped: frame.arrayMember, node: node, emptyItem: emptyItem))
        }
    }

    /// The value of a closing element, and whether it is a wrapper's array.
    private mutating func finish(_ frame: XMLFrame) throws(XMLMapping.Mismatch) -> (Output.Node, Bool) {
        if frame.isNil { return (output.leaf(.null), false) }
        let textCount = text.count - frame.textStart
        if frame.wrapper {
            return (output.array(of: members[(frame.membersStart + frame.attributeCount)...]), true)
        }
        if frame.childCount == 0 && frame.attributeCount == 0 {
            if frame.arrayMember, textCount == 0 { return (output.array([]), true) }
            let bytes = text.elements(from: frame.textStart)
            let value =
                if let kind = frame.scalarKind {
                    try XMLMapping.scalar(bytes, kind: kind, optional: frame.optional)
                } else {
                    try XMLMapping.scalar(bytes, shape: resolvedShapes[Int(frame.shapeID)].shape, optional: frame.optional)
                }
            return (frame.scalarKind != nil ? output.scalar(value) : output.leaf(value), false)
        }
        // An object: attributes, then children grouped by name, then text.
        var textNode: Output.Node?
        if textCount > 0 {
            var t = text.elements(from: frame.textStart)
            if frame.childCount > 0 { t = XMLMapping.trimmed(t) }
            if frame.childCount == 0 || !t.isEmpty {
                let shape = resolvedShapes[Int(frame.shapeID)].shape
                var textShape = shape.member(XMLParse.textKey)
                switch shape {
                case .bool, .integer, .number, .bytes, .string: textShape = shape
                default: break
                }
                textNode = output.leaf(try XMLMapping.scalar(t, shape: textShape.unwrapped, optional: frame.optional))
            }
        }
        let start = frame.membersStart
        // The members are read in place (a slice of `members` would retain its buffer once per object).
        if members.withUnsafeBufferPointer({ hasRepeats(UnsafeBufferPointer(rebasing: $0[start...])) }) {
            let slice = members[start...]
            var order: [Int32] = []
            var groups: [Int32: [Member]] = [:]
            for m in slice {
                if groups[m.name] == nil { order.append(m.name) }
                groups[m.name, default: []].append(m)
            }
            var keys: [Int32] = []
            var values: [Output.Node] = []
            keys.reserveCapacity(order.count + 1)
            values.reserveCapacity(order.count + 1)
            for id in order {
                keys.append(id)
                values.append(combine(groups[id]!))
            }
            if let textNode {
                keys.append(0)
                values.append(textNode)
            }
            return (output.object(keys: keys, values: values, names: names), false)
        }
        let node = members.withUnsafeBufferPointer { all in
            output.object(
                element: frame.name, members: UnsafeBufferPointer(rebasing: all[start...]), text: textNode,
                names: names)
        }
        return (node, false)
    }

    /// The value of the repeated siblings `group`: their items in one array.
    private mutating func combine(_ group: [Member]) -> Output.Node {
        if group.count == 1 { return output.node(of: group[0]) }
        var elements: [Output.Node] = []
        elements.reserveCapacity(group.count)
        for m in group {
            if let item = m.emptyItem {
                // One empty element among repeated siblings is an empty item, not an empty list.
                elements.append(item)
            } else if !m.spread || !output.appendItems(of: m.node, to: &elements) {
                elements.append(m.node)
            }
        }
        return output.array(elements)
    }

    private func hasRepeats(_ slice: UnsafeBufferPointer<Member>) -> Bool {
        let n = slice.count
        if n < 2 { return false }
        // Names with ids below 64 (a document's usual names): one bit each.
        var bits: UInt64 = 0
        var k = slice.startIndex
        while k < slice.endIndex, UInt32(bitPattern: slice[k].name) < 64 {
            let bit = UInt64(1) << UInt64(slice[k].name)
            if bits & bit != 0 { return true }
            bits |= bit
            k += 1
        }
        if k == slice.endIndex { return false }
        if n <= 16 {
            var i = slice.startIndex
            while i < slice.endIndex {
                let name = slice[i].name
                var j = i + 1
                while j < slice.endIndex {
                    if slice[j].name == name { return true }
                    j += 1
                }
                i += 1
            }
            return false
        }
        var seen = Set<Int32>(minimumCapacity: n)
        for m in slice where !seen.insert(m.name).inserted { return true }
        return false
    }

    // MARK: The input

    /// Called once the XML declaration is read (and any encoding switch made): when the document is
    /// UTF-8 as it stands (no encoder converts it) and parsed from the one input holding all of it, tells
    /// libxml2 that this input will not grow. libxml2 then skips its per-token refill and shrink checks
    /// near the input's end (`GROW`/`SHRINK`, as it does for a push parser's buffer). The bytes it reads
    /// and the events it delivers are the same: a memory input has nothing to refill, and one that an
    /// encoder converts keeps them, as it converts on refill.
    ///
    /// Also takes the dictionary's size again as this document's baseline for ``checkDistinctNames()``: by now
    /// libxml2 has interned the names it adds to every parse ("xml", "xmlns" and the XML namespace), which a
    /// new context's dictionary does not hold yet and a kept one does.
    mutating func startDocument() {
        if let dictionary = context?.pointee.dict { namesBefore = Int(xmlDictSize(dictionary)) }
        if readsPlainTags, let buffer = context?.pointee.input?.pointee.buf,
            buffer.pointee.encoder != nil || buffer.pointee.raw != nil
        {
            // Converted input: the bytes checked for plain tags were not UTF-8.
            return stop { CourierError(.malformedInput, detail: "the document is not UTF-8", context: $0.position()) }
        }
        guard marksWholeInput, let context, context.pointee.inputNr == 1, let input = context.pointee.input,
            let buffer = input.pointee.buf, buffer.pointee.encoder == nil, buffer.pointee.raw == nil
        else { return }
        context.pointee.progressive = 1
    }

    // MARK: Failures

    /// The current line and column of the parser.
    func position() -> CourierError.Context {
        guard let context, let input = context.pointee.input else { return .init() }
        return .init(line: Int(input.pointee.line), column: Int(input.pointee.col))
    }

    /// The coding path of the element being read.
    private func codingPath() -> [PathComponent] {
        var path: [PathComponent] = []
        guard frames.count > 1 else { return path }
        for i in 1..<frames.count {
            let parent = frames[i - 1]
            if parent.wrapper {
                path.append(.index(parent.childCount - 1))
                continue
            }
            path.append(.key(names[Int(frames[i].name)]))
            let earlier = members[(parent.membersStart + parent.attributeCount)..<frames[i].membersStart].reduce(0) {
                count, m in
                guard m.name == frames[i].name else { return count }
                if m.spread, let items = output.itemCount(m.node) { return count + items }
                return count + 1
            }
            if (frames[i].arrayMember && !frames[i].wrapper) || earlier > 0 { path.append(.index(earlier)) }
        }
        return path
    }

    /// Records the first failure, described by `describe` when the output describes failures, and stops
    /// the parser. Only for failures found in SAX callbacks, where libxml2 supports `xmlStopParser`;
    /// errors libxml2 reports itself go through ``record(_:)``.
    mutating func stop(_ describe: (Self) -> CourierError) {
        guard !failed else { return }
        if Output.describesFailures { failure = describe(self) }
        failed = true
        if let context { xmlStopParser(context) }
    }

    /// Records the first failure libxml2 reported. The parser is not stopped from its own error handler
    /// (halting it mid encoding switch crashes libxml2 2.9); after a fatal error it delivers no more SAX
    /// events and winds down by itself.
    private mutating func record(_ error: CourierError) {
        guard !failed else { return }
        failure = error
        failed = true
    }

    /// The context of a failure at the element being read (plus `pending`).
    private func failureContext(pending: PathComponent?) -> (context: CourierError.Context, path: String) {
        var context = position()
        context.codingPath = codingPath()
        if let pending { context.codingPath.append(pending) }
        return (context, PathComponent.render(context.codingPath))
    }

    private mutating func failMismatch(_ detail: String, pending: PathComponent? = nil) {
        stop {
            let (context, path) = $0.failureContext(pending: pending)
            return CourierError(.typeMismatch, detail: path.isEmpty ? detail : "\(path): \(detail)", context: context)
        }
    }

    /// Stops the parse with ``CourierError/Code/sizeLimitExceeded``: "`what` than the limit `limit` =
    /// `value`", with the coding path (plus `pending`), line and column.
    private mutating func failLimit(_ what: String, _ limit: String, _ value: Int, pending: PathComponent? = nil) {
        stop {
            let (context, path) = $0.failureContext(pending: pending)
            let place = path.isEmpty ? "at the root element" : "at \(path)"
            return CourierError(
                .sizeLimitExceeded,
                detail:
                    "\(what) than the limit \(limit) = \(value) \(place), line \(context.line ?? 0), column \(context.column ?? 0)",
                context: context)
        }
    }

    /// A declaration in the document type: the pivot refuses it when `refusal` is given and lets it pass
    /// otherwise; the tape always leaves such a document to the pivot.
    mutating func declaration(refusal: @autoclosure () -> String?) {
        if Output.describesFailures {
            guard let refusal = refusal() else { return }
            stop { CourierError(.unsafeInput, detail: refusal, context: $0.position()) }
        } else {
            stop { _ in CourierError(.unsafeInput) }
        }
    }

    mutating func libxml2Error(_ error: xmlError) {
        guard !failed else { return }
        guard error.level.rawValue >= XML_ERR_ERROR.rawValue else { return }  // warnings are not failures
        guard Output.describesFailures else {
            failed = true  // recorded only: the pivot will say what it was
            return
        }
        var message = error.message.map { String(cString: $0) } ?? "XML syntax error"
        while let last = message.last, last.isNewline || last == " " { message.removeLast() }
        if error.domain == Int32(XML_FROM_I18N.rawValue) {
            // Raised outside the parser, without a position: keep it in case the parser reports nothing
            // better, and let the parser go on to say where it stopped.
            if pendingFailure == nil {
                pendingFailure = CourierError(
                    .malformedInput, detail: message, context: position(), underlying: XMLReader.EncodingComplaint())
            }
            return
        }
        let context = CourierError.Context(line: Int(error.line), column: Int(error.int2))
        let code = xmlParserErrors(rawValue: UInt32(bitPattern: error.code))
        switch code {
        case XML_ERR_INTERNAL_ERROR where frames.count >= XMLReader.libxml2MaximumDepth:
            record(
                CourierError(
                    .depthLimitExceeded,
                    detail:
                        "the XML document nests deeper than libxml2's limit of \(XMLReader.libxml2MaximumDepth) elements",
                    context: context))
        case _ where pendingFailure != nil:
            record(
                CourierError(.malformedInput, detail: message, context: context, underlying: XMLReader.EncodingComplaint()))
        case XML_ERR_INVALID_CHAR, XML_ERR_INVALID_ENCODING, XML_ERR_UNSUPPORTED_ENCODING, XML_ERR_UNKNOWN_ENCODING,
            XML_ERR_INVALID_CHARREF:
            record(
                CourierError(.malformedInput, detail: message, context: context, underlying: XMLReader.EncodingComplaint()))
        case XML_ERR_ENTITY_LOOP, XML_ERR_ENTITY_BOUNDARY:
            record(CourierError(.sizeLimitExceeded, detail: message, context: context))
        case XML_ERR_EXT_ENTITY_STANDALONE, XML_ERR_ENTITY_IS_EXTERNAL, XML_ERR_UNPARSED_ENTITY:
            record(CourierError(.unsafeInput, detail: message, context: context))
        default:
            record(CourierError(.malformedInput, detail: message, context: context))
        }
    }
}

// MARK: - The parse

/// Runs libxml2's SAX2 parser over a document into an ``XMLBuilder``: one SAX handler for both builders.
enum XMLParse {
    static let textKey = "#text"
    static let xsiURI: [xmlChar] = Array(XMLMapping.xsiNamespace.utf8) + [0]
    static let nilName: [xmlChar] = Array("nil".utf8) + [0]

    /// What a SAX callback's user data points to: the builder, and which of the two it is.
    private struct Target {
        var isTape: Bool
        var builder: UnsafeMutableRawPointer
    }

    /// Parses `raw` into `builder` with a parser context from ``XMLParserPool``; returns whether libxml2
    /// found the document well-formed, or `nil` when it could not create a parser context.
    static func run<Output: XMLBuildOutput>(
        _ raw: UnsafeRawBufferPointer, into builder: inout XMLBuilder<Output>
    ) -> Bool? {
        guard let slot = XMLParserPool.take(reading: raw, kept: builder.reusesParser, handler: handler) else {
            return nil
        }
        let ctxt = slot.context
        if builder.readsPlainTags {
            ctxt.pointee.sax.pointee = plainHandler
            // libxml2 only ever turns SAX2 on (when a parse starts with a SAX2 handler): a context kept from a
            // namespace-processing parse still has it on.
            ctxt.pointee.sax2 = 0
        }
        // Names interned by an earlier parse on this context (same dictionary, so the same pointers) from
        // the same registry have the same ids.
        if builder.registryToken != 0, slot.namesToken == builder.registryToken, let known = slot.nameIDs {
            builder.nameIDs = known
        }
        var wellFormed = false
        defer {
            let reusable = builder.reusesParser && wellFormed && !builder.failed && builder.pendingFailure == nil
            if reusable, builder.registryToken != 0, builder.learnedNoName {
                slot.nameIDs = builder.nameIDs
                slot.namesToken = builder.registryToken
            }
            if builder.readsPlainTags { ctxt.pointee.sax.pointee = handler }
            XMLParserPool.give(slot, reusable: reusable)
        }
        builder.context = ctxt
        builder.namesBefore = ctxt.pointee.dict.map { Int(xmlDictSize($0)) } ?? 0
        defer { builder.context = nil }
        wellFormed = withUnsafeMutablePointer(to: &builder) { pointer in
            var target = Target(isTape: Output.self == XMLTapeOutput.self, builder: UnsafeMutableRawPointer(pointer))
            return withUnsafeMutablePointer(to: &target) { target in
                ctxt.pointee.userData = UnsafeMutableRawPointer(target)
                // NONET: never touch the network. Deliberately absent: NOENT (no entity substitution),
                // DTDLOAD/DTDATTR/DTDVALID (no DTD is read), HUGE (keep libxml2's size and depth limits),
                // RECOVER. libxml2 2.9 has no XML_PARSE_NO_XXE; our callbacks refuse any entity declaration
                // and any external DTD before it could be used.
                _ = xmlCtxtUseOptions(ctxt, Int32(XML_PARSE_NONET.rawValue))
                // Errors raised outside the parser context (encoding conversion) go to this thread's global
                // handlers, which would print to stderr: capture them for the duration of the parse.
                let savedHandlers = courier_xml_capture_errors(
                    { ctx, error in
                        guard let error else { return }
                        XMLParse.libxml2Error(ctx, error.pointee)
                    }, UnsafeMutableRawPointer(target))
                _ = xmlParseDocument(ctxt)
                courier_xml_restore_errors(savedHandlers)
                return ctxt.pointee.wellFormed != 0
            }
        }
        return wellFormed
    }

    /// Runs `tree` or `tape` on the builder `ctx` points to: the one branch per event that lets both
    /// builders share a handler (C callbacks cannot be generic).
    @inline(__always)
    fileprivate static func on(
        _ ctx: UnsafeMutableRawPointer?, tree: (inout XMLBuilder<XMLTreeOutput>) -> Void,
        tape: (inout XMLBuilder<XMLTapeOutput>) -> Void
    ) {
        let target = ctx!.assumingMemoryBound(to: Target.self).pointee
        if target.isTape {
            tape(&target.builder.assumingMemoryBound(to: XMLBuilder<XMLTapeOutput>.self).pointee)
        } else {
            tree(&target.builder.assumingMemoryBound(to: XMLBuilder<XMLTreeOutput>.self).pointee)
        }
    }

    fileprivate static func characters(_ ctx: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<xmlChar>?, _ length: Int32) {
        on(ctx, tree: { $0.characters(bytes, Int(length)) }, tape: { $0.characters(bytes, Int(length)) })
    }

    fileprivate static func declaration(_ ctx: UnsafeMutableRawPointer?, refusal: @autoclosure () -> String?) {
        on(ctx, tree: { $0.declaration(refusal: refusal()) }, tape: { $0.declaration(refusal: nil) })
        names(ctx)
    }

    /// A processing instruction or a declaration was read, whose names libxml2 has interned.
    fileprivate static func names(_ ctx: UnsafeMutableRawPointer?) {
        on(ctx, tree: { $0.checkDistinctNames() }, tape: { $0.checkDistinctNames() })
    }

    fileprivate static func libxml2Error(_ ctx: UnsafeMutableRawPointer?, _ error: xmlError) {
        guard ctx != nil else { return }
        on(ctx, tree: { $0.libxml2Error(error) }, tape: { $0.libxml2Error(error) })
    }

    private static func makeHandler() -> xmlSAXHandler {
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startDocument = { ctx in XMLParse.on(ctx, tree: { $0.startDocument() }, tape: { $0.startDocument() }) }
        sax.startElementNs = { ctx, localname, prefix, _, nbNamespaces, namespaces, nbAttributes, _, attributes in
            let tag = XMLStartTag(
                localname: localname!, prefix: prefix, namespaceCount: Int(nbNamespaces), namespaces: namespaces,
                attributeCount: Int(nbAttributes), attributes: attributes)
            XMLParse.on(ctx, tree: { $0.startElement(tag) }, tape: { $0.startElement(tag) })
        }
        sax.endElementNs = { ctx, _, _, _ in XMLParse.on(ctx, tree: { $0.endElement() }, tape: { $0.endElement() }) }
        sax.characters = { ctx, bytes, length in XMLParse.characters(ctx, bytes, length) }
        sax.cdataBlock = { ctx, bytes, length in XMLParse.characters(ctx, bytes, length) }
        sax.ignorableWhitespace = { ctx, bytes, length in XMLParse.characters(ctx, bytes, length) }
        // The DTD: an internal subset may declare elements, but any entity or external DTD is refused the
        // moment it is declared, before anything could expand or load it.
        sax.internalSubset = { ctx, _, externalID, systemID in
            XMLParse.declaration(
                ctx,
                refusal: externalID != nil || systemID != nil
                    ? "the document type declaration refers to an external DTD" : nil)
        }
        sax.entityDecl = { ctx, name, type, _, systemID, _ in
            let external =
                systemID != nil || type == Int32(XML_EXTERNAL_GENERAL_PARSED_ENTITY.rawValue)
                || type == Int32(XML_EXTERNAL_PARAMETER_ENTITY.rawValue)
            let entity = name.map { String(cString: $0) } ?? ""
            XMLParse.declaration(
                ctx,
                refusal: external
                    ? "the document declares the external entity \(entity)"
                    : "the document declares the entity \(entity); entity declarations are not accepted")
        }
        // A default attribute value is copied onto every element it applies to: a small internal subset
        // would multiply into gigabytes no size limit sees in the input. Declarations without a default
        // (#IMPLIED, #REQUIRED) change nothing and pass. The callback owns the enumeration libxml2 hands it.
        sax.attributeDecl = { ctx, element, name, _, _, defaultValue, tree in
            if let tree { xmlFreeEnumeration(tree) }
            let attribute = name.map { String(cString: $0) } ?? ""
            let owner = element.map { String(cString: $0) } ?? ""
            XMLParse.declaration(
                ctx,
                refusal: defaultValue == nil
                    ? nil
                    : "the document declares a default value for the attribute \(attribute) of <\(owner)>; attribute "
                        + "defaults are not accepted (each would be copied onto every such element)")
        }
        // Processing instructions and element and notation declarations pass; their names count toward
        // `maximumDistinctNames`.
        sax.processingInstruction = { ctx, _, _ in XMLParse.names(ctx) }
        sax.elementDecl = { ctx, _, _, _ in XMLParse.names(ctx) }
        sax.notationDecl = { ctx, _, _, _ in XMLParse.names(ctx) }
        sax.unparsedEntityDecl = { ctx, name, _, _, _ in
            let entity = name.map { String(cString: $0) } ?? ""
            XMLParse.declaration(ctx, refusal: "the document declares the external unparsed entity \(entity)")
        }
        sax.resolveEntity = { ctx, _, _ in
            XMLParse.declaration(ctx, refusal: "the document asks to load an external resource")
            return nil
        }
        sax.getEntity = { _, _ in nil }
        sax.getParameterEntity = { _, _ in nil }
        sax.serror = { ctx, error in
            guard let error else { return }
            XMLParse.libxml2Error(ctx, error.pointee)
        }
        return sax
    }

    /// The SAX handler every parser context starts with, made once. (`nonisolated(unsafe)`: a C struct of function
    /// pointers that is never changed, only copied into parser contexts.)
    nonisolated(unsafe) private static let handler = makeHandler()

    /// ``handler`` with SAX1's start and end tags instead of SAX2's, made once: libxml2 then reads tags without
    /// namespace processing (``XMLBuilder/readsPlainTags``).
    nonisolated(unsafe) private static let plainHandler = makePlainHandler()

    private static func makePlainHandler() -> xmlSAXHandler {
        var sax = makeHandler()
        // Not `XML_SAX2_MAGIC`: libxml2 takes the SAX1 element callbacks.
        sax.initialized = 1
        sax.startElementNs = nil
        sax.endElementNs = nil
        sax.startElement = { ctx, name, attributes in
            XMLParse.on(
                ctx, tree: { $0.startPlainElement(name, attributes: attributes) },
                tape: { $0.startPlainElement(name, attributes: attributes) })
        }
        sax.endElement = { ctx, _ in XMLParse.on(ctx, tree: { $0.endElement() }, tape: { $0.endElement() }) }
        return sax
    }

    /// Decodes the `&#38;` references libxml2 leaves in attribute values when entities are not
    /// substituted (every `&` in such a value comes from one).
    static func decodeAmpersands(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        let reference = Array("&#38;".utf8)
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "&"), i + 5 <= bytes.count,
                UnsafeBufferPointer(rebasing: bytes[i..<(i + 5)]).elementsEqual(reference)
            {
                out.append(UInt8(ascii: "&"))
                i += 5
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Hooks for the fuzz targets, outside the public API.
@_spi(Fuzzing)
public enum XMLCodecFuzzing {
    /// Forgets the names and shapes XML parses keep per root shape across calls. LeakSanitizer cannot follow
    /// Swift's tagged pointers (an indirect `ValueShape`, a long `String`) from the process-wide cache, and
    /// would report what it holds at exit as leaked: a fuzz target calls this after each input. It frees the
    /// kept parser contexts too.
    public static func forgetKeptShapes() {
        XMLRegistry.removeAll()
        XMLParserPool.removeAll()
    }
}

// MARK: - The builder's tables

/// libxml2's `startElementNs` arguments.
struct XMLStartTag {
    var localname: UnsafePointer<xmlChar>
    var prefix: UnsafePointer<xmlChar>?
    var namespaceCount: Int
    /// Prefix and URI of each namespace declaration.
    var namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    var attributeCount: Int
    /// Local name, prefix, URI, value start and value end of each attribute.
    var attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
}

/// What parses learn about names and shapes that does not depend on the document: the interned names and
/// the shapes resolved from one root shape. Kept per root shape across parses, so that a document whose
/// names were seen before resolves none of its model's shape again and makes no string for its names.
///
/// At most ``maximumKept`` registries are kept, each only while it stays small (a document of many
/// distinct names leaves nothing behind). A parse works on its own copy; the last parse to learn something
/// replaces the kept registry.
struct XMLRegistry: Sendable {
    var rootShape: ValueShape
    var names: [String] = [XMLParse.textKey]
    var nameIDs: [String: Int32] = [:]
    var resolvedShapes: [XMLResolvedShape] = [XMLResolvedShape(shape: .any, optional: false, arrayMember: false)]
    var shapeCache = XMLIDTable()
    var requiredIDs: [[Int32]?] = [nil]
    var rootShapeID: Int32 = -1
    /// Tells kept registries apart: a new number each time one is kept, 0 for a registry never kept. Ids
    /// interned from a registry hold only for registries of its token.
    var token = 0

    static let maximumKept = 16
    /// The most names, resolved shapes or cached resolutions a kept registry may hold.
    static let maximumSize = 1024

    /// Behind Courier's pthread-based `Locked`, not `Synchronization.Mutex`: ThreadSanitizer sees the
    /// happens-before edges of a pthread mutex, and parses on many threads contend for this one.
    private struct Kept {
        var registries: [XMLRegistry] = []
        var lastToken = 0
    }

    private static let kept = Locked<Kept>(Kept())

    /// The kept registry of `shape`, or an empty one.
    static func cached(for shape: ValueShape) -> XMLRegistry {
        kept.withLock { kept in kept.registries.first { isSame($0.rootShape, shape) } } ?? XMLRegistry(rootShape: shape)
    }

    /// Whether two shapes are equal: at once when they are the same value in memory (the same boxes, as the
    /// shape of every decode of a model or of one `CodingHints` is), else by comparing the trees.
    private static func isSame(_ a: ValueShape, _ b: ValueShape) -> Bool {
        let identical = withUnsafeBytes(of: a) { a in withUnsafeBytes(of: b) { b in a.elementsEqual(b) } }
        return identical || a == b
    }

    /// Forgets every kept registry.
    static func removeAll() {
        kept.withLock { $0.registries.removeAll() }
    }

    /// Keeps `registry` (replacing the one of its root shape) when it is small enough.
    static func keep(_ registry: XMLRegistry) {
        guard registry.names.count <= maximumSize, registry.resolvedShapes.count <= maximumSize,
            registry.shapeCache.count <= maximumSize
        else { return }
        var registry = registry
        kept.withLock { kept in
            kept.lastToken += 1
            registry.token = kept.lastToken
            if let i = kept.registries.firstIndex(where: { $0.rootShape == registry.rootShape }) {
                kept.registries[i] = registry
            } else {
                if kept.registries.count >= maximumKept { kept.registries.removeFirst() }
                kept.registries.append(registry)
            }
        }
    }
}

/// One open element.
struct XMLFrame {
    /// Interned qualified name.
    var name: Int32
    /// The id of the element's resolved shape (0: anything): its shape is that of the element's value, with
    /// `optional` and, for array members, `array` removed.
    var shapeID: Int32
    /// Whether the shape was optional (empty text becomes null for non-string scalars).
    var optional: Bool
    /// The kind of the shape when it is a plain scalar.
    var scalarKind: XMLMapping.ScalarKind?
    /// Whether the parent expects an array at this element's name.
    var arrayMember: Bool
    /// Whether this element is a wrapper whose children are the array's elements.
    var wrapper: Bool
    /// Whether it has `xsi:nil="true"`.
    var isNil: Bool
    /// Where its text starts in the text stack.
    var textStart: Int
    /// Where its members (attributes first, then children) start in the member stack.
    var membersStart: Int
    /// How many of those members are attributes.
    var attributeCount: Int
    /// How many child elements started so far.
    var childCount: Int
    /// The name of the first child, for the wrapper check.
    var firstChild: Int32
    /// The resolved shape id of the last child started (0 before the first, or when it had none): where the
    /// builder guesses the next child's name.
    var lastChildShape: Int32
}

/// A start tag's name as libxml2 spells it (its dictionary's pointers) and its interned id, and the last shape
/// resolved there: `resolved` is `resolve(parent: resolvedParent, name: resolvedName)` (no question yet while
/// `resolvedParent` is `-1`).
struct XMLNameGuess {
    var local: UnsafeRawPointer?
    var prefix: UnsafeRawPointer?
    var name: Int32
    var resolvedParent: Int32 = -1
    var resolvedName: Int32 = 0
    var resolved: Int32 = 0
}

/// A shape as an element uses it: optional and array wrappers removed and remembered.
struct XMLResolvedShape {
    var shape: ValueShape
    var optional: Bool
    var arrayMember: Bool
    /// The members an object of this shape always has as arrays: zero such child elements is `[]`.
    var requiredArrays: [String] = []
    /// The kind of `shape` when it is a plain scalar: its text converts without looking into `shape`.
    var scalarKind: XMLMapping.ScalarKind? = nil
}

/// A stack in memory of its own, of plain values: updating an element is a plain store (no copy-on-write
/// check per event), and dropping elements only moves the end. The builder keeps its open elements
/// (``XMLFrame``) and their text (bytes) in two of them. ``release()`` frees it.
struct XMLStack<Element: BitwiseCopyable> {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    var isEmpty: Bool { count == 0 }

    subscript(i: Int) -> Element {
        unsafeAddress {
            precondition(i >= 0 && i < count)
            return UnsafePointer(base + i)
        }
        nonmutating unsafeMutableAddress {
            precondition(i >= 0 && i < count)
            return base + i
        }
    }

    /// The elements from `start` to the end.
    func elements(from start: Int) -> UnsafeBufferPointer<Element> {
        UnsafeBufferPointer(start: base + start, count: count - start)
    }

    /// The elements in `range`.
    func elements(_ range: Range<Int>) -> UnsafeBufferPointer<Element> {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)
    }

    @inline(__always)
    private mutating func reserve(_ needed: Int) {
        if needed > capacity { grow(to: needed) }
    }

    @inline(never)
    private mutating func grow(to needed: Int) {
        var bigger = capacity * 2
        while bigger < needed { bigger *= 2 }
        let grown = UnsafeMutablePointer<Element>.allocate(capacity: bigger)
        grown.update(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = bigger
    }

    @inline(__always)
    mutating func append(_ element: Element) {
        reserve(count + 1)
        base[count] = element
        count += 1
    }

    mutating func append(_ elements: UnsafePointer<Element>, count length: Int) {
        reserve(count + length)
        (base + count).update(from: elements, count: length)
        count += length
    }

    mutating func append(contentsOf elements: [Element]) {
        elements.withUnsafeBufferPointer { buffer in
            if let start = buffer.baseAddress { append(start, count: buffer.count) }
        }
    }

    @inline(__always)
    mutating func removeLast() -> Element {
        precondition(count > 0)
        count -= 1
        return base[count]
    }

    /// Drops the elements from `start` on.
    mutating func truncate(to start: Int) {
        if count > start { count = start }
    }

    /// Frees the storage; the stack must not be used afterwards.
    mutating func release() {
        base.deallocate()
        count = 0
        capacity = 0
    }
}

/// A map from 64-bit keys to ids: open addressing, no `Hasher` per lookup.
struct XMLIDTable {
    private var keys: [UInt64] = Array(repeating: 0, count: 64)
    private var used: [Bool] = Array(repeating: false, count: 64)
    private var ids: [Int32] = Array(repeating: 0, count: 64)
    private(set) var count = 0

    @inline(__always)
    private static func slot(_ key: UInt64, _ mask: Int) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
    }

    func find(_ key: UInt64) -> Int32? {
        let mask = keys.count - 1
        var i = Self.slot(key, mask)
        while used[i] {
            if keys[i] == key { return ids[i] }
            i = (i + 1) & mask
        }
        return nil
    }

    mutating func insert(_ key: UInt64, _ id: Int32) {
        if (count + 1) * 2 > keys.count {
            let old = (keys, used, ids)
            keys = Array(repeating: 0, count: old.0.count * 2)
            used = Array(repeating: false, count: old.0.count * 2)
            ids = Array(repeating: 0, count: old.0.count * 2)
            count = 0
            for i in old.0.indices where old.1[i] { insert(old.0[i], old.2[i]) }
        }
        let mask = keys.count - 1
        var i = Self.slot(key, mask)
        while used[i] { i = (i + 1) & mask }
        keys[i] = key
        used[i] = true
        ids[i] = id
        count += 1
    }
}

/// Interned names by key: open addressing on the pointers' bits, no `Hasher` per lookup. Its storage is
/// allocated by the first insertion (a parse that starts from a kept table never allocates one).
struct XMLNameTable {
    private var keys: [XMLNameKey?] = []
    private var ids: [Int32] = []
    private var count = 0
    private static let initialCapacity = 64

    @inline(__always)
    private static func slot(_ key: XMLNameKey, _ mask: Int) -> Int {
        let local = UInt(bitPattern: key.local.map { Int(bitPattern: $0) } ?? 0)
        let prefix = UInt(bitPattern: key.prefix.map { Int(bitPattern: $0) } ?? 0)
        var h = (local >> 3) &* 0x9E37_79B9_7F4A_7C15
        h ^= (prefix >> 3) &* 0xC2B2_AE3D_27D4_EB4F
        h ^= UInt(key.kind) &* 0x1656_67B1_9E37_79F9
        return Int(truncatingIfNeeded: h >> 32) & mask
    }

    func find(_ key: XMLNameKey) -> Int32? {
        if keys.isEmpty { return nil }
        let mask = keys.count - 1
        var i = Self.slot(key, mask)
        while let candidate = keys[i] {
            if candidate == key { return ids[i] }
            i = (i + 1) & mask
        }
        return nil
    }

    mutating func insert(_ key: XMLNameKey, _ id: Int32) {
        if (count + 1) * 2 > keys.count { grow() }
        let mask = keys.count - 1
        var i = Self.slot(key, mask)
        while keys[i] != nil { i = (i + 1) & mask }
        keys[i] = key
        ids[i] = id
        count += 1
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldIDs = ids
        let capacity = max(Self.initialCapacity, oldKeys.count * 2)
        keys = Array(repeating: nil, count: capacity)
        ids = Array(repeating: 0, count: capacity)
        count = 0
        for (i, key) in oldKeys.enumerated() {
            if let key { insert(key, oldIDs[i]) }
        }
    }
}

/// Interning key: libxml2 dictionary pointers for the prefix and local name, and what kind of name.
struct XMLNameKey: Hashable {
    var prefix: UnsafeRawPointer?
    var local: UnsafeRawPointer?
    var kind: UInt8  // 0 element, 1 attribute, 2 namespace declaration
}
