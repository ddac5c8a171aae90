#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The typed decode path: a `Decoder` that reads a model straight from the wire bytes, message by message
// (each message's fields found once, by the checking pass, then served by index), without building the
// `Value` tree.
//
// It answers only when it is sure to answer what the pivot (`ValueDecoder` over the decoded `Value`) does:
// the whole input is first checked the way the direct `Value` read checks it, any error a model lets escape
// makes the codec re-run the pivot (which then gives the exact error and path), and whatever it does not
// handle itself (a rare type, `lenientNumbers` on a string, `superDecoder()`...) sets `fallback`, which
// re-runs the pivot too. Scalars, rare types and maps are materialised as the `Value` the pivot would hold and
// handed to the caller's `ValueDecoder`, so their answers are the same by construction.

/// State shared by one typed decode.
final class ProtobufTypedContext {
    let reader: ProtobufWireReader
    let valueDecoder: ValueDecoder
    let userInfo: [CodingUserInfoKey: Any]
    /// Set when the direct path met something it leaves to the pivot.
    var fallback = false
    /// The message decoder last made for each nesting level, reused once nothing else holds it (cleared by
    /// ``directDecode(_:from:layout:options:decoder:)`` at the end, as each holds this context).
    @exclusivity(unchecked) var spares: [ProtobufMessageDecoding?] = []

    init(reader: ProtobufWireReader, valueDecoder: ValueDecoder) {
        self.reader = reader
        self.valueDecoder = valueDecoder
        var info: [CodingUserInfoKey: Any] = [:]
        for (k, v) in valueDecoder.userInfo { info[k] = v }
        self.userInfo = info
    }

    /// The decoder of the message of type `layout` in `payload`, at nesting `depth` under `parent`: the
    /// level's spare one when nothing else holds it any more (its decoding is over), else a new one.
    func messageDecoder(
        _ layout: MessageLayout, _ payload: Range<Int>, depth: Int, parent: ProtobufPathNode, component: PathComponent
    ) throws(WireAnomaly) -> ProtobufMessageDecoding {
        while spares.count <= depth { spares.append(nil) }
        // Idle deeper spares let go of their parents (deepest first), which may leave this level's idle too.
        var level = spares.count - 1
        while level > depth {
            if isKnownUniquelyReferenced(&spares[level]) { spares[level]?.parent = nil }
            level -= 1
        }
        if isKnownUniquelyReferenced(&spares[depth]), let reused = spares[depth] {
            try reader.slots(of: layout, payload, into: &reused.message.slots)
            reused.message.layout = layout
            reused.message.range = payload
            reused.parent = parent
            reused.component = component
            reused.hint = 0
            return reused
        }
        var slots: [WireSlot] = []
        try reader.slots(of: layout, payload, into: &slots)
        let made = ProtobufMessageDecoding(
            context: self, message: WireMessage(layout: layout, range: payload, slots: slots), depth: depth,
            parent: parent, component: component)
        spares[depth] = made
        return made
    }

    /// Marks the decode for the pivot and returns an error to throw.
    func giveUp(_ path: [PathComponent]) -> CourierError {
        fallback = true
        return CourierError(.typeMismatch, detail: "left to the Value pivot", context: .init(codingPath: path))
    }
}

/// A node of the coding path (parent chain).
class ProtobufPathNode {
    // Changed only when a spare message decoder is reused (see `ProtobufTypedContext.messageDecoder`).
    @exclusivity(unchecked) var parent: ProtobufPathNode?
    @exclusivity(unchecked) var component: PathComponent?

    init(parent: ProtobufPathNode?, component: PathComponent?) {
        self.parent = parent
        self.component = component
    }

    var path: [PathComponent] {
        var result: [PathComponent] = []
        var node: ProtobufPathNode? = self
        while let n = node {
            if let c = n.component { result.append(c) }
            node = n.parent
        }
        return result.reversed()
    }

    func path(_ extra: PathComponent?) -> [PathComponent] {
        var p = path
        if let extra { p.append(extra) }
        return p
    }

    func mismatch(_ extra: PathComponent?) -> CourierError {
        CourierError(.typeMismatch, detail: "type mismatch", context: .init(codingPath: path(extra)))
    }

