import CLibXML2
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads an XML document into a ``Value`` with libxml2's SAX2 push of callbacks: no DOM is built, an
/// ``XMLBuilder`` with an ``XMLTreeOutput`` makes the tree.
///
/// Each call owns its parser context, so reads on several threads at once are safe.
enum XMLReader {
    /// Runs libxml2's one-time global initialisation exactly once.
    private static let initialized: Void = { xmlInitParser() }()

    /// Runs libxml2's one-time global initialisation if no read has yet.
    static func initialize() { _ = initialized }

    /// libxml2's own nesting limit without `XML_PARSE_HUGE` (`xmlParserMaxDepth`).
    static let libxml2MaximumDepth = 256

    /// Parses `data`; returns the root element's name and content. `marksWholeInput: false` parses as
    /// libxml2 does by default, refilling and shrinking its input as it goes, `reusesParser: false` on a
    /// parser context of its own, not a kept one, and `guessesNames: false` looks every start tag's name up
    /// (for tests that compare).
    static func read(
        _ data: Data, shape: ValueShape?, limits: DecodingLimits, marksWholeInput: Bool = true,
        reusesParser: Bool = true, guessesNames: Bool = true
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
            var builder = XMLBuilder(output: XMLTreeOutput(), shape: shape ?? .any, limits: limits)
            builder.marksWholeInput = marksWholeInput
            builder.reusesParser = reusesParser
            builder.guessesNames = guessesNames
            defer { builder.release() }
            let parsed = XMLParse.run(raw, into: &builder)
            builder.keepRegistry()
            guard let wellFormed = parsed else {
                throw CourierError(.malformedInput, detail: "libxml2 could not create a parser context")
            }
            // Any error recorded by the callbacks stops the parser; read it first.
            if let failure = builder.failure ?? builder.pendingFailure {
                throw refine(failure, data: raw)
            }
            guard wellFormed, let value = builder.root else {
                throw CourierError(.malformedInput, detail: "the XML document is not well-formed")
            }
            return (builder.rootName >= 0 ? builder.names[Int(builder.rootName)] : "", value)
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
}

/// The pivot's output: the `Value` tree, with every failure described.
struct XMLTreeOutput: XMLBuildOutput {
    /// The member names of an object, by interned id (`0` for `#text`), and as strings.
    struct Layout {
        var ids: [Int32]
        var keys: [String]
    }

    /// Per element name (by interned id): the member layout of the last object built for it.
    var layouts: [Layout?] = []

    static var describesFailures: Bool { true }

    func leaf(_ value: consuming Value) -> Value { value }

    func release() {}

    func array(_ elements: [Value]) -> Value { .array(elements) }

    func arrayOfOne(_ element: Value) -> Value { .array([element]) }

    func array(of members: ArraySlice<XMLMember<Value>>) -> Value {
        var elements: [Value] = []
        elements.reserveCapacity(members.count)
        // By index: each member's node is copied, not the whole member.
        for i in members.indices { elements.append(members[i].node) }
        return .array(elements)
    }

    func appendItems(of node: Value, to elements: inout [Value]) -> Bool {
        guard case .array(let inner) = node else { return false }
        elements.append(contentsOf: inner)
        return true
    }

    func itemCount(_ node: Value) -> Int? {
        guard case .array(let inner) = node else { return nil }
        return inner.count
    }

    func object(keys: [Int32], values: [Value], names: [String]) -> Value {
        .object(Value.Object(uniqueKeys: keys.map { names[Int($0)] }, values: values))
    }

    mutating func object(
        element: Int32, members: UnsafeBufferPointer<XMLMember<Value>>, text: Value?, names: [String]
    ) -> Value {
        var values: [Value] = []
        values.reserveCapacity(members.count + 1)
        for i in members.indices { values.append(node(of: members[i])) }
        if let text { values.append(text) }
        return .object(
            Value.Object(uniqueKeys: keys(for: element, members, text: text != nil, names: names), values: values))
    }

    /// The member names of an object built for an element named `element` whose members are `members`
    /// (plus `#text`): the same array as the previous object of that element when the layout repeats, as
    /// it does in a list, so the objects share one `keys` buffer.
    private mutating func keys(
        for element: Int32, _ members: UnsafeBufferPointer<XMLMember<Value>>, text: Bool, names: [String]
    ) -> [String] {
        let index = Int(element)
        if index < layouts.count, let layout = layouts[index], layout.ids.count == members.count + (text ? 1 : 0) {
            var same = true
            var i = 0
            for j in members.indices {
                if layout.ids[i] != members[j].name {
                    same = false
                    break
                }
                i += 1
            }
            if same, !text || layout.ids[i] == 0 { return layout.keys }
        }
        var ids: [Int32] = []
        var keys: [String] = []
        ids.reserveCapacity(members.count + 1)
        keys.reserveCapacity(members.count + 1)
        for j in members.indices {
            ids.append(members[j].name)
            keys.append(names[Int(members[j].name)])
        }
        if text {
            ids.append(0)
            keys.append(XMLParse.textKey)
        }
        if index >= layouts.count { layouts.append(contentsOf: repeatElement(nil, count: index + 1 - layouts.count)) }
        layouts[index] = Layout(ids: ids, keys: keys)
        return keys
    }

    func addingRequiredArrays(_ required: [Int32], to node: Value, names: [String]) -> Value {
        guard case .object(var object) = node else { return node }
        var filled = false
        for id in required where object[names[Int(id)]] == nil {
            object.append(names[Int(id)], .array([]))
            filled = true
        }
        return filled ? .object(object) : node
    }
}
