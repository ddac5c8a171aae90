import CLibXML2
import Courier
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The direct path of ``XMLCodec/decode(_:from:hints:decoder:)``: libxml2's SAX2 events build a *tape*
/// (flat arrays of nodes, object members and array items, no `Value` containers), and
/// ``XMLTapeDecoding`` reads the model from it in place.
///
/// The tape is a faithful port of ``XMLTreeBuilder``: the same shape resolution, wrapper detection,
/// grouping of repeated siblings, empty lists and limits, so that a tape materialised as a `Value` is the
/// pivot's `Value`. Anything the tape path does not reproduce exactly — every failure (syntax, limits,
/// entities, a type mismatch, a missing member) and a few rare requests of a model (its coding path, a
/// super decoder) — *bails out*: the codec then runs the pivot (`XMLReader` and `ValueDecoder`), whose
/// answer, model or error, is the contract's by construction. A bail inside a model's `init(from:)` that
/// the model swallows still counts: the decoder remembers it and the pivot runs.
enum XMLTapeReader {
    /// Why the tape path gave up; never escapes ``decode(_:from:shape:limits:decoder:)``.
    struct Bail: Error {}

    /// Decodes `T` from `data` through the tape, or through the pivot when the tape path bails.
    static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, shape: ValueShape, limits: DecodingLimits, decoder: ValueDecoder
    ) throws -> T {
        if let tape = read(data, shape: shape, limits: limits, decoder: decoder), !tape.keyNamesCollide {
            let root = XMLTapeDecoding(tape: tape, node: tape.root)
            if let model = try? root.unwrap(T.self), !tape.bailed { return model }
        }
        return try decoder.decode(T.self, from: XMLReader.read(data, shape: shape, limits: limits).value)
    }

    /// The tape of `data`, or `nil` when the document needs the pivot (including every error).
    static func read(_ data: Data, shape: ValueShape, limits: DecodingLimits, decoder: ValueDecoder) -> XMLTape? {
        guard !data.isEmpty, data.count <= limits.maximumInputSize, data.count <= Int(Int32.max) else { return nil }
        XMLReader.initialize()
        return data.withUnsafeBytes { raw -> XMLTape? in
            if XMLStartTagScanner.firstCrowdedTagInAnyEncoding(raw.bindMemory(to: UInt8.self), limits: limits) != nil {
                return nil
            }
            let state = UnsafeMutablePointer<XMLTapeBuilder>.allocate(capacity: 1)
            state.initialize(to: XMLTapeBuilder(shape: shape, limits: limits, decoder: decoder))
            state.pointee.reserve(forBytes: raw.count)
            defer {
                state.pointee.frames.release()
                state.deinitialize(count: 1)
                state.deallocate()
            }
            let base = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
            guard let ctxt = xmlCreateMemoryParserCtxt(base, Int32(raw.count)) else { return nil }
            defer {
                if let doc = ctxt.pointee.myDoc {
                    xmlFreeDoc(doc)
                    ctxt.pointee.myDoc = nil
                }
                xmlFreeParserCtxt(ctxt)
            }
            state.pointee.context = ctxt
            ctxt.pointee.sax.pointee = makeHandler()
            ctxt.pointee.userData = UnsafeMutableRawPointer(state)
            _ = xmlCtxtUseOptions(ctxt, Int32(XML_PARSE_NONET.rawValue))
            let savedHandlers = courier_xml_capture_errors(
                { ctx, error in
                    guard let ctx, let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
                    tapeBuilder(ctx).pointee.failed = true
                }, UnsafeMutableRawPointer(state))
            _ = xmlParseDocument(ctxt)
            courier_xml_restore_errors(savedHandlers)
            guard !state.pointee.failed, ctxt.pointee.wellFormed != 0, state.pointee.root >= 0 else { return nil }
            return state.pointee.finishTape()
        }
    }

    private static func makeHandler() -> xmlSAXHandler {
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { ctx, localname, prefix, _, nbNamespaces, namespaces, nbAttributes, _, attributes in
            tapeBuilder(ctx).pointee.startElement(
                localname: localname!, prefix: prefix, namespaceCount: Int(nbNamespaces), namespaces: namespaces,
                attributeCount: Int(nbAttributes), attributes: attributes)
        }
        sax.endElementNs = { ctx, _, _, _ in tapeBuilder(ctx).pointee.endElement() }
        sax.characters = { ctx, bytes, length in tapeBuilder(ctx).pointee.characters(bytes, Int(length)) }
        sax.cdataBlock = { ctx, bytes, length in tapeBuilder(ctx).pointee.characters(bytes, Int(length)) }
        sax.ignorableWhitespace = { ctx, bytes, length in tapeBuilder(ctx).pointee.characters(bytes, Int(length)) }
        // Any document type declaration, entity or attribute default: the pivot decides (and refuses).
        sax.internalSubset = { ctx, _, _, _ in tapeBuilder(ctx).pointee.bail() }
        sax.entityDecl = { ctx, _, _, _, _, _ in tapeBuilder(ctx).pointee.bail() }
        sax.attributeDecl = { ctx, _, _, _, _, _, tree in
            if let tree { xmlFreeEnumeration(tree) }
            tapeBuilder(ctx).pointee.bail()
        }
        sax.unparsedEntityDecl = { ctx, _, _, _, _ in tapeBuilder(ctx).pointee.bail() }
        sax.resolveEntity = { ctx, _, _ in
            tapeBuilder(ctx).pointee.bail()
            return nil
        }
        sax.getEntity = { _, _ in nil }
        sax.getParameterEntity = { _, _ in nil }
        sax.serror = { ctx, error in
            // Warnings are not failures, as for the pivot.
            guard let ctx, let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
            // Recorded only: libxml2 must not be stopped from its own error handler.
            tapeBuilder(ctx).pointee.failed = true
        }
        return sax
    }
}

