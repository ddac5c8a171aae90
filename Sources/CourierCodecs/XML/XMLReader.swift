import CLibXML2
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads an XML document into a ``Value`` with libxml2's SAX2 push of callbacks: no DOM is built, names
/// are interned per parse (libxml2 hands out dictionary pointers, so one lookup by pointer replaces a
/// string per callback), and text accumulates in one byte stack shared by all open elements.
///
/// Each call owns its parser context, so reads on several threads at once are safe.
enum XMLReader {
    /// Runs libxml2's one-time global initialisation exactly once.
    private static let initialized: Void = { xmlInitParser() }()

    /// Runs libxml2's one-time global initialisation if no read has yet.
    static func initialize() { _ = initialized }

    /// libxml2's own nesting limit without `XML_PARSE_HUGE` (`xmlParserMaxDepth`).
    static let libxml2MaximumDepth = 256

    /// Parses `data`; returns the root element's name and content.
    static func read(
        _ data: Data, shape: ValueShape?, limits: DecodingLimits
    ) throws -> (rootName: String, value: Value) {
        _ = initialized
        guard data.count <= limits.maximumInputSize else {
            throw DecodingLimits.sizeFailure(
                "maximumInputSize", limits.maximumInputSize, what: "the XML document has \(data.count) bytes",
                at: "in all")
        }
        guard data.count <= Int(Int32.max) else {
            throw CourierError(.sizeLimitExceeded, detail: "the XML document is larger than 2 GiB")
        }
        guard !data.isEmpty else {
            throw CourierError(.malformedInput, detail: "the XML document is empty", context: .init(line: 1, column: 1))
        }
        return try data.withUnsafeBytes { raw throws -> (rootName: String, value: Value) in
            // libxml2 checks each attribute of a start tag against all earlier ones (quadratic in their
            // number) before any callback runs, and scans every namespace in scope per prefix: count
            // them first, in one linear pass.
            if let crowded = XMLStartTagScanner.firstCrowdedTagInAnyEncoding(
                raw.bindMemory(to: UInt8.self), limits: limits)
            {
                throw DecodingLimits.sizeFailure(
                    crowded.limit, crowded.value,
                    what: crowded.limit == "maximumAttributesPerElement"
                        ? "the start tag <\(crowded.name)> has more attributes"
                        : "the start tag <\(crowded.name)> brings more namespace declarations into scope",
                    at: "at line \(crowded.line), column \(crowded.column)",
                    context: .init(line: crowded.line, column: crowded.column, offset: crowded.offset))
            }
            let state = UnsafeMutablePointer<XMLTreeBuilder>.allocate(capacity: 1)
            state.initialize(to: XMLTreeBuilder(shape: shape, limits: limits))
            defer {
                state.pointee.frames.release()
                state.deinitialize(count: 1)
                state.deallocate()
            }
            let base = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
            guard let ctxt = xmlCreateMemoryParserCtxt(base, Int32(raw.count)) else {
                throw CourierError(.malformedInput, detail: "libxml2 could not create a parser context")
            }
            defer {
                // libxml2 records internal entity declarations in a document of its own even in SAX mode
                // ("expat compatibility"); it is ours to free.
                if let doc = ctxt.pointee.myDoc {
                    xmlFreeDoc(doc)
                    ctxt.pointee.myDoc = nil
                }
                xmlFreeParserCtxt(ctxt)
            }
            state.pointee.context = ctxt
            // Replace the default SAX2 handler (allocated by the context, freed with it) by ours.
            ctxt.pointee.sax.pointee = makeHandler()
            ctxt.pointee.userData = UnsafeMutableRawPointer(state)
            // NONET: never touch the network. Deliberately absent: NOENT (no entity substitution),
            // DTDLOAD/DTDATTR/DTDVALID (no DTD is read), HUGE (keep libxml2's size and depth limits),
            // RECOVER. libxml2 2.9 has no XML_PARSE_NO_XXE; our callbacks refuse any entity declaration
            // and any external DTD before it could be used.
            let parseOptions = Int32(XML_PARSE_NONET.rawValue)
            _ = xmlCtxtUseOptions(ctxt, parseOptions)
            // Errors raised outside the parser context (encoding conversion) go to this thread's global
            // handlers, which would print to stderr: capture them for the duration of the parse.
            let savedHandlers = courier_xml_capture_errors(
                { ctx, error in
                    guard let ctx, let error else { return }
                    saxBuilder(ctx).pointee.libxml2Error(error.pointee)
                }, UnsafeMutableRawPointer(state))
            _ = xmlParseDocument(ctxt)
            courier_xml_restore_errors(savedHandlers)
            // Any error recorded by the callbacks stops the parser; read it first.
            if let failure = state.pointee.failure ?? state.pointee.pendingFailure {
                throw refine(failure, data: raw)
            }
            guard ctxt.pointee.wellFormed != 0, let value = state.pointee.result else {
                throw CourierError(.malformedInput, detail: "the XML document is not well-formed")
            }
            return (state.pointee.rootName ?? "", value)
        }
    }

