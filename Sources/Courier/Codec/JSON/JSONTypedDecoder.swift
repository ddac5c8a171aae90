#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The typed JSON decoder: reads a `Decodable` model straight from a ``JSONTape`` without building a
// `Value` per node. Anything rare — a `Value`, `Date`, `Data`, `URL` or `Decimal` member, a value of the
// wrong type, a missing member — is handed to ``ValueDecoding`` with just that node materialised and a
// decoder chain that spells the same coding path, so results and errors are the Value path's own.

/// What all decoders of one typed decode share.
final class JSONTypedContext {
    let bytes: UnsafePointer<UInt8>
    let tape: UnsafeBufferPointer<JSONToken>
    let options: DecodingOptions
    let limits: DecodingLimits
    /// Finished child decoders nobody else holds, reused for the next children (one allocation per
    /// nesting level rather than per nested value). Emptied by ``drain()``: the decoders hold the context.
    @exclusivity(unchecked) var pool = JSONCoderPool<JSONTypedDecoding>()

    init(bytes: UnsafePointer<UInt8>, tape: UnsafeBufferPointer<JSONToken>, options: DecodingOptions, limits: DecodingLimits) {
        self.bytes = bytes
        self.tape = tape
        self.options = options
        self.limits = limits
    }

    /// A child decoder for the token at `index`, from the pool when it has one.
    @inline(__always)
    func child(index: Int, parent: JSONTypedDecoding, component: PathComponent?) -> JSONTypedDecoding {
        guard let reused = pool.take() else {
            return JSONTypedDecoding(context: self, index: index, parent: parent, component: component)
        }
        reused.index = index
        reused.parent = parent
        reused.component = component
        reused.hintMember = 0
        reused.hintName = index + 1
        reused.misses = 0
        reused.members = nil
        reused.bridgeNode = nil
        return reused
    }

    /// Takes `decoder` back for reuse when nothing else holds it.
    @inline(__always)
    func recycle(_ decoder: inout JSONTypedDecoding) { pool.recycle(&decoder) }

    /// Releases the pooled decoders (they hold this context strongly).
    func drain() { pool.drain() }

    @inline(__always)
    func string(_ index: Int) -> String { JSONTape.string(tape[index], bytes) }

    @inline(__always)
    func number(_ index: Int) -> Value {
        let token = tape[index]
        let count = Int(token.end)
        return (try? JSONParser.number(bytes, count: count, at: Int(token.start), maximumLength: .max).value) ?? .null
    }

    /// The token at `index` as a `Value` (containers through ``JSONParser``; they were validated already).
    func materialize(_ index: Int) -> Value {
        let token = tape[index]
        switch token.kind {
        case .string: return .string(string(index))
        case .number: return number(index)
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .null: return .null
        case .object, .array:
            var parser = JSONParser(
                bytes: bytes + Int(token.start), count: Int(token.end - token.start), limits: limits,
                duplicateKeys: .lastWins)
            return (try? parser.parse()) ?? .null
        }
    }

    /// The token at `index` as a `Value` for a scalar read that failed its fast path: a scalar in full, a
    /// container empty. No scalar read accepts a container, and its error names only the kind, so the
    /// container is not parsed again (a model that tries a scalar first at every level of a deep document
    /// would otherwise parse each subtree again per try).
    func scalarOrKind(_ index: Int) -> Value {
        switch tape[index].kind {
        case .object: return .object(Value.Object())
        case .array: return .array([])
        default: return materialize(index)
        }
    }
}

/// The `Decoder` for one node of the tape. Nested decoders link to their parent, which is also the path.
final class JSONTypedDecoding: JSONPooledCoder, Decoder, SingleValueDecodingContainer {
    let context: JSONTypedContext
    @exclusivity(unchecked) var index: Int
    @exclusivity(unchecked) var parent: JSONTypedDecoding?
    @exclusivity(unchecked) var component: PathComponent?
    /// Where the next keyed lookup probably is: a member ordinal and the tape index of its name.
    @exclusivity(unchecked) var hintMember = 0
    @exclusivity(unchecked) var hintName = 0
    /// Lookups of this object's members that missed the hint and read every name (``JSONKeyedContainer``).
    @exclusivity(unchecked) var misses = 0
    /// This object's members by name, once lookups out of order have missed often enough: each member's
    /// ordinal and the tape index of its name.
    @exclusivity(unchecked) var members: [String: (member: Int, name: Int)]?
    /// The ``ValueDecoding`` (holding `.null`) that spells this decoder's path, linked to its parent's: built
    /// once per use of this decoder, so a read that falls back to ``ValueDecoding`` adds one node, not the
    /// whole path.
    @exclusivity(unchecked) var bridgeNode: ValueDecoding?