@inline(__always)
private func tapeBuilder(_ ctx: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<XMLTapeBuilder> {
    ctx!.assumingMemoryBound(to: XMLTapeBuilder.self)
}

/// A read document: nodes and the flat arrays their containers point into.
final class XMLTape {
    /// One node: a scalar (``leaves``[`start`], any `Value` that is not a container), an object (members
    /// `start..<start+count` of ``memberKeys`` / ``memberNodes``) or an array (``items``
    /// `start..<start+count`).
    struct Node {
        static let leaf: UInt8 = 0
        static let object: UInt8 = 1
        static let array: UInt8 = 2
        var kind: UInt8
        var start: Int32
        var count: Int32
    }

    let nodes: [Node]
    let leaves: [Value]
    let memberKeys: [Int32]
    let memberNodes: [Int32]
    let items: [Int32]
    /// Interned names; `names[0]` is `#text`.
    let names: [String]
    /// The names as keyed containers match them: `names`, or converted from snake case to camel case
    /// when the decoder's key strategy is `.convertFromSnakeCase` (as `ValueDecoder` converts members).
    let keyNames: [String]
    /// Whether two names convert to the same key, which the pivot resolves by keeping the last member:
    /// the tape then leaves the document to the pivot.
    let keyNamesCollide: Bool
    let root: Int32
    let decoder: ValueDecoder
    let userInfo: [CodingUserInfoKey: Any]
    /// Set when a request could not be answered exactly as the pivot would; the pivot then runs.
    @exclusivity(unchecked) var bailed = false
    /// Where the next keyed lookup probably is (models usually read members in order): a guess shared by
    /// all containers, checked before use.
    @exclusivity(unchecked) var hint = 0

    init(
        nodes: [Node], leaves: [Value], memberKeys: [Int32], memberNodes: [Int32], items: [Int32], names: [String],
        root: Int32, decoder: ValueDecoder
    ) {
        self.nodes = nodes
        self.leaves = leaves
        self.memberKeys = memberKeys
        self.memberNodes = memberNodes
        self.items = items
        self.names = names
        if decoder.keyStrategy == .convertFromSnakeCase {
            let converted = names.map { KeyCodingStrategy.camelCase(fromSnakeCase: $0) }
            keyNames = converted
            keyNamesCollide = Set(converted).count != converted.count
        } else {
            keyNames = names
            keyNamesCollide = false
        }
        self.root = root
        self.decoder = decoder
        var info: [CodingUserInfoKey: Any] = [:]
        for (k, v) in decoder.userInfo { info[k] = v }
        self.userInfo = info
    }

    /// The node as the pivot's `Value`.
    func value(_ node: Int32) -> Value {
        let n = nodes[Int(node)]
        let start = n.start
        let count = n.count
        switch n.kind {
        case Node.leaf: return leaves[Int(start)]
        case Node.array:
            var elements: [Value] = []
            elements.reserveCapacity(Int(count))
            for i in Int(start)..<Int(start + count) { elements.append(value(items[i])) }
            return .array(elements)
        default:
            var keys: [String] = []
            var values: [Value] = []
            keys.reserveCapacity(Int(count))
            values.reserveCapacity(Int(count))
            for i in Int(start)..<Int(start + count) {
                keys.append(names[Int(memberKeys[i])])
                values.append(value(memberNodes[i]))
            }
            return .object(Value.Object(uniqueKeys: keys, values: values))
        }
    }
}

/// The SAX state of one tape parse: ``XMLTreeBuilder``'s logic, with nodes instead of values.
struct XMLTapeBuilder {
    struct Member {
        var name: Int32
        var spread: Bool
        var arrayShaped: Bool
        var node: Int32
        /// The node of the empty item (`-1`: none), see ``XMLTreeBuilder/Member/emptyItem``.
        var emptyItem: Int32 = -1
    }

    var context: xmlParserCtxtPtr?
    let rootShape: ValueShape
    let limits: DecodingLimits
    let decoder: ValueDecoder
    var failed = false
    var totalNodes = 0
    var frames = XMLTreeBuilder.FrameStack()
    var members: [Member] = []
    var text: [UInt8] = []
    var nameIDs = XMLTreeBuilder.NameTable()
    var names: [String] = ["#text"]
    var resolvedShapes: [XMLTreeBuilder.ResolvedShape] = [
        XMLTreeBuilder.ResolvedShape(shape: .any, optional: false, arrayMember: false)
    ]
    var shapeCache = XMLTreeBuilder.IDTable()
    var nodes: [XMLTape.Node] = []
    var leaves: [Value] = []
    var memberKeys: [Int32] = []
    var memberNodes: [Int32] = []
    var items: [Int32] = []
    var root: Int32 = -1
    /// Per shape id, the name ids of its required arrays (resolved lazily).
    var requiredIDs: [[Int32]?] = [nil]

    init(shape: ValueShape, limits: DecodingLimits, decoder: ValueDecoder) {
        rootShape = shape
        self.limits = limits
        self.decoder = decoder
        members.reserveCapacity(64)
        text.reserveCapacity(256)
    }

    /// Reserves room for the nodes of a document of `size` bytes (about one node per 24 bytes of XML, at
    /// most 65,536 up front, as a document of one long text needs none), so that the arrays seldom regrow.
    mutating func reserve(forBytes size: Int) {
        let estimate = min(size / 24, 1 << 16)
        nodes.reserveCapacity(estimate)
        leaves.reserveCapacity(estimate)
        memberKeys.reserveCapacity(estimate)
        memberNodes.reserveCapacity(estimate)
        items.reserveCapacity(estimate / 4)
    }

    func finishTape() -> XMLTape {
        XMLTape(
            nodes: nodes, leaves: leaves, memberKeys: memberKeys, memberNodes: memberNodes, items: items, names: names,
            root: root, decoder: decoder)
    }

    mutating func bail() {
        guard !failed else { return }
        failed = true
        if let context { xmlStopParser(context) }
    }

    // MARK: Names

    private mutating func intern(
        prefix: UnsafePointer<xmlChar>?, local: UnsafePointer<xmlChar>?, kind: UInt8
    ) -> Int32 {
        let key = XMLTreeBuilder.NameKey(prefix: UnsafeRawPointer(prefix), local: UnsafeRawPointer(local), kind: kind)
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
        let id = Int32(names.count)
        names.append(name)
        nameIDs.insert(key, id)
        return id
    }

    // MARK: Nodes

    private mutating func leaf(_ value: Value) -> Int32 {
        if case .object(let object) = value, object.isEmpty { return emptyObject() }
        nodes.append(XMLTape.Node(kind: XMLTape.Node.leaf, start: Int32(leaves.count), count: 0))
        leaves.append(value)
        return Int32(nodes.count - 1)
    }

    private mutating func emptyObject() -> Int32 {
        nodes.append(XMLTape.Node(kind: XMLTape.Node.object, start: Int32(memberKeys.count), count: 0))
        return Int32(nodes.count - 1)
    }

    private mutating func array(_ elements: [Int32]) -> Int32 {
        nodes.append(XMLTape.Node(kind: XMLTape.Node.array, start: Int32(items.count), count: Int32(elements.count)))
        items.append(contentsOf: elements)
        return Int32(nodes.count - 1)
    }

    private mutating func arrayOfOne(_ element: Int32) -> Int32 {
        nodes.append(XMLTape.Node(kind: XMLTape.Node.array, start: Int32(items.count), count: 1))
        items.append(element)
        return Int32(nodes.count - 1)
    }

    private func isEmptyArray(_ node: Int32) -> Bool {
        let n = nodes[Int(node)]
        return n.kind == XMLTape.Node.array && n.count == 0
    }

    // MARK: Shapes

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
            XMLTreeBuilder.ResolvedShape(
                shape: shape, optional: optional, arrayMember: arrayMember, requiredArrays: requiredArrays))
        requiredIDs.append(nil)
        return Int32(resolvedShapes.count - 1)
    }

    private mutating func resolve(parent: Int32, name: Int32, _ member: (ValueShape) -> ValueShape) -> Int32 {
        let key = UInt64(UInt32(bitPattern: parent)) << 32 | UInt64(UInt32(bitPattern: name))
        if let id = shapeCache.find(key) { return id }
        let id = register(member(resolvedShapes[Int(parent)].shape))
        shapeCache.insert(key, id)
        return id
    }

    private func isWrapper(_ shape: ValueShape, child: Int32) -> Bool {
        switch shape {
        case .object(let members): return members[names[Int(child)]] == nil
        case .map: return false
        default: return true
        }
    }

    // MARK: Events

    mutating func startElement(
        localname: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, namespaceCount: Int,
        namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, attributeCount: Int,
        attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard !failed else { return }
        if frames.count >= limits.maximumDepth { return bail() }
        totalNodes += 1 + namespaceCount + attributeCount
        if totalNodes > limits.maximumTotalValues { return bail() }
        if attributeCount + namespaceCount > limits.maximumAttributesPerElement { return bail() }
        if frames.count > 0 {
            let p = frames.count - 1
            if frames[p].childCount + frames[p].attributeCount >= limits.maximumContainerCount { return bail() }
        }
        let name = intern(prefix: prefix, local: localname, kind: 0)
        var resolvedID: Int32 = 0
        if frames.count > 0 {
            let p = frames.count - 1
            frames[p].childCount += 1
            if frames[p].childCount == 1 { frames[p].firstChild = name }
            if frames[p].wrapper {
                if name != frames[p].firstChild { return bail() }
                resolvedID = resolve(parent: frames[p].shapeID, name: -1) { $0 }
            } else if frames[p].shapeID != 0 {
                if frames[p].childCount == 1, frames[p].arrayMember, isWrapper(frames[p].shape, child: name) {
                    frames[p].wrapper = true
                    resolvedID = resolve(parent: frames[p].shapeID, name: -1) { $0 }
                } else {
                    let parent = frames[p].shapeID
                    let cacheKey = UInt64(UInt32(bitPattern: parent)) << 32 | UInt64(UInt32(bitPattern: name))
                    if let id = shapeCache.find(cacheKey) {
                        resolvedID = id
                    } else {
                        let key = names[Int(name)]
                        resolvedID = resolve(parent: parent, name: name) { $0.member(key) }
                    }
                }
            }
        } else {
            resolvedID = register(rootShape)
        }
        let resolved = resolvedShapes[Int(resolvedID)]
        let membersStart = members.count
        var isNil = false
        frames.append(
            XMLTreeBuilder.Frame(
                name: name, shapeID: resolvedID, shape: resolved.shape, optional: resolved.optional,
                arrayMember: resolved.arrayMember, wrapper: false, isNil: false, textStart: text.count,
                membersStart: membersStart, attributeCount: 0, childCount: 0, firstChild: -1))
        if namespaceCount > 0, let namespaces {
            for i in 0..<namespaceCount {
                let id = intern(prefix: namespaces[2 * i], local: nil, kind: 2)
                let uri = namespaces[2 * i + 1].map { String(cString: $0) } ?? ""
                members.append(Member(name: id, spread: false, arrayShaped: false, node: leaf(.string(uri))))
            }
        }
        if attributeCount > 0, let attributes {
            for i in 0..<attributeCount {
                let base = 5 * i
                let id = intern(prefix: attributes[base + 1], local: attributes[base], kind: 1)
                guard let start = attributes[base + 3], let end = attributes[base + 4] else { continue }
                if end - start > limits.maximumStringLength { return bail() }
                let bytes = UnsafeBufferPointer(start: start, count: end - start)
                let string: String
                if UnsafeRawBufferPointer(bytes).contains(UInt8(ascii: "&")) {
                    string = XMLTreeBuilder.decodeAmpersands(bytes)
                } else {
                    string = String(decoding: bytes, as: UTF8.self)
                }
                if let uri = attributes[base + 2], xmlStrEqual(uri, Self.xsiURI) != 0,
                    xmlStrEqual(attributes[base], Self.nilName) != 0
                {
                    if string == "true" || string == "1" { isNil = true }
                    continue
                }
                var value = Value.string(string)
                let attributeShape = resolved.shape.member(names[Int(id)])
                if attributeShape != .any, attributeShape != .string {
                    var utf8 = string
                    let converted = utf8.withUTF8 { buffer in
                        Result { () throws(XMLMapping.Mismatch) in
                            try XMLMapping.scalar(buffer, shape: attributeShape.unwrapped, optional: true)
                        }
                    }
                    guard case .success(let v) = converted else { return bail() }
                    value = v
                }
                members.append(Member(name: id, spread: false, arrayShaped: false, node: leaf(value)))
            }
        }
        frames[frames.count - 1].isNil = isNil
        frames[frames.count - 1].attributeCount = members.count - membersStart
    }

    private static let xsiURI: [xmlChar] = Array(XMLMapping.xsiNamespace.utf8) + [0]
    private static let nilName: [xmlChar] = Array("nil".utf8) + [0]

    mutating func characters(_ bytes: UnsafePointer<xmlChar>?, _ length: Int) {
        guard !failed, let bytes, length > 0, frames.count > 0 else { return }
        if text.count - frames[frames.count - 1].textStart + length > limits.maximumStringLength { return bail() }
        text.append(contentsOf: UnsafeBufferPointer(start: bytes, count: length))
    }

    mutating func endElement() {
        guard !failed, frames.count > 0 else { return }
        let frame = frames.removeLast()
        var node: Int32
        let spread: Bool
        var emptyItem: Int32 = -1
        do {
            (node, spread) = try finish(frame)
            if spread, frame.arrayMember, !frame.wrapper, isEmptyArray(node),
                let item = try? XMLMapping.scalar(
                    UnsafeBufferPointer(start: nil, count: 0), shape: frame.shape, optional: frame.optional)
            {
                emptyItem = leaf(item)
            }
            if frame.shapeID != 0, nodes[Int(node)].kind == XMLTape.Node.object {
                let start = nodes[Int(node)].start
                let count = nodes[Int(node)].count
                let required = requiredArrays(frame.shapeID)
                if !required.isEmpty {
                    var missing: [Int32] = []
                    for key in required {
                        var found = false
                        for i in Int(start)..<Int(start + count) where names[Int(memberKeys[i])] == names[Int(key)] {
                            found = true
                            break
                        }
                        if !found { missing.append(key) }
                    }
                    if !missing.isEmpty {
                        // Re-lay the object with the empty lists appended (its members are the last added).
                        var keys = Array(memberKeys[Int(start)..<Int(start + count)])
                        var values = Array(memberNodes[Int(start)..<Int(start + count)])
                        for key in missing {
                            keys.append(key)
                            values.append(array([]))
                        }
                        node = object(keys, values)
                    }
                }
            }
        } catch {
            return bail()
        }
        if text.count > frame.textStart { text.removeLast(text.count - frame.textStart) }
        if members.count > frame.membersStart { members.removeLast(members.count - frame.membersStart) }
        if frames.isEmpty {
            root = frame.arrayMember && !spread ? arrayOfOne(node) : node
        } else {
            members.append(
                Member(
                    name: frame.name, spread: spread, arrayShaped: frame.arrayMember, node: node, emptyItem: emptyItem))
        }
    }

    private mutating func requiredArrays(_ shapeID: Int32) -> [Int32] {
        if let known = requiredIDs[Int(shapeID)] { return known }
        var ids: [Int32] = []
        // Names of their own: members are matched to them by name, not by id.
        for key in resolvedShapes[Int(shapeID)].requiredArrays {
            ids.append(Int32(names.count))
            names.append(key)
        }
        requiredIDs[Int(shapeID)] = ids
        return ids
    }

    private mutating func object(_ keys: [Int32], _ values: [Int32]) -> Int32 {
        nodes.append(XMLTape.Node(kind: XMLTape.Node.object, start: Int32(memberKeys.count), count: Int32(keys.count)))
        memberKeys.append(contentsOf: keys)
        memberNodes.append(contentsOf: values)
        return Int32(nodes.count - 1)
    }

    private mutating func finish(_ frame: XMLTreeBuilder.Frame) throws(XMLMapping.Mismatch) -> (Int32, Bool) {
        if frame.isNil { return (leaf(.null), false) }
        let textCount = text.count - frame.textStart
        if frame.wrapper {
            let start = frame.membersStart + frame.attributeCount
            nodes.append(
                XMLTape.Node(kind: XMLTape.Node.array, start: Int32(items.count), count: Int32(members.count - start)))
            for m in members[start...] { items.append(m.node) }
            return (Int32(nodes.count - 1), true)
        }
        if frame.childCount == 0 && frame.attributeCount == 0 {
            if frame.arrayMember, textCount == 0 { return (array([]), true) }
            let value = try text.withUnsafeBufferPointer { all throws(XMLMapping.Mismatch) in
                try XMLMapping.scalar(
                    UnsafeBufferPointer(rebasing: all[frame.textStart...]), shape: frame.shape,
                    optional: frame.optional)
            }
            return (leaf(value), false)
        }
        var textValue: Value?
        if textCount > 0 {
            textValue = try text.withUnsafeBufferPointer { all throws(XMLMapping.Mismatch) in
                var t = UnsafeBufferPointer(rebasing: all[frame.textStart...])
                if frame.childCount > 0 {
                    t = XMLMapping.trimmed(t)
                    if t.isEmpty { return nil }
                }
                var textShape = frame.shape.member("#text")
                switch frame.shape {
                case .bool, .integer, .number, .bytes, .string: textShape = frame.shape
                default: break
                }
                return try XMLMapping.scalar(t, shape: textShape.unwrapped, optional: frame.optional)
            }
        }
        let slice = members[frame.membersStart...]
        if hasRepeats(slice) {
            var order: [Int32] = []
            var groups: [Int32: [Member]] = [:]
            for m in slice {
                if groups[m.name] == nil { order.append(m.name) }
                groups[m.name, default: []].append(m)
            }
            var keys: [Int32] = []
            var values: [Int32] = []
            for id in order {
                keys.append(id)
                values.append(combine(groups[id]!))
            }
            if let textValue {
                keys.append(0)
                values.append(leaf(textValue))
            }
            return (object(keys, values), false)
        }
        // No repeats: the members go straight to the member arrays (``memberNode(_:)`` and ``leaf(_:)``
        // only add nodes, items and leaves).
        let start = Int32(memberKeys.count)
        var i = frame.membersStart
        while i < members.count {
            let m = members[i]
            memberKeys.append(m.name)
            memberNodes.append(memberNode(m))
            i += 1
        }
        if let textValue {
            memberKeys.append(0)
            memberNodes.append(leaf(textValue))
        }
        nodes.append(XMLTape.Node(kind: XMLTape.Node.object, start: start, count: Int32(memberKeys.count) - start))
        return (Int32(nodes.count - 1), false)
    }

    private mutating func memberNode(_ m: Member) -> Int32 {
        if m.arrayShaped && !m.spread { return arrayOfOne(m.node) }
        return m.node
    }

    private mutating func combine(_ group: [Member]) -> Int32 {
        if group.count == 1 { return memberNode(group[0]) }
        var elements: [Int32] = []
        elements.reserveCapacity(group.count)
        for m in group {
            if m.emptyItem >= 0 {
                elements.append(m.emptyItem)
            } else if m.spread, nodes[Int(m.node)].kind == XMLTape.Node.array {
                let n = nodes[Int(m.node)]
                elements.append(contentsOf: items[Int(n.start)..<Int(n.start + n.count)])
            } else {
                elements.append(m.node)
            }
        }
        return array(elements)
    }

    private func hasRepeats(_ slice: ArraySlice<Member>) -> Bool {
        let n = slice.count
        if n < 2 { return false }
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
}