    /// Turns libxml2's encoding complaints into ``CourierError/Code/invalidUTF8`` when the input really
    /// is not UTF-8 (checked only on this error path).
    private static func refine(_ error: CourierError, data: UnsafeRawBufferPointer) -> CourierError {
        guard error.code == .malformedInput, error.underlying is EncodingComplaint else { return error }
        if String(validating: data, as: UTF8.self) == nil {
            var copy = error
            copy.code = .invalidUTF8
            copy.underlying = nil
            return copy
        }
        var copy = error
        copy.underlying = nil
        return copy
    }

    /// Marks a libxml2 error that may come from bytes that are not UTF-8.
    struct EncodingComplaint: Error {}

    // MARK: - Callbacks

    private static func makeHandler() -> xmlSAXHandler {
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { ctx, localname, prefix, _, nbNamespaces, namespaces, nbAttributes, _, attributes in
            saxBuilder(ctx).pointee.startElement(
                localname: localname!, prefix: prefix, namespaceCount: Int(nbNamespaces), namespaces: namespaces,
                attributeCount: Int(nbAttributes), attributes: attributes)
        }
        sax.endElementNs = { ctx, _, _, _ in
            saxBuilder(ctx).pointee.endElement()
        }
        sax.characters = { ctx, bytes, length in
            saxBuilder(ctx).pointee.characters(bytes, Int(length))
        }
        sax.cdataBlock = { ctx, bytes, length in
            saxBuilder(ctx).pointee.characters(bytes, Int(length))
        }
        sax.ignorableWhitespace = { ctx, bytes, length in
            saxBuilder(ctx).pointee.characters(bytes, Int(length))
        }
        // The DTD: an internal subset may declare elements, but any entity or external DTD is refused
        // the moment it is declared, before anything could expand or load it.
        sax.internalSubset = { ctx, _, externalID, systemID in
            if externalID != nil || systemID != nil {
                saxBuilder(ctx).pointee.refuse("the document type declaration refers to an external DTD")
            }
        }
        sax.entityDecl = { ctx, name, type, _, systemID, _ in
            let entity = name.map { String(cString: $0) } ?? ""
            let external = systemID != nil || type == Int32(XML_EXTERNAL_GENERAL_PARSED_ENTITY.rawValue)
                || type == Int32(XML_EXTERNAL_PARAMETER_ENTITY.rawValue)
            saxBuilder(ctx).pointee.refuse(
                external
                    ? "the document declares the external entity \(entity)"
                    : "the document declares the entity \(entity); entity declarations are not accepted")
        }
        // A default attribute value is copied onto every element it applies to: a small internal subset
        // would multiply into gigabytes no size limit sees in the input. Declarations without a default
        // (#IMPLIED, #REQUIRED) change nothing and pass. The callback owns the enumeration libxml2 hands it.
        sax.attributeDecl = { ctx, element, name, _, _, defaultValue, tree in
            if let tree { xmlFreeEnumeration(tree) }
            guard defaultValue != nil else { return }
            let attribute = name.map { String(cString: $0) } ?? ""
            let owner = element.map { String(cString: $0) } ?? ""
            saxBuilder(ctx).pointee.refuse(
                "the document declares a default value for the attribute \(attribute) of <\(owner)>; attribute "
                    + "defaults are not accepted (each would be copied onto every such element)")
        }
        sax.unparsedEntityDecl = { ctx, name, _, _, _ in
            let entity = name.map { String(cString: $0) } ?? ""
            saxBuilder(ctx).pointee.refuse("the document declares the external unparsed entity \(entity)")
        }
        sax.resolveEntity = { ctx, _, _ in
            saxBuilder(ctx).pointee.refuse("the document asks to load an external resource")
            return nil
        }
        sax.getEntity = { _, _ in nil }
        sax.getParameterEntity = { _, _ in nil }
        sax.serror = { ctx, error in
            guard let ctx, let error else { return }
            saxBuilder(ctx).pointee.libxml2Error(error.pointee)
        }
        return sax
    }
}