    func outOfRange(_ extra: PathComponent?) -> CourierError {
        CourierError(.valueOutOfRange, detail: "value out of range", context: .init(codingPath: path(extra)))
    }

    func missing(_ extra: PathComponent?) -> CourierError {
        CourierError(.missingValue, detail: "missing value", context: .init(codingPath: path(extra)))
    }
}

/// The types `ValueDecoder` reads specially from any value, by identity (looked up once).
private let protobufSpecialTypes: [ObjectIdentifier] = [
    ObjectIdentifier(Value.self), ObjectIdentifier(Date.self), ObjectIdentifier(Data.self),
    ObjectIdentifier(URL.self), ObjectIdentifier(Decimal.self),
]
/// `[String]`, by identity (its metadata is generic: looking it up on every call costs).
let protobufStringArrayType = ObjectIdentifier([String].self)

/// Whether `T` is one of the types `ValueDecoder` reads specially from any value.
@inline(__always)
func protobufIsSpecial<T>(_ type: T.Type) -> Bool {
    protobufSpecialTypes.contains(ObjectIdentifier(T.self))
}

/// The scalar conversions of `ValueDecoding`, for the value kinds protobuf produces.
struct ProtobufScalars {
    let node: ProtobufPathNode
    let context: ProtobufTypedContext

    @inline(__always)
    func bool(_ value: Value, _ extra: PathComponent?) throws -> Bool {
        guard case .bool(let b) = value else { throw node.mismatch(extra) }
        return b
    }

    @inline(__always)
    func string(_ value: Value, _ extra: PathComponent?) throws -> String {
        guard case .string(let s) = value else { throw node.mismatch(extra) }
        return s
    }

    @inline(__always)
    func integer<T: FixedWidthInteger>(_ value: Value, _ extra: PathComponent?) throws -> T {
        switch value {
        case .int(let i):
            if let v = T(exactly: i) { return v }
        case .uint(let u):
            if let v = T(exactly: u) { return v }
        case .double(let d):
            guard d.isFinite, d.rounded(.towardZero) == d else { throw node.mismatch(extra) }
            if let v = T(exactly: d) { return v }
        case .string where context.valueDecoder.lenientNumbers:
            throw context.giveUp(node.path(extra))
        default:
            throw node.mismatch(extra)
        }
        throw node.outOfRange(extra)
    }

    @inline(__always)
    func double(_ value: Value, _ extra: PathComponent?) throws -> Double {
        switch value {
        case .double(let d): return d
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .string where context.valueDecoder.lenientNumbers: throw context.giveUp(node.path(extra))
        default: throw node.mismatch(extra)
        }
    }

    @inline(__always)
    func float(_ value: Value, _ extra: PathComponent?) throws -> Float {
        let d = try double(value, extra)
        let f = Float(d)
        guard f.isFinite || !d.isFinite else { throw node.outOfRange(extra) }
        return f
    }

    /// Decodes a rare type or a non-message value through the caller's `ValueDecoder`.
    func delegate<T: Decodable>(_ type: T.Type, _ value: Value, _ extra: PathComponent?) throws -> T {
        do {
            return try context.valueDecoder.decode(T.self, from: value)
        } catch var error as CourierError {
            error.context.codingPath = node.path(extra) + error.context.codingPath
            throw error
        }
    }
}

// MARK: - Message

/// The decoder of one message (a `Value` object in the pivot).
final class ProtobufMessageDecoding: ProtobufPathNode, Decoder, SingleValueDecodingContainer {
    let context: ProtobufTypedContext
    /// The message (replaced when this decoder is reused as a spare).
    @exclusivity(unchecked) var message: WireMessage
    /// The nesting level (1 for the root).
    let depth: Int
    /// Where the next keyed lookup probably is (only this decoder's containers touch it, one call at a time).
    @exclusivity(unchecked) var hint = 0

    init(
        context: ProtobufTypedContext, message: WireMessage, depth: Int, parent: ProtobufPathNode?,
        component: PathComponent?
    ) {
        self.context = context
        self.message = message
        self.depth = depth
        super.init(parent: parent, component: component)
    }