    init(context: JSONTypedContext, index: Int, parent: JSONTypedDecoding?, component: PathComponent?) {
        self.context = context
        self.index = index
        self.parent = parent
        self.component = component
        hintName = index + 1
    }

    var path: [PathComponent] {
        var result: [PathComponent] = []
        var node: JSONTypedDecoding? = self
        while let n = node {
            if let c = n.component { result.append(c) }
            node = n.parent
        }
        return result.reversed()
    }

    var codingPath: [any CodingKey] { path.map { ValueCodingKey($0) } }
    var userInfo: [CodingUserInfoKey: Any] { context.options.userInfo }

    @inline(__always)
    var kind: JSONToken.Kind { context.tape[index].kind }

    /// A ``ValueDecoding`` standing where this decoder stands (same path), holding `value`.
    func valueDecoding(_ value: Value) -> ValueDecoding {
        if case .null = value { return bridge() }
        return ValueDecoding(value: value, parent: parent?.bridge(), component: component, options: context.options)
    }

    /// ``bridgeNode``, built on first use.
    func bridge() -> ValueDecoding {
        if let bridgeNode { return bridgeNode }
        let node = ValueDecoding(value: .null, parent: parent?.bridge(), component: component, options: context.options)
        bridgeNode = node
        return node
    }

