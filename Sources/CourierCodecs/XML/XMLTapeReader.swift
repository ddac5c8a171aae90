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
/// The tape comes from the pivot's own ``XMLBuilder`` (the same shape resolution, wrapper detection,
/// grouping of repeated siblings, empty lists and limits) with an ``XMLTapeOutput``, so that a tape
/// materialised as a `Value` is the pivot's `Value`. Anything the tape path does not reproduce exactly — every failure (syntax, limits,
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

    /// The tape of `data`, or `nil` when the document needs the pivot (including every error). `plainTags: false`
    /// reads every document with namespace processing (for tests that compare; see
    /// ``XMLBuilder/readsPlainTags``).
    static func read(
        _ data: Data, shape: ValueShape, limits: DecodingLimits, decoder: ValueDecoder, plainTags: Bool = true
    ) -> XMLTape? {
        guard !data.isEmpty, data.count <= limits.maximumInputSize, data.count <= Int(Int32.max) else { return nil }
        XMLReader.initialize()
        return data.withUnsafeBytes { raw -> XMLTape? in
            if XMLStartTagScanner.firstCrowdedTagInAnyEncoding(raw.bindMemory(to: UInt8.self), limits: limits) != nil {
                return nil
            }
            var builder = XMLBuilder(
                output: XMLTapeOutput(reservingForBytes: raw.count), shape: shape, limits: limits)
            builder.readsPlainTags = plainTags && XMLStartTagScanner.hasPlainTags(raw.bindMemory(to: UInt8.self))
            defer { builder.release() }
            let wellFormed = XMLParse.run(raw, into: &builder) == true
            builder.keepRegistry()
            guard wellFormed, !builder.failed, let root = builder.root else { return nil }
            return XMLTape(output: builder.output.take(), names: builder.names, root: root, decoder: decoder)
        }
    }
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

    // In memory of the tape's own (moved from the builder's output), freed with the tape.
    let nodes: XMLStack<Node>
    let leaves: [Value]
    let memberKeys: XMLStack<Int32>
    let memberNodes: XMLStack<Int32>
    let items: XMLStack<Int32>
    /// Interned names; `names[0]` is `#text`.
    let names: [String]
    /// The names as keyed containers match them: `names`, or, for the names of the document's members,
    /// converted from snake case to camel case when the decoder's key strategy is `.convertFromSnakeCase`
    /// (as `ValueDecoder` converts members).
    let keyNames: [String]
    /// Whether two names of the document's members convert to the same key, which the pivot resolves by
    /// keeping the last member: the tape then leaves the document to the pivot.
    let keyNamesCollide: Bool
    let root: Int32
    let decoder: ValueDecoder
    let userInfo: [CodingUserInfoKey: Any]
    /// Set when a request could not be answered exactly as the pivot would; the pivot then runs.
    @exclusivity(unchecked) var bailed = false
    /// Where the next keyed lookup probably is (models usually read members in order): a guess shared by
    /// all containers, checked before use.
    @exclusivity(unchecked) var hint = 0
    /// The members of large objects by name (their first index), keyed by the object's first member: built
    /// for an object of more than ``indexedCount`` members once ``scansBeforeTable`` lookups in it have
    /// missed the hint, since each miss reads every name.
    @exclusivity(unchecked) var tables: [Int: [String: Int]] = [:]
    /// How many lookups have missed the hint, per object (keyed as ``tables``).
    @exclusivity(unchecked) var misses: [Int: Int] = [:]
    static var indexedCount: Int { 16 }
    static var scansBeforeTable: Int { 4 }

    deinit {
        var stacks = (nodes, memberKeys, memberNodes, items)
        stacks.0.release()
        stacks.1.release()
        stacks.2.release()
        stacks.3.release()
    }

    init(output: consuming XMLTapeOutput, names: [String], root: Int32, decoder: ValueDecoder) {
        self.nodes = output.nodes
        self.leaves = output.leaves
        self.memberKeys = output.memberKeys
        self.memberNodes = output.memberNodes
        self.items = output.items
        self.names = names
        if decoder.keyStrategy == .convertFromSnakeCase {
            (keyNames, keyNamesCollide) = Self.camelCaseKeys(names, keys: output.memberKeys.elements(from: 0))
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

    /// The member named `name` among members `start..<end` when the hint missed: the first one with that
    /// name, found by reading every name, or through a table once the object's lookups keep missing.
    func member(named name: String, _ start: Int, _ end: Int) -> Int? {
        if end - start > Self.indexedCount {
            if let table = tables[start] { return table[name] }
            let missed = misses[start, default: 0] + 1
            misses[start] = missed
            if missed > Self.scansBeforeTable {
                var table = [String: Int](minimumCapacity: end - start)
                for i in start..<end where table[keyNames[Int(memberKeys[i])]] == nil {
                    table[keyNames[Int(memberKeys[i])]] = i
                }
                tables[start] = table
                return table[name]
            }
        }
        var i = start
        while i < end {
            if keyNames[Int(memberKeys[i])] == name { return i }
            i += 1
        }
        return nil
    }

    /// `names` with those of the document's members (`keys`) converted from snake case to camel case (the
    /// others, of earlier documents, are never looked up), and whether two different names among them
    /// convert to the same key. (A name may have more than one id.)
    private static func camelCaseKeys(
        _ names: [String], keys: UnsafeBufferPointer<Int32>
    ) -> (keyNames: [String], collide: Bool) {
        var converted = names
        var seen = [Bool](repeating: false, count: names.count)
        var originals: [String: String] = [:]
        var collide = false
        for key in keys where !seen[Int(key)] {
            seen[Int(key)] = true
            let original = names[Int(key)]
            let camel = KeyCodingStrategy.camelCase(fromSnakeCase: original)
            converted[Int(key)] = camel
            if let earlier = originals.updateValue(original, forKey: camel), earlier != original { collide = true }
        }
        return (converted, collide)
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

/// The direct path's output: nodes on the tape. Any failure only stops the parse, and the pivot reads the
/// document again to say what it was.
struct XMLTapeOutput: XMLBuildOutput {
    // Stacks in memory of their own (no copy-on-write check per append): freed by ``release()`` or by the tape
    // they move to.
    var nodes: XMLStack<XMLTape.Node>
    var leaves: [Value] = []
    var memberKeys: XMLStack<Int32>
    var memberNodes: XMLStack<Int32>
    var items: XMLStack<Int32>
    /// Whether this copy frees the stacks (``release()``): not once ``take()`` moved them to another.
    private var ownsStacks = true

    static var describesFailures: Bool { false }

    /// Reserves room for the nodes of a document of `size` bytes (about one node per 16 bytes of XML: a
    /// list of small records has an element per 21 bytes and a node per 18; at most 131,072 up front, as a
    /// document of one long text needs none), so that the arrays seldom regrow (each regrowth copies them).
    init(reservingForBytes size: Int) {
        let estimate = min(size / 16, 1 << 17)
        nodes = XMLStack(capacity: estimate)
        leaves.reserveCapacity(estimate)
        memberKeys = XMLStack(capacity: estimate)
        memberNodes = XMLStack(capacity: estimate)
        items = XMLStack(capacity: estimate / 4)
    }

    mutating func release() {
        guard ownsStacks else { return }
        nodes.release()
        memberKeys.release()
        memberNodes.release()
        items.release()
    }

    /// The output, moved out: this copy no longer frees the stacks (the tape they move to does) and holds
    /// no leaves.
    mutating func take() -> XMLTapeOutput {
        let moved = self
        ownsStacks = false
        leaves = []
        return moved
    }

    /// Appends a scalar that is not an object.
    mutating func scalar(_ value: consuming Value) -> Int32 {
        nodes.append(XMLTape.Node(kind: XMLTape.Node.leaf, start: Int32(leaves.count), count: 0))
        leaves.append(value)
        return Int32(nodes.count - 1)
    }

    mutating func leaf(_ value: consuming Value) -> Int32 {
        if case .object(let object) = value, object.isEmpty {
            nodes.append(XMLTape.Node(kind: XMLTape.Node.object, start: Int32(memberKeys.count), count: 0))
            return Int32(nodes.count - 1)
        }
        nodes.append(XMLTape.Node(kind: XMLTape.Node.leaf, start: Int32(leaves.count), count: 0))
        leaves.append(value)
        return Int32(nodes.count - 1)
    }

    mutating func array(_ elements: [Int32]) -> Int32 {
        nodes.append(XMLTape.Node(kind: XMLTape.Node.array, start: Int32(items.count), count: Int32(elements.count)))
        items.append(contentsOf: elements)
        return Int32(nodes.count - 1)
    }

    mutating func arrayOfOne(_ element: Int32) -> Int32 {
        nodes.append(XMLTape.Node(kind: XMLTape.Node.array, start: Int32(items.count), count: 1))
        items.append(element)
        return Int32(nodes.count - 1)
    }

    mutating func array(of members: ArraySlice<XMLMember<Int32>>) -> Int32 {
        nodes.append(XMLTape.Node(kind: XMLTape.Node.array, start: Int32(items.count), count: Int32(members.count)))
        for m in members { items.append(m.node) }
        return Int32(nodes.count - 1)
    }

    func appendItems(of node: Int32, to elements: inout [Int32]) -> Bool {
        let n = nodes[Int(node)]
        guard n.kind == XMLTape.Node.array else { return false }
        elements.append(contentsOf: items.elements(Int(n.start)..<Int(n.start + n.count)))
        return true
    }

    func itemCount(_ node: Int32) -> Int? {
        let n = nodes[Int(node)]
        return n.kind == XMLTape.Node.array ? Int(n.count) : nil
    }

    mutating func object(keys: [Int32], values: [Int32], names: [String]) -> Int32 {
        nodes.append(XMLTape.Node(kind: XMLTape.Node.object, start: Int32(memberKeys.count), count: Int32(keys.count)))
        memberKeys.append(contentsOf: keys)
        memberNodes.append(contentsOf: values)
        return Int32(nodes.count - 1)
    }

    /// The members go straight to the member arrays (``node(of:)`` only adds nodes and items).
    mutating func object(
        element: Int32, members: UnsafeBufferPointer<XMLMember<Int32>>, text: Int32?, names: [String]
    ) -> Int32 {
        let start = Int32(memberKeys.count)
        for m in members {
            memberKeys.append(m.name)
            memberNodes.append(node(of: m))
        }
        if let text {
            memberKeys.append(0)
            memberNodes.append(text)
        }
        nodes.append(XMLTape.Node(kind: XMLTape.Node.object, start: start, count: Int32(memberKeys.count) - start))
        return Int32(nodes.count - 1)
    }

    mutating func addingRequiredArrays(_ required: [Int32], to node: Int32, names: [String]) -> Int32 {
        let n = nodes[Int(node)]
        guard n.kind == XMLTape.Node.object else { return node }
        var missing: [Int32] = []
        for key in required {
            var found = false
            for i in Int(n.start)..<Int(n.start + n.count) where names[Int(memberKeys[i])] == names[Int(key)] {
                found = true
                break
            }
            if !found { missing.append(key) }
        }
        if missing.isEmpty { return node }
        // Re-lay the object with the empty lists appended.
        var keys = Array(memberKeys.elements(Int(n.start)..<Int(n.start + n.count)))
        var values = Array(memberNodes.elements(Int(n.start)..<Int(n.start + n.count)))
        for key in missing {
            keys.append(key)
            values.append(array([]))
        }
        return object(keys: keys, values: values, names: names)
    }
}