    var codingPath: [any CodingKey] { path.map { ValueCodingKey($0) } }
    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }
    var scalars: ProtobufScalars { ProtobufScalars(node: self, context: context) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let layout = message.layout
        if layout.jsonNamesCollide
            || (context.valueDecoder.keyStrategy == .convertFromSnakeCase && layout.jsonNamesHaveUnderscores)
        {
            throw context.giveUp(path)
        }
        return KeyedDecodingContainer(ProtobufKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw mismatch(nil) }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// This message as the pivot's `Value`.
    func materialise() throws -> Value {
        do throws(WireAnomaly) {
            return try context.reader.value(of: message, depth: 1)
        } catch {
            throw context.giveUp(path)
        }
    }

    /// Decodes `T` from this message (`ValueDecoding.unwrap`).
    func unwrap<T: Decodable>(_ type: T.Type) throws -> T {
        if protobufIsSpecial(T.self) { return try scalars.delegate(T.self, materialise(), nil) }
        return try T(from: self)
    }

    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool { throw mismatch(nil) }
    func decode(_ type: String.Type) throws -> String { throw mismatch(nil) }
    func decode(_ type: Double.Type) throws -> Double { throw mismatch(nil) }
    func decode(_ type: Float.Type) throws -> Float { throw mismatch(nil) }
    func decode(_ type: Int.Type) throws -> Int { throw mismatch(nil) }
    func decode(_ type: Int8.Type) throws -> Int8 { throw mismatch(nil) }
    func decode(_ type: Int16.Type) throws -> Int16 { throw mismatch(nil) }
    func decode(_ type: Int32.Type) throws -> Int32 { throw mismatch(nil) }
    func decode(_ type: Int64.Type) throws -> Int64 { throw mismatch(nil) }
    func decode(_ type: UInt.Type) throws -> UInt { throw mismatch(nil) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { throw mismatch(nil) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { throw mismatch(nil) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { throw mismatch(nil) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { throw mismatch(nil) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(T.self) }

    // MARK: fields

    /// What field `i` holds, as the pivot sees it.
    enum Member {
        case scalar(Value)
        case message(ProtobufMessageDecoding)
        case messages
        case other
    }

    /// Field `i` (emitted) when it holds a scalar: its value as the pivot holds it; nil for messages and
    /// repeated fields.
    @inline(__always)
    func scalarMember(_ i: Int) throws -> Value? {
        let f = message.layout.hot[i]
        guard f.storage != .repeated, f.type != .message else { return nil }
        let slot = message.slots[i]
        let reader = context.reader
        if slot.count == 0 { return reader.defaultValue(f) }
        do throws(WireAnomaly) {
            var offset = slot.valueStart
            return try reader.scalar(&offset, f, end: message.range.upperBound, depth: 1)
        } catch {
            throw context.giveUp(path)
        }
    }

    /// Field `i` (emitted) when it is a singular string field: its string, read without a `Value` around it
    /// (the pivot holds it as `.string`, absent as `""`); nil for any other field.
    @inline(__always)
    func stringMember(_ i: Int) throws -> String? {
        let f = message.layout.hot[i]
        guard f.type == .string, f.storage != .repeated else { return nil }
        let slot = message.slots[i]
        if slot.count == 0 { return "" }
        let reader = context.reader
        do throws(WireAnomaly) {
            var offset = slot.valueStart
            let payload = try reader.lengthDelimited(&offset, end: message.range.upperBound)
            guard let s = reader.string(payload) else { throw WireAnomaly() }
            return s
        } catch {
            throw context.giveUp(path)
        }
    }

    func member(_ i: Int) throws -> Member {
        let f = message.layout.hot[i]
        let reader = context.reader
        do throws(WireAnomaly) {
            if f.storage == .repeated {
                return f.type == .message && !f.isMap ? .messages : .other
            }
            if f.type == .message {
                var offset = message.slots[i].valueStart
                let payload = try reader.lengthDelimited(&offset, end: message.range.upperBound)
                return .message(
                    try context.messageDecoder(
                        reader.runtime.messages[f.messageIndex], payload, depth: depth + 1, parent: self,
                        component: .key(message.layout.jsonNames[i])))
            }
            guard let value = try reader.fieldValue(message, i, depth: 1) else { throw WireAnomaly() }
            return .scalar(value)
        } catch {
            throw context.giveUp(path)
        }
    }

    /// Field `i` as the pivot's `Value`.
    func fieldValue(_ i: Int) throws -> Value {
        do throws(WireAnomaly) {
            guard let value = try context.reader.fieldValue(message, i, depth: 1) else { throw WireAnomaly() }
            return value
        } catch {
            throw context.giveUp(path)
        }
    }

    /// The emitted field named `name`, if any.
    @inline(__always)
    func find(_ name: String) -> Int? {
        let layout = message.layout
        let i: Int
        if hint < layout.jsonNames.count, Self.equal(layout.jsonNames[hint], name) {
            i = hint
        } else if let found = layout.jsonIndex[name] {
            i = found
        } else {
            return nil
        }
        // Trivial values only across the call: no reference counting.
        let f = layout.hot[i]
        let slot = message.slots[i]
        let end = message.range.upperBound
        guard (try? context.reader.isEmitted(f, slot, end: end)) == true else { return nil }
        hint = i + 1
        return i
    }

    /// `a == b`, first by their bits: equal bits are equal strings, and the short names of a schema and of
    /// `CodingKeys` are both inline strings (equal exactly when their bits are).
    @inline(__always)
    static func equal(_ a: String, _ b: String) -> Bool {
        unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self) || a == b
    }

    /// Decodes `T` from field `i`.
    func decodeField<T: Decodable>(_ type: T.Type, _ i: Int) throws -> T {
        let name = message.layout.jsonNames[i]
        if protobufIsSpecial(T.self) { return try scalars.delegate(T.self, fieldValue(i), .key(name)) }
        switch try member(i) {
        case .message(let sub):
            return try sub.unwrap(T.self)
        case .messages:
            return try ProtobufMessagesDecoding(context: context, owner: self, field: i).unwrap(T.self)
        case .scalar(let value):
            return try scalars.delegate(T.self, value, .key(name))
        case .other:
            if ObjectIdentifier(T.self) == protobufStringArrayType, let strings = repeatedStrings(i) {
                return unsafeBitCast(strings, to: T.self)
            }
            return try scalars.delegate(T.self, fieldValue(i), .key(name))
        }
    }

    /// A repeated string field read straight into `[String]` (what `ValueDecoder` makes of its array).
    private func repeatedStrings(_ i: Int) -> [String]? {
        let f = message.layout.hot[i]
        guard f.type == .string, f.storage == .repeated else { return nil }
        let reader = context.reader
        var strings: [String] = []
        strings.reserveCapacity(message.slots[i].count)
        let end = message.range.upperBound
        do throws(WireAnomaly) {
            try reader.forEachOccurrence(message, i) { (start, _) throws(WireAnomaly) in
                var offset = start
                let payload = try reader.lengthDelimited(&offset, end: end)
                guard let s = reader.string(payload) else { throw WireAnomaly() }
                strings.append(s)
            }
        } catch {
            return nil
        }
        return strings
    }
}

// MARK: - Keyed

struct ProtobufKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ProtobufMessageDecoding

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] {
        let names = decoder.message.layout.jsonNames
        return names.indices.compactMap { i in
            (try? decoder.context.reader.isEmitted(decoder.message, i)) == true ? Key(stringValue: names[i]) : nil
        }
    }

    func contains(_ key: Key) -> Bool { decoder.find(key.stringValue) != nil }

    @inline(__always)
    private func require(_ key: Key) throws -> Int {
        guard let i = decoder.find(key.stringValue) else { throw decoder.missing(.key(key.stringValue)) }
        return i
    }

    @inline(__always)
    private func scalar(_ key: Key) throws -> Value {
        let i = try require(key)
        if let value = try decoder.scalarMember(i) { return value }
        throw decoder.mismatch(.key(key.stringValue))
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        _ = try require(key)
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try decoder.scalars.bool(scalar(key), .key(key.stringValue))
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let i = try require(key)
        if let s = try decoder.stringMember(i) { return s }
        guard let value = try decoder.scalarMember(i) else { throw decoder.mismatch(.key(key.stringValue)) }
        return try decoder.scalars.string(value, .key(key.stringValue))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decoder.scalars.double(scalar(key), .key(key.stringValue))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try decoder.scalars.float(scalar(key), .key(key.stringValue))
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
        try decoder.decodeField(T.self, require(key))
    }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        try decoder.scalars.integer(scalar(key), .key(key.stringValue))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        contains(key) ? try decode(type, forKey: key) : nil
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        contains(key) ? try decode(type, forKey: key) : nil
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        contains(key) ? try decode(type, forKey: key) : nil
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        contains(key) ? try decode(type, forKey: key) : nil
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
        guard let i = decoder.find(key.stringValue) else { return nil }
        return try decoder.decodeField(T.self, i)
    }

    @inline(__always)
    private func optionalInteger<T: FixedWidthInteger>(_ key: Key) throws -> T? {
        guard decoder.find(key.stringValue) != nil else { return nil }
        return try integer(key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let i = try require(key)
        switch try decoder.member(i) {
        case .message(let sub):
            return try sub.container(keyedBy: type)
        case .messages: throw decoder.mismatch(.key(key.stringValue))
        case .scalar: throw decoder.mismatch(.key(key.stringValue))
        case .other: throw decoder.context.giveUp(decoder.path(.key(key.stringValue)))
        }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let i = try require(key)
        switch try decoder.member(i) {
        case .messages:
            return try ProtobufMessagesDecoding(context: decoder.context, owner: decoder, field: i).unkeyedContainer()
        case .message: throw decoder.mismatch(.key(key.stringValue))
        case .scalar(let value):
            if case .bytes = value { throw decoder.context.giveUp(decoder.path(.key(key.stringValue))) }
            throw decoder.mismatch(.key(key.stringValue))
        case .other: throw decoder.context.giveUp(decoder.path(.key(key.stringValue)))
        }
    }

    func superDecoder() throws -> any Decoder { throw decoder.context.giveUp(decoder.path) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        if let i = decoder.find(key.stringValue) {
            switch try decoder.member(i) {
            case .message(let sub):
                return sub
            case .messages:
                return ProtobufMessagesDecoding(context: decoder.context, owner: decoder, field: i)
            default: break
            }
        }
        throw decoder.context.giveUp(decoder.path(.key(key.stringValue)))
    }
}

// MARK: - Repeated messages

/// The decoder of a repeated message field (a `Value` array of objects in the pivot).
final class ProtobufMessagesDecoding: ProtobufPathNode, Decoder, SingleValueDecodingContainer {
    let context: ProtobufTypedContext
    let owner: ProtobufMessageDecoding
    let field: Int

    init(context: ProtobufTypedContext, owner: ProtobufMessageDecoding, field: Int) {
        self.context = context
        self.owner = owner
        self.field = field
        super.init(parent: owner, component: .key(owner.message.layout.jsonNames[field]))
    }

    var codingPath: [any CodingKey] { path.map { ValueCodingKey($0) } }
    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw mismatch(nil)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        var ranges: [Range<Int>] = []
        let reader = context.reader
        let message = owner.message
        let end = message.range.upperBound
        ranges.reserveCapacity(message.slots[field].count)
        do throws(WireAnomaly) {
            try reader.forEachOccurrence(message, field) { (start, _) throws(WireAnomaly) in
                var offset = start
                ranges.append(try reader.lengthDelimited(&offset, end: end))
            }
        } catch {
            throw context.giveUp(path)
        }
        let layout = reader.runtime.messages[message.layout.hot[field].messageIndex]
        return ProtobufMessagesContainer(decoder: self, layout: layout, ranges: ranges)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func unwrap<T: Decodable>(_ type: T.Type) throws -> T {
        if protobufIsSpecial(T.self) {
            return try ProtobufScalars(node: owner, context: context).delegate(
                T.self, owner.fieldValue(field), component)
        }
        return try T(from: self)
    }

    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool { throw mismatch(nil) }
    func decode(_ type: String.Type) throws -> String { throw mismatch(nil) }
    func decode(_ type: Double.Type) throws -> Double { throw mismatch(nil) }
    func decode(_ type: Float.Type) throws -> Float { throw mismatch(nil) }
    func decode(_ type: Int.Type) throws -> Int { throw mismatch(nil) }
    func decode(_ type: Int8.Type) throws -> Int8 { throw mismatch(nil) }
    func decode(_ type: Int16.Type) throws -> Int16 { throw mismatch(nil) }
    func decode(_ type: Int32.Type) throws -> Int32 { throw mismatch(nil) }
    func decode(_ type: Int64.Type) throws -> Int64 { throw mismatch(nil) }
    func decode(_ type: UInt.Type) throws -> UInt { throw mismatch(nil) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { throw mismatch(nil) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { throw mismatch(nil) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { throw mismatch(nil) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { throw mismatch(nil) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(T.self) }
}

/// The unkeyed container over the elements of a repeated message field.
struct ProtobufMessagesContainer: UnkeyedDecodingContainer {
    let decoder: ProtobufMessagesDecoding
    let layout: MessageLayout
    let ranges: [Range<Int>]
    private(set) var currentIndex = 0

    init(decoder: ProtobufMessagesDecoding, layout: MessageLayout, ranges: [Range<Int>]) {
        self.decoder = decoder
        self.layout = layout
        self.ranges = ranges
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { ranges.count }
    var isAtEnd: Bool { currentIndex >= ranges.count }

    private func element() throws -> ProtobufMessageDecoding {
        guard currentIndex < ranges.count else { throw decoder.missing(.index(currentIndex)) }
        do throws(WireAnomaly) {
            return try decoder.context.messageDecoder(
                layout, ranges[currentIndex], depth: decoder.owner.depth + 1, parent: decoder,
                component: .index(currentIndex))
        } catch {
            throw decoder.context.giveUp(decoder.path(.index(currentIndex)))
        }
    }

    private func mismatch() throws -> Never {
        guard currentIndex < ranges.count else { throw decoder.missing(.index(currentIndex)) }
        throw decoder.mismatch(.index(currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < ranges.count else { throw decoder.missing(.index(currentIndex)) }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try mismatch() }
    mutating func decode(_ type: String.Type) throws -> String { try mismatch() }
    mutating func decode(_ type: Double.Type) throws -> Double { try mismatch() }
    mutating func decode(_ type: Float.Type) throws -> Float { try mismatch() }
    mutating func decode(_ type: Int.Type) throws -> Int { try mismatch() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try mismatch() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try mismatch() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try mismatch() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try mismatch() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try mismatch() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try mismatch() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try mismatch() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try mismatch() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try mismatch() }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let result = try element().unwrap(T.self)
        currentIndex += 1
        return result
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

    private mutating func nestedDecoder() throws -> ProtobufMessageDecoding {
        let nested = try element()
        currentIndex += 1
        return nested
    }
}

// MARK: - Entry point

extension ProtobufCodec {
    /// The typed decode: checks the bytes and the limits as the `Value` path does, then reads `T` straight
    /// from them; nil when the `Value` pivot must answer.
    func directDecode<T: Decodable>(
        _ type: T.Type, from data: Data, layout: MessageLayout, options: Options, decoder: ValueDecoder
    ) -> T? {
        let runtime = schema.runtime
        let limits = options.limits
        guard data.count <= limits.maximumInputSize else { return nil }
        return data.withUnsafeBytes { raw -> T? in
            let bytes = raw.bindMemory(to: UInt8.self)
            // One checking pass (framing, UTF-8, limits) over the whole tree, which records each message's
            // slots; then the reads need not count, nor index the messages again.
            let reader = ProtobufWireReader(bytes: bytes, runtime: runtime, options: options)
            reader.startBudget(layout)
            reader.startRecording()
            guard (try? reader.check(layout, 0..<bytes.count, depth: 1)) != nil else { return nil }
            reader.counting = false
            reader.checked = true
            var slots: [WireSlot] = []
            guard (try? reader.slots(of: layout, 0..<bytes.count, into: &slots)) != nil else { return nil }
            let root = WireMessage(layout: layout, range: 0..<bytes.count, slots: slots)
            let context = ProtobufTypedContext(reader: reader, valueDecoder: decoder)
            let top = ProtobufMessageDecoding(context: context, message: root, depth: 1, parent: nil, component: nil)
            defer { context.spares.removeAll() }
            guard let result = try? top.unwrap(T.self), !context.fallback else { return nil }
            return result
        }
    }
}
