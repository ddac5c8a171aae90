import Courier
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Decoder` over one node of an ``XMLTape``: `ValueDecoder`'s answers for the common requests
/// (containers, strings, booleans, integers and numbers held exactly), read in place. Everything else —
/// dates, data, URLs, decimals, `Value`, numbers kept as text, lenient numbers — is handed to the
/// call's own `ValueDecoder` with the node materialised as a `Value`, so it answers the same by
/// construction. Any failure, and the requests it does not answer (`codingPath`, a super decoder where
/// the member is missing), mark the tape as bailed: the codec then runs the pivot.
struct XMLTapeDecoding: Decoder, SingleValueDecodingContainer, ScalarListSource {
    let tape: XMLTape
    let node: Int32

    /// Not answered on the tape: asking for it sends the call to the pivot.
    var codingPath: [any CodingKey] {
        tape.bailed = true
        return []
    }

    var userInfo: [CodingUserInfoKey: Any] { tape.userInfo }

    /// Marks the tape as bailed and returns the error to throw.
    func bail() -> XMLTapeReader.Bail { tape.bail() }

    // MARK: Containers

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let n = tape.nodes[Int(node)]
        guard n.kind == XMLTape.Node.object else { throw bail() }
        let container = XMLTapeKeyedContainer<Key>(tape: tape, start: Int(n.start), end: Int(n.start + n.count))
        return KeyedDecodingContainer(container)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let n = tape.nodes[Int(node)]
        guard n.kind == XMLTape.Node.array else { throw bail() }
        return XMLTapeUnkeyedContainer(tape: tape, start: Int(n.start), count: Int(n.count))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Nested values

    /// Decodes `T` from this node, as `ValueDecoding.unwrap` does.
    func unwrap<T: Decodable>(_ type: T.Type) throws -> T {
        // Lists of common scalars skip the generic `Array.init(from:)` (which gives the same result); a
        // list with anything else goes through it.
        if T.self == [String].self, let fast = scalars({ (v: Value) -> String? in v.stringValue }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Int].self, let fast = scalars({ (v: Value) -> Int? in v.exactInteger(as: Int.self) }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Int64].self, let fast = scalars({ (v: Value) -> Int64? in v.exactInteger(as: Int64.self) }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Double].self, let fast = scalars({ (v: Value) -> Double? in v.plainNumber }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Bool].self, let fast = scalars({ (v: Value) -> Bool? in v.boolValue }) {
            return unsafeBitCast(fast, to: T.self)
        }
        // The other lists of scalars. `Any`, not `T?`: an optional of an unspecialized `T` would look up its
        // metadata on every call, whatever `T` is.
        if mayBeScalarArray(T.self), let fast = floatOrIntegerList(as: T.self) {
            return fast as! T
        }
        if T.self == Value.self || T.self == Date.self || T.self == Data.self || T.self == URL.self
            || T.self == Decimal.self
        {
            return try delegated(T.self)
        }
        // Other lists are read as `Array.init(from:)` reads them, in an array reserved for all their items
        // (instead of regrowing it from empty).
        if tape.nodes[Int(node)].kind == XMLTape.Node.array, let list = T.self as? any XMLTapeList.Type {
            return try list.decodeReserved(from: self) as! T
        }
        return try T(from: self)
    }

    /// The items of this array node converted by `convert`; `nil` when this is not an array or an item
    /// does not convert.
    func scalars<E>(_ convert: (Value) -> E?) -> [E]? {
        let n = tape.nodes[Int(node)]
        guard n.kind == XMLTape.Node.array else { return nil }
        var result: [E] = []
        result.reserveCapacity(Int(n.count))
        for i in Int(n.start)..<Int(n.start + n.count) {
            let item = tape.nodes[Int(tape.items[i])]
            guard item.kind == XMLTape.Node.leaf, let converted = convert(tape.leaves[Int(item.start)]) else {
                return nil
            }
            result.append(converted)
        }
        return result
    }

    /// `T` decoded by the call's `ValueDecoder` from this node as a `Value`.
    func delegated<T: Decodable>(_ type: T.Type) throws -> T { try tape.delegated(T.self, node) }

    // MARK: Scalars

    func decodeNil() -> Bool { tape.isNull(node) }
    func decode(_ type: Bool.Type) throws -> Bool { try tape.bool(node) }
    func decode(_ type: String.Type) throws -> String { try tape.string(node) }
    func decode(_ type: Double.Type) throws -> Double { try tape.double(node) }
    func decode(_ type: Float.Type) throws -> Float { try tape.float(node) }

    @inline(__always)
    func integer<T: FixedWidthInteger & Decodable>(_ type: T.Type) throws -> T { try tape.integer(T.self, node) }

    func decode(_ type: Int.Type) throws -> Int { try integer(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(UInt64.self) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(T.self) }
}

/// An array of decodable elements, read from an array node of the tape.
protocol XMLTapeList {
    static func decodeReserved(from decoder: XMLTapeDecoding) throws -> Self
}

extension Array: XMLTapeList where Element: Decodable {
    /// What `Array.init(from:)` does (items in order from an unkeyed container, until it is at its end),
    /// with room reserved for every item.
    static func decodeReserved(from decoder: XMLTapeDecoding) throws -> [Element] {
        var container = try decoder.unkeyedContainer()
        var items: [Element] = []
        items.reserveCapacity(container.count ?? 0)
        while !container.isAtEnd { items.append(try container.decode(Element.self)) }
        return items
    }
}

/// A keyed container over an object node's members.
struct XMLTapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let tape: XMLTape
    let start: Int
    let end: Int

    init(tape: XMLTape, start: Int, end: Int) {
        self.tape = tape
        self.start = start
        self.end = end
    }

    var codingPath: [any CodingKey] {
        tape.bailed = true
        return []
    }

    var allKeys: [Key] {
        (start..<end).compactMap { Key(stringValue: tape.keyNames[Int(tape.memberKeys[$0])]) }
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    @inline(__always)
    private func find(_ key: Key) -> Int32? {
        let name = key.stringValue
        let h = tape.hint
        if h >= start, h < end, tape.keyNames[Int(tape.memberKeys[h])] == name {
            tape.hint = h + 1
            return tape.memberNodes[h]
        }
        guard let i = tape.member(named: name, start, end) else { return nil }
        tape.hint = i + 1
        return tape.memberNodes[i]
    }

    /// The member's node; a missing member bails.
    @inline(__always)
    private func node(_ key: Key) throws -> Int32 {
        guard let node = find(key) else { throw tape.bail() }
        return node
    }

    @inline(__always)
    private func require(_ key: Key) throws -> XMLTapeDecoding {
        XMLTapeDecoding(tape: tape, node: try node(key))
    }

    /// The member's node for `decodeIfPresent`: `nil` when absent or null.
    @inline(__always)
    private func presentNode(_ key: Key) -> Int32? {
        guard let node = find(key), !tape.isNull(node) else { return nil }
        return node
    }

    @inline(__always)
    private func integer<T: FixedWidthInteger & Decodable>(_ key: Key) throws -> T {
        try tape.integer(T.self, try node(key))
    }

    @inline(__always)
    private func presentInteger<T: FixedWidthInteger & Decodable>(_ key: Key) throws -> T? {
        try presentNode(key).map { try tape.integer(T.self, $0) }
    }

    func decodeNil(forKey key: Key) throws -> Bool { tape.isNull(try node(key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try tape.bool(try node(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try tape.string(try node(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try tape.double(try node(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try tape.float(try node(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try require(key).unwrap(T.self) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try presentNode(key).map { try tape.bool($0) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try presentNode(key).map { try tape.string($0) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try presentNode(key).map { try tape.double($0) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try presentNode(key).map { try tape.float($0) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try presentInteger(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try presentInteger(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try presentInteger(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try presentInteger(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try presentInteger(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try presentInteger(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try presentInteger(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try presentInteger(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try presentInteger(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try presentInteger(key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try presentNode(key).map { try XMLTapeDecoding(tape: tape, node: $0).unwrap(T.self) }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try require(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try require(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        // The pivot reads the member `super`, or null without one.
        var i = start
        while i < end {
            if tape.keyNames[Int(tape.memberKeys[i])] == "super" {
                return XMLTapeDecoding(tape: tape, node: tape.memberNodes[i])
            }
            i += 1
        }
        tape.bailed = true
        throw XMLTapeReader.Bail()
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        guard let node = find(key) else {
            tape.bailed = true
            throw XMLTapeReader.Bail()
        }
        return XMLTapeDecoding(tape: tape, node: node)
    }
}

/// An unkeyed container over an array node's items.
struct XMLTapeUnkeyedContainer: UnkeyedDecodingContainer {
    let tape: XMLTape
    // Three words in all, so that the existential holds it without a box.
    private let first: Int32
    private let total: Int32
    private(set) var currentIndex = 0

    init(tape: XMLTape, start: Int, count: Int) {
        self.tape = tape
        first = Int32(start)
        total = Int32(count)
    }

    private var start: Int { Int(first) }

    var codingPath: [any CodingKey] {
        tape.bailed = true
        return []
    }

    var count: Int? { Int(total) }
    var isAtEnd: Bool { currentIndex >= Int(total) }

    /// The node of the current item, moving past it.
    @inline(__always)
    private mutating func nextNode() throws -> Int32 {
        guard currentIndex < Int(total) else { throw tape.bail() }
        let item = tape.items[start + currentIndex]
        currentIndex += 1
        return item
    }

    /// The decoder of the current item, moving past it.
    @inline(__always)
    private mutating func next() throws -> XMLTapeDecoding { XMLTapeDecoding(tape: tape, node: try nextNode()) }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < Int(total) else {
            tape.bailed = true
            throw XMLTapeReader.Bail()
        }
        guard XMLTapeDecoding(tape: tape, node: tape.items[start + currentIndex]).decodeNil() else { return false }
        currentIndex += 1
        return true
    }

    // A failed item leaves the index where it was in the pivot, but any failure bails anyway.
    mutating func decode(_ type: Bool.Type) throws -> Bool { try tape.bool(try nextNode()) }
    mutating func decode(_ type: String.Type) throws -> String { try tape.string(try nextNode()) }
    mutating func decode(_ type: Double.Type) throws -> Double { try tape.double(try nextNode()) }
    mutating func decode(_ type: Float.Type) throws -> Float { try tape.float(try nextNode()) }
    mutating func decode(_ type: Int.Type) throws -> Int { try tape.integer(Int.self, try nextNode()) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try tape.integer(Int8.self, try nextNode()) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try tape.integer(Int16.self, try nextNode()) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try tape.integer(Int32.self, try nextNode()) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try tape.integer(Int64.self, try nextNode()) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try tape.integer(UInt.self, try nextNode()) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try tape.integer(UInt8.self, try nextNode()) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try tape.integer(UInt16.self, try nextNode()) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try tape.integer(UInt32.self, try nextNode()) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try tape.integer(UInt64.self, try nextNode()) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().unwrap(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next() }
}

/// The scalar reads of ``XMLTapeDecoding`` and the containers, on the tape itself: a container answers a member
/// through these without making (and retaining the tape for) a decoder of its own.
extension XMLTape {
    /// Marks the tape as bailed and returns the error to throw.
    func bail() -> XMLTapeReader.Bail {
        bailed = true
        return XMLTapeReader.Bail()
    }

    /// The scalar of a leaf node; `nil` (never a `Value` case) for containers.
    @inline(__always)
    func leaf(_ node: Int32) -> Value? {
        let n = nodes[Int(node)]
        return n.kind == Node.leaf ? leaves[Int(n.start)] : nil
    }

    /// `T` decoded by the call's `ValueDecoder` from `node` as a `Value`.
    func delegated<T: Decodable>(_ type: T.Type, _ node: Int32) throws -> T {
        do {
            return try decoder.decode(T.self, from: value(node))
        } catch {
            throw bail()
        }
    }

    func isNull(_ node: Int32) -> Bool {
        let n = nodes[Int(node)]
        guard n.kind == Node.leaf else { return false }
        if case .null = leaves[Int(n.start)] { return true }
        return false
    }

    func bool(_ node: Int32) throws -> Bool {
        guard case .bool(let b)? = leaf(node) else { throw bail() }
        return b
    }

    func string(_ node: Int32) throws -> String {
        guard case .string(let s)? = leaf(node) else { throw bail() }
        return s
    }

    func double(_ node: Int32) throws -> Double {
        switch leaf(node) {
        case .some(.double(let d)): return d
        case .some(.int(let i)): return Double(i)
        case .some(.uint(let u)): return Double(u)
        default: return try delegated(Double.self, node)
        }
    }

    func float(_ node: Int32) throws -> Float {
        let d: Double
        switch leaf(node) {
        case .some(.double(let v)): d = v
        case .some(.int(let i)): d = Double(i)
        case .some(.uint(let u)): d = Double(u)
        default: return try delegated(Float.self, node)
        }
        let f = Float(d)
        guard f.isFinite || !d.isFinite else { throw bail() }
        return f
    }

    @inline(__always)
    func integer<T: FixedWidthInteger & Decodable>(_ type: T.Type, _ node: Int32) throws -> T {
        switch leaf(node) {
        case .some(.int(let i)):
            if let v = T(exactly: i) { return v }
        case .some(.uint(let u)):
            if let v = T(exactly: u) { return v }
        default:
            return try delegated(T.self, node)
        }
        throw bail()
    }
}