    // MARK: Containers

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        // Not an object: the Value path's error (a keyed container of anything else fails).
        guard kind == .object else { return try valueDecoding(context.scalarOrKind(index)).container(keyedBy: type) }
        return KeyedDecodingContainer(JSONKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard kind == .array else { return try valueDecoding(context.scalarOrKind(index)).unkeyedContainer() }
        return JSONUnkeyedContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Scalars (the token at `i`, a child of this decoder at `extra`, or this node when `extra` is nil)

    @inline(__always)
    func bool(_ i: Int, _ extra: @autoclosure () -> PathComponent?) throws -> Bool {
        switch context.tape[i].kind {
        case .true: return true
        case .false: return false
        default: return try valueDecoding(.null).unwrapBool(context.scalarOrKind(i), extra())
        }
    }

    @inline(__always)
    func string(_ i: Int, _ extra: @autoclosure () -> PathComponent?) throws -> String {
        guard context.tape[i].kind == .string else {
            return try valueDecoding(.null).unwrapString(context.scalarOrKind(i), extra())
        }
        return context.string(i)
    }

    @inline(__always)
    func integer<T: FixedWidthInteger>(_ i: Int, as type: T.Type, _ extra: @autoclosure () -> PathComponent?) throws -> T {
        if let result = integerValue(i, as: T.self) { return result }
        return try valueDecoding(.null).unwrapInteger(context.scalarOrKind(i), as: T.self, extra())
    }

    @inline(__always)
    func double(_ i: Int, _ extra: @autoclosure () -> PathComponent?) throws -> Double {
        if let d = doubleValue(i) { return d }
        return try valueDecoding(.null).unwrapDouble(context.scalarOrKind(i), extra())
    }

    @inline(__always)
    func float(_ i: Int, _ extra: @autoclosure () -> PathComponent?) throws -> Float {
        if let f = floatValue(i) { return f }
        return try valueDecoding(.null).unwrapFloat(context.scalarOrKind(i), extra())
    }

    /// Decodes `T` from the token at `i`, found at `component` below this decoder.
    func unwrap<T: Decodable>(_ i: Int, as type: T.Type, component: PathComponent?) throws -> T {
        if T.self == Value.self || T.self == Date.self || T.self == Data.self || T.self == URL.self
            || T.self == Decimal.self
        {
            return try valueDecoding(.null).unwrap(context.materialize(i), as: T.self, component: component)
        }
        if T.self == [String].self, let fast = scalars(i, { context.tape[$0].kind == .string ? context.string($0) : nil }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Int].self, let fast = scalars(i, { intValue($0) }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Double].self, let fast = scalars(i, { doubleValue($0) }) {
            return unsafeBitCast(fast, to: T.self)
        }
        // The other arrays of scalars. `Any`, not `T?`: an optional of an unspecialized `T` would look up its
        // metadata on every call, whatever `T` is.
        if mayBeScalarArray(T.self), let fast = scalarArray(i, as: T.self) {
            return fast as! T
        }
        guard component != nil else { return try T(from: self) }
        var nested = context.child(index: i, parent: self, component: component)
        let result = try T(from: nested)
        context.recycle(&nested)
        return result
    }

    @inline(__always)
    private func intValue(_ i: Int) -> Int? { integerValue(i, as: Int.self) }

    /// The number at `i` as a `T` when it is an integer `T` holds exactly, or `nil`.
    @inline(__always)
    private func integerValue<T: FixedWidthInteger>(_ i: Int, as type: T.Type) -> T? {
        guard context.tape[i].kind == .number, case .int(let v) = context.number(i) else { return nil }
        return T(exactly: v)
    }

    /// The number at `i` as a `Float` without falling back (finite unless the number itself is not), or `nil`.
    @inline(__always)
    private func floatValue(_ i: Int) -> Float? {
        doubleValue(i).flatMap(Value.float(narrowing:))
    }

    /// The array at `i` when `type` is an array of `Bool`, `Float` or a fixed-width integer other than `Int`
    /// and every element converts, or `nil` (then `Array.init(from:)` reads it, and names a failing element).
    @inline(never)
    private func scalarArray(_ i: Int, as type: Any.Type) -> Any? {
        if type == [Bool].self {
            return scalars(i) { k -> Bool? in
                switch context.tape[k].kind {
                case .true: true
                case .false: false
                default: nil
                }
            }
        }
        if type == [Float].self { return scalars(i) { floatValue($0) } }
        if type == [Int64].self { return scalars(i) { integerValue($0, as: Int64.self) } }
        if type == [Int32].self { return scalars(i) { integerValue($0, as: Int32.self) } }
        if type == [Int16].self { return scalars(i) { integerValue($0, as: Int16.self) } }
        if type == [Int8].self { return scalars(i) { integerValue($0, as: Int8.self) } }
        if type == [UInt].self { return scalars(i) { integerValue($0, as: UInt.self) } }
        if type == [UInt64].self { return scalars(i) { integerValue($0, as: UInt64.self) } }
        if type == [UInt32].self { return scalars(i) { integerValue($0, as: UInt32.self) } }
        if type == [UInt16].self { return scalars(i) { integerValue($0, as: UInt16.self) } }
        if type == [UInt8].self { return scalars(i) { integerValue($0, as: UInt8.self) } }
        return nil
    }

    /// The number at `i` as a `Double` without falling back (an exact integer or a double), or `nil`.
    @inline(__always)
    private func doubleValue(_ i: Int) -> Double? {
        guard context.tape[i].kind == .number else { return nil }
        switch context.number(i) {
        case .double(let d): return d
        case .int(let v): return Double(v)
        default: return nil
        }
    }

    /// The elements of the array at `i` converted by `convert`, or `nil` when any does not convert.
    private func scalars<E>(_ i: Int, _ convert: (Int) -> E?) -> [E]? {
        let token = context.tape[i]
        guard token.kind == .array else { return nil }
        var result: [E] = []
        result.reserveCapacity(Int(token.count))
        var k = i + 1
        for _ in 0..<token.count {
            guard let converted = convert(k) else { return nil }
            result.append(converted)
            k = Int(context.tape[k].next)
        }
        return result
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { kind == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try bool(index, nil) }
    func decode(_ type: String.Type) throws -> String { try string(index, nil) }
    func decode(_ type: Double.Type) throws -> Double { try double(index, nil) }
    func decode(_ type: Float.Type) throws -> Float { try float(index, nil) }
    func decode(_ type: Int.Type) throws -> Int { try integer(index, as: Int.self, nil) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(index, as: Int8.self, nil) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(index, as: Int16.self, nil) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(index, as: Int32.self, nil) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(index, as: Int64.self, nil) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(index, as: UInt.self, nil) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(index, as: UInt8.self, nil) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(index, as: UInt16.self, nil) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(index, as: UInt32.self, nil) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(index, as: UInt64.self, nil) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(index, as: T.self, component: nil) }
}

// MARK: - Keyed

/// An object's member names converted from snake case, as ``JSONKeyedContainer`` reads them: the converted
/// names and the tape index of each one's value, and for objects of more than
/// ``JSONKeyedContainer/indexedCount`` members the position of each name (one reference in the container).
private final class JSONConvertedNames {
    let members: [(name: String, value: Int)]
    let positions: [String: Int]?

    init(members: [(name: String, value: Int)], positions: [String: Int]?) {
        self.members = members
        self.positions = positions
    }
}

private struct JSONKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: JSONTypedDecoding
    let memberCount: Int
    /// With `convertFromSnakeCase`: the converted names and the tape index of each one's value, built the
    /// way the Value path builds its converted object (a name converted twice keeps its first position
    /// and takes the last value).
    let converted: JSONConvertedNames?

    /// Objects with more members than this are looked up through a table of their names, once
    /// ``scansBeforeTable`` lookups have missed the hinted member: each miss may read every name.
    static var indexedCount: Int { 16 }
    static var scansBeforeTable: Int { 4 }

    init(decoder: JSONTypedDecoding) {
        self.decoder = decoder
        let context = decoder.context
        memberCount = Int(context.tape[decoder.index].count)
        guard context.options.keyStrategy == .convertFromSnakeCase else {
            converted = nil
            return
        }
        var members: [(name: String, value: Int)] = []
        members.reserveCapacity(memberCount)
        var positions: [String: Int] = [:]
        var k = decoder.index + 1
        for _ in 0..<memberCount {
            let name = KeyCodingStrategy.camelCase(fromSnakeCase: context.string(k))
            if let position = positions[name] {
                members[position].value = k + 1
            } else {
                positions[name] = members.count
                members.append((name, k + 1))
            }
            k = Int(context.tape[k + 1].next)
        }
        converted = JSONConvertedNames(members: members, positions: memberCount > Self.indexedCount ? positions : nil)
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        if let converted { return converted.members.compactMap { Key(stringValue: $0.name) } }
        let context = decoder.context
        var keys: [Key] = []
        keys.reserveCapacity(memberCount)
        var k = decoder.index + 1
        for _ in 0..<memberCount {
            if let key = Key(stringValue: context.string(k)) { keys.append(key) }
            k = Int(context.tape[k + 1].next)
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { find(key.stringValue) != nil }

    /// The tape index of the member named `name`, starting where the last lookup ended.
    @inline(__always)
    private func find(_ name: String) -> Int? {
        guard memberCount > 0 else { return nil }
        if let converted {
            let members = converted.members
            let h = decoder.hintMember
            if h < members.count, members[h].name == name {
                decoder.hintMember = h + 1
                return members[h].value
            }
            let position = converted.positions.map { $0[name] } ?? members.firstIndex { $0.name == name }
            guard let i = position else { return nil }
            decoder.hintMember = i + 1
            return members[i].value
        }
        let context = decoder.context
        let tape = context.tape
        let bytes = context.bytes
        var name = name
        // An object of many members whose lookups keep missing the hint (out of order, escaped names, absent
        // members) gets a table of its names: from then on only the hinted member is compared byte for byte.
        let large = memberCount > Self.indexedCount
        if large, decoder.members == nil, decoder.misses >= Self.scansBeforeTable { buildTable() }
        let indexed = decoder.members != nil
        let found: Int? = name.withUTF8 { utf8 -> Int? in
            var member = decoder.hintMember
            var k = decoder.hintName
            if member >= memberCount {
                member = 0
                k = decoder.index + 1
            }
            for step in 0..<(indexed ? 1 : memberCount) {
                let token = tape[k]
                if !token.escaped, Int(token.end - token.start) - 1 == utf8.count,
                    utf8.isEmpty || JSONTape.memcmpEqual(bytes + Int(token.start) + 1, utf8.baseAddress!, utf8.count)
                {
                    if step > 0 && large { decoder.misses += 1 }
                    let valueIndex = k + 1
                    decoder.hintMember = member + 1
                    decoder.hintName = Int(tape[valueIndex].next)
                    return valueIndex
                }
                member += 1
                k = Int(tape[k + 1].next)
                if member == memberCount {
                    member = 0
                    k = decoder.index + 1
                }
            }
            return nil
        }
        if let found { return found }
        guard let table = decoder.members else {
            if large { decoder.misses += 1 }
            return findAsString(name)
        }
        // The tape's names are unique as `String`s, so the table finds what `findAsString` would.
        guard let (member, k) = table[name] else { return nil }
        decoder.hintMember = member + 1
        decoder.hintName = Int(tape[k + 1].next)
        return k + 1
    }

    /// Builds ``JSONTypedDecoding/members`` for this object.
    private func buildTable() {
        let context = decoder.context
        var table = [String: (member: Int, name: Int)](minimumCapacity: memberCount)
        var k = decoder.index + 1
        for member in 0..<memberCount {
            table[context.string(k)] = (member, k)
            k = Int(context.tape[k + 1].next)
        }
        decoder.members = table
    }

    /// The slow lookup after a byte-wise miss: `String` equality (canonical equivalence, as the Value
    /// path's object has) for escaped or non-ASCII names, or for every name when `name` is not ASCII.
    private func findAsString(_ name: String) -> Int? {
        let context = decoder.context
        let tape = context.tape
        let everyName = !name.utf8.allSatisfy { $0 < 0x80 }
        var k = decoder.index + 1
        for member in 0..<memberCount {
            let token = tape[k]
            if everyName || token.exotic, context.string(k) == name {
                decoder.hintMember = member + 1
                decoder.hintName = Int(tape[k + 1].next)
                return k + 1
            }
            k = Int(tape[k + 1].next)
        }
        return nil
    }

    @inline(__always)
    private func require(_ key: Key) throws -> Int {
        guard let i = find(key.stringValue) else {
            throw decoder.valueDecoding(.null).missing("A value", .key(key.stringValue))
        }
        return i
    }

    /// The member for `decodeIfPresent`: `nil` when absent or null.
    @inline(__always)
    private func present(_ key: Key) -> Int? {
        guard let i = find(key.stringValue), decoder.context.tape[i].kind != .null else { return nil }
        return i
    }

    func decodeNil(forKey key: Key) throws -> Bool { decoder.context.tape[try require(key)].kind == .null }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try decoder.bool(require(key), .key(key.stringValue))
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try decoder.string(require(key), .key(key.stringValue))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decoder.double(require(key), .key(key.stringValue))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try decoder.float(require(key), .key(key.stringValue))
    }
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
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unwrap(require(key), as: T.self, component: .key(key.stringValue))
    }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        try decoder.integer(require(key), as: T.self, .key(key.stringValue))
    }