/// The builder a SAX callback's user data points to.
@inline(__always)
private func saxBuilder(_ ctx: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<XMLTreeBuilder> {
    ctx!.assumingMemoryBound(to: XMLTreeBuilder.self)
}

/// The state of one parse: a stack of open elements, the members and text they have collected so far,
/// and the interned names.
struct XMLTreeBuilder {
    /// One open element.
    struct Frame {
        /// Interned qualified name.
        var name: Int32
        /// The id of the element's resolved shape (0: anything).
        var shapeID: Int32
        /// The shape of the element's value (with `optional` and, for array members, `array` removed).
        var shape: ValueShape
        /// Whether the shape was optional (empty text becomes null for non-string scalars).
        var optional: Bool
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
    }

    /// A finished attribute or child: its interned name, whether it is a wrapper's array to splice
    /// into the parent's array, and its value.
    struct Member {
        var name: Int32
        var spread: Bool
        /// Whether the shape expects an array at this name (an element of one still becomes an array).
        var arrayShaped: Bool
        var value: Value
        /// For an empty element the shape expects as a list (`<tag/>`, read alone as `[]`): its value as
        /// one item among repeated siblings (`""` for text, `{}` for an object).
        var emptyItem: Value? = nil
    }

    /// The member names of an object, by interned id (`-1` for `#text`), and as strings.
    struct Layout {
        var ids: [Int32]
        var keys: [String]
    }

    /// The open elements: a stack in memory of its own, so that updating the innermost element is a
    /// plain store (no copy-on-write check per event). ``release()`` frees it.
    struct FrameStack {
        private var base: UnsafeMutablePointer<Frame>
        private var capacity: Int
        private(set) var count = 0

        init() {
            capacity = 32
            base = .allocate(capacity: capacity)
        }

        var isEmpty: Bool { count == 0 }

        subscript(i: Int) -> Frame {
            unsafeAddress {
                precondition(i >= 0 && i < count)
                return UnsafePointer(base + i)
            }
            nonmutating unsafeMutableAddress {
                precondition(i >= 0 && i < count)
                return base + i
            }
        }

        mutating func append(_ frame: Frame) {
            if count == capacity {
                let bigger = UnsafeMutablePointer<Frame>.allocate(capacity: capacity * 2)
                bigger.moveInitialize(from: base, count: count)
                base.deallocate()
                base = bigger
                capacity *= 2
            }
            (base + count).initialize(to: frame)
            count += 1
        }

        mutating func removeLast() -> Frame {
            precondition(count > 0)
            count -= 1
            return (base + count).move()
        }

        /// Frees the storage; the stack must not be used afterwards.
        mutating func release() {
            base.deinitialize(count: count)
            base.deallocate()
            count = 0
            capacity = 0
        }
    }

    /// A map from 64-bit keys to ids: open addressing, no `Hasher` per lookup.
    struct IDTable {
        private var keys: [UInt64] = Array(repeating: 0, count: 64)
        private var used: [Bool] = Array(repeating: false, count: 64)
        private var ids: [Int32] = Array(repeating: 0, count: 64)
        private var count = 0

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

    /// Interned names by key: open addressing on the pointers' bits, no `Hasher` per lookup.
    struct NameTable {
        private var keys: [NameKey?] = Array(repeating: nil, count: 64)
        private var ids: [Int32] = Array(repeating: 0, count: 64)
        private var count = 0

        @inline(__always)
        private static func slot(_ key: NameKey, _ mask: Int) -> Int {
            let local = UInt(bitPattern: key.local.map { Int(bitPattern: $0) } ?? 0)
            let prefix = UInt(bitPattern: key.prefix.map { Int(bitPattern: $0) } ?? 0)
            var h = (local >> 3) &* 0x9E37_79B9_7F4A_7C15
            h ^= (prefix >> 3) &* 0xC2B2_AE3D_27D4_EB4F
            h ^= UInt(key.kind) &* 0x1656_67B1_9E37_79F9
            return Int(truncatingIfNeeded: h >> 32) & mask
        }

        func find(_ key: NameKey) -> Int32? {
            let mask = keys.count - 1
            var i = Self.slot(key, mask)
            while let candidate = keys[i] {
                if candidate == key { return ids[i] }
                i = (i + 1) & mask
            }
            return nil
        }

        mutating func insert(_ key: NameKey, _ id: Int32) {
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
            keys = Array(repeating: nil, count: oldKeys.count * 2)
            ids = Array(repeating: 0, count: oldKeys.count * 2)
            count = 0
            for (i, key) in oldKeys.enumerated() {
                if let key { insert(key, oldIDs[i]) }
            }
        }
    }

    /// Interning key: libxml2 dictionary pointers for the prefix and local name, and what kind of name.
    struct NameKey: Hashable {
        var prefix: UnsafeRawPointer?
        var local: UnsafeRawPointer?
        var kind: UInt8  // 0 element, 1 attribute, 2 namespace declaration
    }

    var context: xmlParserCtxtPtr?
    let rootShape: ValueShape
    let maximumDepth: Int
    /// The limits checked on every event.
    let limits: DecodingLimits
    /// Elements, attributes and namespace declarations read so far (`limits.maximumTotalValues`).
    var totalNodes = 0
    var frames = FrameStack()
    var members: [Member] = []
    var text: [UInt8] = []
    var nameIDs = NameTable()
    /// Resolved shapes by id; id 0 is "anything".
    var resolvedShapes: [ResolvedShape] = [ResolvedShape(shape: .any, optional: false, arrayMember: false)]
    /// (parent shape id, child name id) → resolved shape id.
    var shapeCache = IDTable()
    /// Per element name (by interned id): the member layout of the last object built for it.
    var layouts: [Layout?] = []
    var names: [String] = []
    var failure: CourierError?
    /// Whether ``failure`` is set (checked on every event; cheaper than testing the optional).
    var failed = false
    /// An encoding error reported outside the parser, used when the parser reports nothing else.
    var pendingFailure: CourierError?
    var result: Value?
    var rootName: String?
    var nilName: Int32 = -1

    init(shape: ValueShape?, limits: DecodingLimits) {
        self.rootShape = shape ?? .any
        self.maximumDepth = limits.maximumDepth
        self.limits = limits
        members.reserveCapacity(64)
        text.reserveCapacity(256)
    }

    // MARK: Names

    private mutating func intern(
        prefix: UnsafePointer<xmlChar>?, local: UnsafePointer<xmlChar>?, kind: UInt8
    ) -> Int32 {
        let key = NameKey(prefix: UnsafeRawPointer(prefix), local: UnsafeRawPointer(local), kind: kind)
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

    // MARK: Events

    mutating func startElement(
        localname: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, namespaceCount: Int,
        namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, attributeCount: Int,
        attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard !failed else { return }
        if frames.count >= maximumDepth {
            fail(
                CourierError(
                    .depthLimitExceeded,
                    detail: "the XML document nests deeper than the limit of \(maximumDepth) elements (maximumDepth)",
                    context: position()))
            return
        }
        totalNodes += 1 + namespaceCount + attributeCount
        if totalNodes > limits.maximumTotalValues {
            failLimit("the document has more elements and attributes", "maximumTotalValues", limits.maximumTotalValues)
            return
        }
        if attributeCount + namespaceCount > limits.maximumAttributesPerElement {
            failLimit("an element has more attributes", "maximumAttributesPerElement", limits.maximumAttributesPerElement)
            return
        }
        if let p = frames.count > 0 ? frames.count - 1 : nil,
            frames[p].childCount + frames[p].attributeCount >= limits.maximumContainerCount
        {
            failLimit("an element has more children and attributes", "maximumContainerCount", limits.maximumContainerCount)
            return
        }
        let name = intern(prefix: prefix, local: localname, kind: 0)

        // The element's shape comes from its parent (or the hints, for the root), resolved once per
        // (parent shape, name) and then read from the cache.
        var resolvedID: Int32 = 0
        if !frames.isEmpty {
            let p = frames.count - 1
            frames[p].childCount += 1
            if frames[p].childCount == 1 { frames[p].firstChild = name }
            if frames[p].wrapper {
                if name != frames[p].firstChild {
                    failMismatch(
                        "the array <\(names[Int(frames[p].name)])> holds <\(names[Int(frames[p].firstChild)])> "
                            + "elements but also <\(names[Int(name)])>",
                        pending: .index(frames[p].childCount - 1))
                    return
                }
                resolvedID = resolve(parent: frames[p].shapeID, name: -1) { $0 }
            } else if frames[p].shapeID != 0 {
                if frames[p].childCount == 1, frames[p].arrayMember, isWrapper(frames[p].shape, child: name) {
                    frames[p].wrapper = true
                    resolvedID = resolve(parent: frames[p].shapeID, name: -1) { $0 }
                } else {
                    let key = names[Int(name)]
                    resolvedID = resolve(parent: frames[p].shapeID, name: name) { $0.member(key) }
                }
            }
        } else {
            rootName = names[Int(name)]
            resolvedID = register(rootShape)
        }
        let resolved = resolvedShapes[Int(resolvedID)]
        let shape = resolved.shape
        let optional = resolved.optional
        let arrayMember = resolved.arrayMember

        // Namespace declarations and attributes become "@…" members, in document order.
        let membersStart = members.count
        var isNil = false
        frames.append(
            Frame(
                name: name, shapeID: resolvedID, shape: shape, optional: optional, arrayMember: arrayMember, wrapper: false, isNil: false,
                textStart: text.count, membersStart: membersStart, attributeCount: 0, childCount: 0, firstChild: -1))
        if namespaceCount > 0, let namespaces {
            for i in 0..<namespaceCount {
                let id = intern(prefix: namespaces[2 * i], local: nil, kind: 2)
                let uri = namespaces[2 * i + 1].map { String(cString: $0) } ?? ""
                members.append(Member(name: id, spread: false, arrayShaped: false, value: .string(uri)))
            }
        }
        if attributeCount > 0, let attributes {
            for i in 0..<attributeCount {
                let base = 5 * i
                let id = intern(prefix: attributes[base + 1], local: attributes[base], kind: 1)
                guard let start = attributes[base + 3], let end = attributes[base + 4] else { continue }
                if end - start > limits.maximumStringLength {
                    failLimit("an attribute value is longer", "maximumStringLength", limits.maximumStringLength,
                              pending: .key(names[Int(id)]))
                    return
                }
                let bytes = UnsafeBufferPointer(start: start, count: end - start)
                // Without entity substitution libxml2 hands `&` back as the character reference `&#38;`.
                let raw = UnsafeRawBufferPointer(bytes)
                let string: String
                if raw.contains(UInt8(ascii: "&")) {
                    string = Self.decodeAmpersands(bytes)
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
                let attributeShape = shape.member(names[Int(id)])
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
                        failMismatch(
                            "is \"\(string)\", expected \(error.expected)", pending: .key(names[Int(id)]))
                        return
                    }
                }
                members.append(Member(name: id, spread: false, arrayShaped: false, value: value))
            }
        }
        frames[frames.count - 1].isNil = isNil
        frames[frames.count - 1].attributeCount = members.count - membersStart
    }

    private static let xsiURI: [xmlChar] = Array(XMLMapping.xsiNamespace.utf8) + [0]
    private static let nilName: [xmlChar] = Array("nil".utf8) + [0]

    /// A shape as an element uses it: optional and array wrappers removed and remembered.
    struct ResolvedShape {
        var shape: ValueShape
        var optional: Bool
        var arrayMember: Bool
        /// The members an object of this shape always has as arrays: zero such child elements is `[]`.
        var requiredArrays: [String] = []
    }

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
        resolvedShapes.append(ResolvedShape(shape: shape, optional: optional, arrayMember: arrayMember,
                                            requiredArrays: requiredArrays))
        return Int32(resolvedShapes.count - 1)
    }

    /// The resolved shape of a child named `name` (`-1`: a wrapper's item) of an element whose shape
    /// has id `parent`, computing it with `member` the first time.
    private mutating func resolve(
        parent: Int32, name: Int32, _ member: (ValueShape) -> ValueShape
    ) -> Int32 {
        let key = UInt64(UInt32(bitPattern: parent)) << 32 | UInt64(UInt32(bitPattern: name))
        if let id = shapeCache.find(key) { return id }
        let id = register(member(resolvedShapes[Int(parent)].shape))
        shapeCache.insert(key, id)
        return id
    }

    /// Whether an element that the parent expects as an array, with element shape `shape`, is a wrapper
    /// of `child` elements rather than one element of the array.
    private func isWrapper(_ shape: ValueShape, child: Int32) -> Bool {
        switch shape {
        case .object(let members): return members[names[Int(child)]] == nil
        case .map: return false
        default: return true
        }
    }

    mutating func characters(_ bytes: UnsafePointer<xmlChar>?, _ length: Int) {
        guard !failed, let bytes, length > 0, !frames.isEmpty else { return }
        if text.count - frames[frames.count - 1].textStart + length > limits.maximumStringLength {
            failLimit("the text of an element is longer", "maximumStringLength", limits.maximumStringLength)
            return
        }
        text.append(contentsOf: UnsafeBufferPointer(start: bytes, count: length))
    }

    mutating func endElement() {
        guard !failed, !frames.isEmpty else { return }
        let frame = frames.removeLast()
        var value: Value
        let spread: Bool
        var emptyItem: Value?
        do {
            (value, spread) = try finish(frame)
            if spread, frame.arrayMember, !frame.wrapper, case .array(let items) = value, items.isEmpty {
                emptyItem = try? XMLMapping.scalar(UnsafeBufferPointer(start: nil, count: 0), shape: frame.shape,
                                                   optional: frame.optional)
            }
            // A list written as repeated siblings has no element at all when it is empty.
            if frame.shapeID != 0, case .object(var object) = value {
                let required = resolvedShapes[Int(frame.shapeID)].requiredArrays
                if !required.isEmpty {
                    var filled = false
                    for key in required where object[key] == nil {
                        object.append(key, .array([]))
                        filled = true
                    }
                    if filled { value = .object(object) }
                }
            }
        } catch {
            frames.append(frame)  // for the coding path
            failMismatch(error.expected)
            return
        }
        if text.count > frame.textStart { text.removeLast(text.count - frame.textStart) }
        if members.count > frame.membersStart { members.removeLast(members.count - frame.membersStart) }
        if frames.isEmpty {
            if frame.arrayMember {
                result = spread ? value : .array([value])
            } else {
                result = value
            }
        } else {
            members.append(Member(name: frame.name, spread: spread, arrayShaped: frame.arrayMember, value: value,
                                  emptyItem: emptyItem))
        }
    }

    /// The value of a closing element, and whether it is a wrapper's array.
    private mutating func finish(_ frame: Frame) throws(XMLMapping.Mismatch) -> (Value, Bool) {
        if frame.isNil { return (.null, false) }
        let textCount = text.count - frame.textStart
        if frame.wrapper {
            var elements: [Value] = []
            elements.reserveCapacity(members.count - frame.membersStart - frame.attributeCount)
            for m in members[(frame.membersStart + frame.attributeCount)...] {
                elements.append(m.value)
            }
            return (.array(elements), true)
        }
        if frame.childCount == 0 && frame.attributeCount == 0 {
            if frame.arrayMember, textCount == 0 { return (.array([]), true) }
            let value = try text.withUnsafeBufferPointer { all throws(XMLMapping.Mismatch) in
                try XMLMapping.scalar(
                    UnsafeBufferPointer(rebasing: all[frame.textStart...]), shape: frame.shape,
                    optional: frame.optional)
            }
            return (value, false)
        }
        // An object: attributes, then children grouped by name, then text.
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
            var object = Value.Object(minimumCapacity: slice.count + 1)
            var order: [Int32] = []
            var groups: [Int32: [Member]] = [:]
            for m in slice {
                if groups[m.name] == nil { order.append(m.name) }
                groups[m.name, default: []].append(m)
            }
            for id in order {
                object.append(names[Int(id)], combine(groups[id]!))
            }
            if let textValue { object.append(Self.textKey, textValue) }
            return (.object(object), false)
        }
        var values: [Value] = []
        values.reserveCapacity(slice.count + 1)
        for m in slice { values.append(memberValue(m)) }
        if let textValue { values.append(textValue) }
        return (.object(Value.Object(uniqueKeys: keys(for: frame.name, slice, text: textValue != nil), values: values)), false)
    }

    static let textKey = "#text"

    /// The member names of an object built for an element named `element` whose members are `slice`
    /// (plus `#text`): the same array as the previous object of that element when the layout repeats,
    /// as it does in a list, so the objects share one `keys` buffer.
    private mutating func keys(for element: Int32, _ slice: ArraySlice<Member>, text: Bool) -> [String] {
        let index = Int(element)
        if index < layouts.count, let layout = layouts[index], layout.ids.count == slice.count + (text ? 1 : 0) {
            var same = true
            var i = 0
            for m in slice {
                if layout.ids[i] != m.name {
                    same = false
                    break
                }
                i += 1
            }
            if same, !text || layout.ids[i] == -1 { return layout.keys }
        }
        var ids: [Int32] = []
        var keys: [String] = []
        ids.reserveCapacity(slice.count + 1)
        keys.reserveCapacity(slice.count + 1)
        for m in slice {
            ids.append(m.name)
            keys.append(names[Int(m.name)])
        }
        if text {
            ids.append(-1)
            keys.append(Self.textKey)
        }
        if index >= layouts.count { layouts.append(contentsOf: repeatElement(nil, count: index + 1 - layouts.count)) }
        layouts[index] = Layout(ids: ids, keys: keys)
        return keys
    }

    private func memberValue(_ m: Member) -> Value {
        if m.arrayShaped && !m.spread { return .array([m.value]) }
        return m.value
    }

    private func combine(_ group: [Member]) -> Value {
        if group.count == 1 { return memberValue(group[0]) }
        var elements: [Value] = []
        elements.reserveCapacity(group.count)
        for m in group {
            if let item = m.emptyItem {
                // One empty element among repeated siblings is an empty item, not an empty list.
                elements.append(item)
            } else if m.spread, case .array(let inner) = m.value {
                elements.append(contentsOf: inner)
            } else {
                elements.append(m.value)
            }
        }
        return .array(elements)
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

    // MARK: Failures

    /// The current line and column of the parser.
    private func position() -> CourierError.Context {
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
            let earlier = members[(parent.membersStart + parent.attributeCount)..<frames[i].membersStart].reduce(0) { count, m in
                guard m.name == frames[i].name else { return count }
                if m.spread, case .array(let inner) = m.value { return count + inner.count }
                return count + 1
            }
            if (frames[i].arrayMember && !frames[i].wrapper) || earlier > 0 { path.append(.index(earlier)) }
        }
        return path
    }

    /// Records the first failure and stops the parser. Only for failures found in SAX callbacks, where
    /// libxml2 supports `xmlStopParser`; errors libxml2 reports itself go through ``record(_:)``.
    private mutating func fail(_ error: CourierError) {
        guard !failed else { return }
        failure = error
        failed = true
        if let context { xmlStopParser(context) }
    }

    /// Records the first failure libxml2 reported. The parser is not stopped from its own error
    /// handler (halting it mid encoding switch crashes libxml2 2.9); after a fatal error it delivers no
    /// more SAX events and winds down by itself.
    private mutating func record(_ error: CourierError) {
        guard !failed else { return }
        failure = error
        failed = true
    }

    private mutating func failMismatch(_ detail: String, pending: PathComponent? = nil) {
        var context = position()
        context.codingPath = codingPath()
        if let pending { context.codingPath.append(pending) }
        let path = PathComponent.render(context.codingPath)
        fail(CourierError(.typeMismatch, detail: path.isEmpty ? detail : "\(path): \(detail)", context: context))
    }

    /// Stops the parse with ``CourierError/Code/sizeLimitExceeded``: "`what` than the limit `limit` =
    /// `value`", with the coding path (plus `pending`), line and column.
    private mutating func failLimit(_ what: String, _ limit: String, _ value: Int, pending: PathComponent? = nil) {
        var context = position()
        context.codingPath = codingPath()
        if let pending { context.codingPath.append(pending) }
        let path = PathComponent.render(context.codingPath)
        let place = path.isEmpty ? "at the root element" : "at \(path)"
        fail(
            CourierError(
                .sizeLimitExceeded,
                detail: "\(what) than the limit \(limit) = \(value) \(place), line \(context.line ?? 0), column \(context.column ?? 0)",
                context: context))
    }

    mutating func refuse(_ detail: String) {
        fail(CourierError(.unsafeInput, detail: detail, context: position()))
    }

    mutating func libxml2Error(_ error: xmlError) {
        guard !failed else { return }
        guard error.level.rawValue >= XML_ERR_ERROR.rawValue else { return }  // warnings are not failures
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
                    detail: "the XML document nests deeper than libxml2's limit of \(XMLReader.libxml2MaximumDepth) elements",
                    context: context))
        case _ where pendingFailure != nil:
            record(CourierError(.malformedInput, detail: message, context: context, underlying: XMLReader.EncodingComplaint()))
        case XML_ERR_INVALID_CHAR, XML_ERR_INVALID_ENCODING, XML_ERR_UNSUPPORTED_ENCODING, XML_ERR_UNKNOWN_ENCODING,
            XML_ERR_INVALID_CHARREF:
            record(CourierError(.malformedInput, detail: message, context: context, underlying: XMLReader.EncodingComplaint()))
        case XML_ERR_ENTITY_LOOP, XML_ERR_ENTITY_BOUNDARY:
            record(CourierError(.sizeLimitExceeded, detail: message, context: context))
        case XML_ERR_EXT_ENTITY_STANDALONE, XML_ERR_ENTITY_IS_EXTERNAL, XML_ERR_UNPARSED_ENTITY:
            record(CourierError(.unsafeInput, detail: message, context: context))
        default:
            record(CourierError(.malformedInput, detail: message, context: context))
        }
    }
}