    @inline(__always)
    private func optionalInteger<T: FixedWidthInteger>(_ key: Key) throws -> T? {
        guard let i = present(key) else { return nil }
        return try decoder.integer(i, as: T.self, .key(key.stringValue))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let i = present(key) else { return nil }
        return try decoder.bool(i, .key(key.stringValue))
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let i = present(key) else { return nil }
        return try decoder.string(i, .key(key.stringValue))
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let i = present(key) else { return nil }
        return try decoder.double(i, .key(key.stringValue))
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let i = present(key) else { return nil }
        return try decoder.float(i, .key(key.stringValue))
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optionalInteger(key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let i = present(key) else { return nil }
        return try decoder.unwrap(i, as: T.self, component: .key(key.stringValue))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try nested(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try nested(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { child(find("super"), named: "super") }

    func superDecoder(forKey key: Key) throws -> any Decoder { child(find(key.stringValue), named: key.stringValue) }

    /// A decoder for the member at `i`, or for `null` when there is none (what the Value path does).
    private func child(_ i: Int?, named name: String) -> any Decoder {
        if let i { return JSONTypedDecoding(context: decoder.context, index: i, parent: decoder, component: .key(name)) }
        return ValueDecoding(
            value: .null, parent: decoder.valueDecoding(.null), component: .key(name), options: decoder.context.options)
    }

    private func nested(_ key: Key) throws -> JSONTypedDecoding {
        JSONTypedDecoding(context: decoder.context, index: try require(key), parent: decoder, component: .key(key.stringValue))
    }
}

// MARK: - Unkeyed

private struct JSONUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: JSONTypedDecoding
    let elementCount: Int
    private(set) var currentIndex = 0
    /// The tape index of the current element.
    private var cursor: Int

    init(decoder: JSONTypedDecoding) {
        self.decoder = decoder
        elementCount = Int(decoder.context.tape[decoder.index].count)
        cursor = decoder.index + 1
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elementCount }
    var isAtEnd: Bool { currentIndex >= elementCount }

    @inline(__always)
    private func current() throws -> Int {
        guard currentIndex < elementCount else {
            throw decoder.valueDecoding(.null).missing(
                "Element \(currentIndex) (the array has \(elementCount))", .index(currentIndex))
        }
        return cursor
    }

    @inline(__always)
    private mutating func advance() {
        currentIndex += 1
        cursor = Int(decoder.context.tape[cursor].next)
    }

    mutating func decodeNil() throws -> Bool {
        guard decoder.context.tape[try current()].kind == .null else { return false }
        advance()
        return true
    }

    @inline(__always)
    private mutating func next<T>(_ body: (Int, PathComponent) throws -> T) throws -> T {
        let result = try body(current(), .index(currentIndex))
        advance()
        return result
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let decoder = decoder
        return try next { try decoder.bool($0, $1) }
    }
    mutating func decode(_ type: String.Type) throws -> String {
        let decoder = decoder
        return try next { try decoder.string($0, $1) }
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        let decoder = decoder
        return try next { try decoder.double($0, $1) }
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        let decoder = decoder
        return try next { try decoder.float($0, $1) }
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = decoder
        return try next { try decoder.unwrap($0, as: T.self, component: $1) }
    }

    private mutating func integer<T: FixedWidthInteger>() throws -> T {
        let decoder = decoder
        return try next { try decoder.integer($0, as: T.self, $1) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try nestedDecoder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nestedDecoder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try nestedDecoder() }

    private mutating func nestedDecoder() throws -> JSONTypedDecoding {
        let i = try current()
        let nested = JSONTypedDecoding(context: decoder.context, index: i, parent: decoder, component: .index(currentIndex))
        advance()
        return nested
    }
}

extension JSONCodec {
    /// The direct path of ``decode(_:from:hints:decoder:)``: the tape, then the typed decoder; `nil` when
    /// the Value path must answer (the tape scanner was not sure, or an option it does not handle).
    func decodeDirect<T: Decodable>(
        _ type: T.Type, _ buffer: UnsafeRawBufferPointer, limits: DecodingLimits, decoder: ValueDecoder
    ) throws -> T? {
        guard T.self != Value.self, buffer.count <= limits.maximumInputSize, let base = buffer.baseAddress, buffer.count > 0
        else { return nil }
        var bytes = base.assumingMemoryBound(to: UInt8.self)
        var count = buffer.count
        if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            guard options.allowsByteOrderMark else { return nil }
            bytes += 3
            count -= 3
        }
        guard let tokens = JSONTape.scan(bytes, count: count, limits: limits) else { return nil }
        let options = DecodingOptions(
            dateStrategy: decoder.dateStrategy, dataStrategy: decoder.dataStrategy, keyStrategy: decoder.keyStrategy,
            lenientNumbers: decoder.lenientNumbers, userInfo: decoder.userInfo)
        return try tokens.withUnsafeBufferPointer { tape in
            let context = JSONTypedContext(bytes: bytes, tape: tape, options: options, limits: limits)
            defer { context.drain() }
            let root = JSONTypedDecoding(context: context, index: 0, parent: nil, component: nil)
            do {
                return try root.unwrap(0, as: T.self, component: nil)
            } catch let error as CourierError {
                throw error.resolved()
            } catch let error as DecodingError {
                throw CourierError(decodingError: error)
            } catch {
                throw CourierError.wrap(error, as: .typeMismatch)
            }
        }
    }
}
