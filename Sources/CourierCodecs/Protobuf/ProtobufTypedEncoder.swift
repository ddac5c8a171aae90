#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Writes an `Encodable` model as protobuf wire bytes without the `Value` tree: keyed containers become
/// messages written straight into ``ProtobufValueWriter``'s buffer, nested structs and arrays of structs
/// recurse, and every other member (scalars, arrays of scalars, maps, `Date`, `Data`, `Value`, ...) is
/// encoded by the caller's `ValueEncoder` alone and written as that small `Value`, so its bytes are the
/// pivot's by construction. Anything else (an error, a member naming no field, a field set twice, a
/// non-default key strategy, containers used out of order) gives up, and the caller goes through the pivot.
final class ProtobufTypedEncoding {
    struct Frame {
        var layout: MessageLayout
        var start: Int
        var last: Int
        var ordered: Bool
        var segmentBase: Int
        var oneofs: UInt64
        var depth: Int
    }

    // One encode uses the state from one thread, never re-entrantly: no run-time exclusivity checks.
    let writer: ProtobufValueWriter
    let valueEncoder: ValueEncoder
    @exclusivity(unchecked) var frames: [Frame] = []
    @exclusivity(unchecked) var segments: [(index: Int, start: Int, end: Int)] = []
    @exclusivity(unchecked) var keys: [any CodingKey] = []
    @exclusivity(unchecked) var failed = false

    init(writer: ProtobufValueWriter, valueEncoder: ValueEncoder) {
        self.writer = writer
        self.valueEncoder = valueEncoder
        // Room for the usual nesting and members up front: one allocation each rather than several growths.
        frames.reserveCapacity(8)
        segments.reserveCapacity(32)
        keys.reserveCapacity(8)
    }

    /// The bytes of `model` as message `layout`, or `nil` to leave it to the pivot.
    static func encode<T: Encodable>(
        _ model: T, _ layout: MessageLayout, runtime: ProtobufRuntime, options: ProtobufCodec.Options,
        encoder: ValueEncoder
    ) -> Data? {
        guard encoder.keyStrategy == .useDefaultKeys else { return nil }
        let writer = ProtobufValueWriter(runtime: runtime, options: options, capacity: sizeHint.load(ordering: .relaxed))
        let state = ProtobufTypedEncoding(writer: writer, valueEncoder: encoder)
        do {
            try state.push(layout, depth: 1)
            try model.encode(to: ProtobufMessageEncoder(state: state, frame: 0))
            try state.pop(0)
        } catch {
            return nil
        }
        if state.failed || !state.frames.isEmpty { return nil }
        let count = state.writer.out.count
        sizeHint.store(min(max(count + count / 8 + 16, 256), 64 * 1024), ordering: .relaxed)
        return state.writer.out.takeData()
    }

    /// The output buffer's first capacity: the last encode's size with a little room, kept between 256 bytes
    /// and 64 KiB (below `malloc`'s `mmap` threshold, so a small encode after a large one stays cheap). Only
    /// a hint: a wrong one costs growth or a trimmed tail, never other bytes.
    private static let sizeHint = Atomic<Int>(256)

    func giveUp() -> ProtobufValueWriter.GiveUp {
        failed = true
        return ProtobufValueWriter.GiveUp()
    }

    func push(_ layout: MessageLayout, depth: Int) throws {
        guard depth <= writer.maxDepth, !layout.hasRequiredFields, !layout.jsonNamesCollide, layout.oneofNames.count <= 64
        else { throw giveUp() }
        frames.append(
            Frame(
                layout: layout, start: writer.out.count, last: -1, ordered: true, segmentBase: segments.count,
                oneofs: 0, depth: depth))
    }

    /// Ends the message of frame `id`: its fields put in number order.
    func pop(_ id: Int) throws {
        guard !failed, frames.count == id + 1 else { throw giveUp() }
        let frame = frames.removeLast()
        defer { segments.removeSubrange(frame.segmentBase...) }
        if frame.ordered { return }
        let mine = segments[frame.segmentBase...].sorted { $0.index < $1.index }
        for i in mine.indices.dropFirst() where mine[i].index == mine[i - 1].index { throw giveUp() }
        writer.out.reorder(from: frame.start, mine.map { ($0.start, $0.end) })
    }

    /// The index of the field named `name` in frame `id`, checked for order, duplicates and oneofs.
    @inline(__always)
    func slot(_ name: String, frame id: Int) throws -> Int {
        try field(name, frame: id).index
    }

    /// The field named `name` in frame `id` and its index, checked for order, duplicates and oneofs.
    @inline(__always)
    func field(_ name: String, frame id: Int) throws -> (index: Int, field: HotField) {
        guard !failed, frames.count == id + 1 else { throw giveUp() }
        return try frames.withUnsafeMutableBufferPointer { frames in
            let layout = frames[id].layout
            let index = try lookup(name, layout, after: frames[id].last)
            let f = layout.hot[index]
            if f.storage == .oneof {
                let bit = UInt64(1) << UInt64(layout.fields[index].oneofIndex)
                if frames[id].oneofs & bit != 0 { throw giveUp() }
                frames[id].oneofs |= bit
            }
            if index <= frames[id].last {
                frames[id].ordered = false
            } else {
                frames[id].last = index
            }
            return (index, f)
        }
    }

    /// The index of the field named `name`, trying the one after `last` first (members usually come in
    /// field order, and comparing two short strings is cheaper than hashing one).
    @inline(__always)
    func lookup(_ name: String, _ layout: MessageLayout, after last: Int) throws -> Int {
        let next = last + 1
        let names = layout.jsonNames
        if next < names.count, names[next] == name { return next }
        guard let index = layout.fieldsByName[name] else { throw giveUp() }
        return index
    }

    /// Writes one member of frame `id` given as a `Value`.
    func write(_ value: Value, _ name: String, frame id: Int) throws {
        let index = try slot(name, frame: id)
        try write(value, index, frame: id)
    }

    /// Writes `value` as field `index` of frame `id` (its slot already taken).
    private func write(_ value: Value, _ index: Int, frame id: Int) throws {
        let layout = frames[id].layout
        let start = writer.out.count
        if case .null = value {
        } else {
            do { try writer.field(value, layout.hot[index], layout, index, depth: frames[id].depth) } catch {
                throw giveUp()
            }
        }
        segments.append((index, start, writer.out.count))
    }

    /// The wire type of a singular field of type `type`.
    @inline(__always)
    static func wireType(_ type: ProtobufSchema.FieldType) -> UInt8 {
        switch type {
        case .fixed32, .sfixed32, .float: return 5
        case .fixed64, .sfixed64, .double: return 1
        case .string, .bytes, .message: return 2
        default: return 0
        }
    }

    /// Writes a signed integer member straight into its field when the field is a singular signed integer
    /// field (what the `Value` path writes for `.int(value)`); any other field takes the `Value` path.
    func writeSigned(_ value: Int64, _ name: String, frame id: Int) throws {
        let (index, f) = try field(name, frame: id)
        let fits: Bool
        switch f.type {
        case .int64, .sint64, .sfixed64: fits = true
        case .int32, .sint32, .sfixed32: fits = value >= Int64(Int32.min) && value <= Int64(Int32.max)
        default: fits = false
        }
        guard fits, f.storage != .repeated else { return try write(.int(value), index, frame: id) }
        let start = writer.out.count
        if value != 0 || f.storage != .implicit {
            writer.key(f.number, Self.wireType(f.type))
            switch f.type {
            case .int32, .int64: writer.varint(UInt64(bitPattern: value))
            case .sint32:
                let n = Int32(truncatingIfNeeded: value)
                writer.varint(UInt64(UInt32(bitPattern: (n << 1) ^ (n >> 31))))
            case .sint64: writer.varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
            case .sfixed32: writer.fixed32(UInt32(bitPattern: Int32(truncatingIfNeeded: value)))
            default: writer.fixed64(UInt64(bitPattern: value))
            }
        }
        segments.append((index, start, writer.out.count))
    }

    /// Writes a `Double` member straight into a singular `double` field; any other field takes the `Value` path.
    func writeDouble(_ value: Double, _ name: String, frame id: Int) throws {
        let (index, f) = try field(name, frame: id)
        guard f.type == .double, f.storage != .repeated else { return try write(.double(value), index, frame: id) }
        let start = writer.out.count
        if value != 0 || f.storage != .implicit {
            writer.key(f.number, 1)
            writer.fixed64(value.bitPattern)
        }
        segments.append((index, start, writer.out.count))
    }

    /// Writes a `Bool` member straight into a singular `bool` field; any other field takes the `Value` path.
    func writeBool(_ value: Bool, _ name: String, frame id: Int) throws {
        let (index, f) = try field(name, frame: id)
        guard f.type == .bool, f.storage != .repeated else { return try write(.bool(value), index, frame: id) }
        let start = writer.out.count
        if value || f.storage != .implicit {
            writer.key(f.number, 0)
            writer.out.append(value ? 1 : 0)
        }
        segments.append((index, start, writer.out.count))
    }

    /// Writes a `String` member straight into a singular `string` field; any other field takes the `Value`
    /// path. A string holding NUL gives up, as the `Value` path does.
    func writeString(_ value: String, _ name: String, frame id: Int) throws {
        let (index, f) = try field(name, frame: id)
        guard f.type == .string, f.storage != .repeated else { return try write(.string(value), index, frame: id) }
        let start = writer.out.count
        try string(value, f, skipEmpty: f.storage == .implicit)
        segments.append((index, start, writer.out.count))
    }

    /// Writes `value` with the key of string field `f` (nothing for an empty string when `skipEmpty`).
    @inline(__always)
    private func string(_ value: String, _ f: HotField, skipEmpty: Bool) throws {
        var s = value
        let clean = s.withUTF8 { utf8 -> Bool in
            if skipEmpty && utf8.isEmpty { return true }
            if !utf8.isEmpty && ProtobufEncodeBuilder.containsNUL(utf8) { return false }
            writer.key(f.number, 2)
            writer.varint(UInt64(utf8.count))
            writer.out.append(UnsafeRawBufferPointer(utf8))
            return true
        }
        if !clean { throw giveUp() }
    }

    /// Writes a `[String]` member straight into a repeated `string` field; any other field takes the
    /// `Value` path.
    private func writeStrings(_ value: [String], _ name: String, frame id: Int) throws {
        let (index, f) = try field(name, frame: id)
        guard f.type == .string, f.storage == .repeated, !f.isMap else {
            return try writeElements(value.lazy.map { .string($0) }, index, frame: id)
        }
        let start = writer.out.count
        for element in value { try string(element, f, skipEmpty: false) }
        segments.append((index, start, writer.out.count))
    }

    /// Writes one member of frame `id` given as a model.
    func write<T: Encodable>(_ value: T, _ key: any CodingKey, frame id: Int) throws {
        if T.self == [String].self {
            return try writeStrings(unsafeBitCast(value, to: [String].self), key.stringValue, frame: id)
        }
        let plain = Self.isPlainModel(T.self)
        guard plain else { return try writeSpecial(value, key.stringValue, frame: id) }
        let (index, f) = try field(key.stringValue, frame: id)
        guard f.type == .message, !f.isMap else {
            let v: Value
            do { v = try valueEncoder.encode(value) } catch { throw giveUp() }
            return try write(v, index, frame: id)
        }
        let start = writer.out.count
        keys.append(key)
        if f.storage != .repeated {
            writer.key(f.number, 2)
            let position = writer.reserveLength()
            try push(writer.runtime.messages[f.messageIndex], depth: frames[id].depth + 1)
            try value.encode(to: ProtobufMessageEncoder(state: self, frame: id + 1))
            try pop(id + 1)
            writer.patchLength(at: position)
        } else {
            try value.encode(to: ProtobufRepeatedEncoder(state: self, frame: id, field: f))
            guard !failed, frames.count == id + 1 else { throw giveUp() }
        }
        keys.removeLast()
        segments.append((index, start, writer.out.count))
    }

    /// Writes a member of one of the types `ValueEncoder` treats specially.
    private func writeSpecial<T: Encodable>(_ value: T, _ name: String, frame id: Int) throws {
        if T.self == [Int].self {
            // What `ValueEncoder` makes of these arrays, element by element, without its machinery or an array.
            try writeElements(unsafeBitCast(value, to: [Int].self).lazy.map { .int(Int64($0)) }, name, frame: id)
        } else if T.self == [Int64].self {
            try writeElements(unsafeBitCast(value, to: [Int64].self).lazy.map { .int($0) }, name, frame: id)
        } else if T.self == [Double].self {
            try writeElements(unsafeBitCast(value, to: [Double].self).lazy.map { .double($0) }, name, frame: id)
        } else if T.self == [Bool].self {
            try writeElements(unsafeBitCast(value, to: [Bool].self).lazy.map { .bool($0) }, name, frame: id)
        } else {
            let v: Value
            do { v = try valueEncoder.encode(value) } catch { throw giveUp() }
            try write(v, name, frame: id)
        }
    }

    /// Writes a member of frame `id` that `ValueEncoder` makes an array of scalars, given as its elements.
    /// Only a repeated (not map) field takes an array; for any other the pivot answers.
    private func writeElements<C: Collection<Value>>(_ elements: C, _ name: String, frame id: Int) throws {
        try writeElements(elements, try slot(name, frame: id), frame: id)
    }

    private func writeElements<C: Collection<Value>>(_ elements: C, _ index: Int, frame id: Int) throws {
        let layout = frames[id].layout
        let f = layout.hot[index]
        guard f.storage == .repeated, !f.isMap else { throw giveUp() }
        let start = writer.out.count
        do throws(ProtobufValueWriter.GiveUp) {
            try writer.elements(elements, f, layout, index, depth: frames[id].depth)
        } catch {
            throw giveUp()
        }
        segments.append((index, start, writer.out.count))
    }

    /// Whether `T` is an ordinary model (not one of the types `ValueEncoder` treats specially).
    static func isPlainModel<T>(_ type: T.Type) -> Bool {
        !(T.self == Value.self || T.self == Date.self || T.self == Data.self || T.self == URL.self
            || T.self == Decimal.self || T.self == [String].self || T.self == [Int].self || T.self == [Int64].self
            || T.self == [Double].self || T.self == [Bool].self || T.self == String.self)
    }

    var userInfo: [CodingUserInfoKey: Any] { valueEncoder.userInfo.mapValues { $0 as Any } }
}

/// The `Encoder` of one message.
struct ProtobufMessageEncoder: Encoder {
    let state: ProtobufTypedEncoding
    let frame: Int

    var codingPath: [any CodingKey] { state.keys }
    var userInfo: [CodingUserInfoKey: Any] { state.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(ProtobufKeyedEncoder<Key>(state: state, frame: frame))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        state.failed = true
        return ProtobufRepeatedEncoder(state: state, frame: -1, field: nil).unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        state.failed = true
        return ProtobufFailedSingleValue(state: state)
    }
}

struct ProtobufKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: ProtobufTypedEncoding
    let frame: Int

    var codingPath: [any CodingKey] { state.keys }

    mutating func encodeNil(forKey key: Key) throws { try state.write(.null, key.stringValue, frame: frame) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try state.writeBool(value, key.stringValue, frame: frame) }
    mutating func encode(_ value: String, forKey key: Key) throws {
        try state.writeString(value, key.stringValue, frame: frame)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try state.writeDouble(value, key.stringValue, frame: frame)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        let v: Value
        if value.isFinite, let d = Double(value.description) { v = .double(d) } else { v = .double(Double(value)) }
        try state.write(v, key.stringValue, frame: frame)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try int(Int64(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try int(Int64(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try int(Int64(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try int(Int64(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try int(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try state.write(Value(UInt64(value)), key.stringValue, frame: frame)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try int(Int64(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try int(Int64(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try int(Int64(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try state.write(Value(value), key.stringValue, frame: frame)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try state.write(value, key, frame: frame) }

    private func int(_ value: Int64, _ key: Key) throws { try state.writeSigned(value, key.stringValue, frame: frame) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        state.failed = true
        return KeyedEncodingContainer(ProtobufKeyedEncoder<NestedKey>(state: state, frame: -1))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        state.failed = true
        return ProtobufRepeatedEncoder(state: state, frame: -1, field: nil).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        state.failed = true
        return ProtobufMessageEncoder(state: state, frame: -1)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        state.failed = true
        return ProtobufMessageEncoder(state: state, frame: -1)
    }
}

/// The `Encoder` of a repeated message field: each element one message.
///
/// Three words (the state, then the frame and the count, then the field's number and message type), so that
/// the `any Encoder` and `any UnkeyedEncodingContainer` holding it need no allocation.
struct ProtobufRepeatedEncoder: Encoder, UnkeyedEncodingContainer {
    let state: ProtobufTypedEncoding
    private let frameIndex: Int32
    private var elements: Int32 = 0
    /// The field's number; 0 (no field has it) for the encoder of a request the direct write gave up on.
    private let number: UInt32
    private let messageIndex: Int32

    init(state: ProtobufTypedEncoding, frame: Int, field: HotField?) {
        self.state = state
        if let f = field, let frameIndex = Int32(exactly: frame), let messageIndex = Int32(exactly: f.messageIndex) {
            self.frameIndex = frameIndex
            self.number = f.number
            self.messageIndex = messageIndex
        } else {
            self.frameIndex = -1
            self.number = 0
            self.messageIndex = -1
        }
    }

    var frame: Int { Int(frameIndex) }
    var count: Int { Int(elements) }

    var codingPath: [any CodingKey] { state.keys }
    var userInfo: [CodingUserInfoKey: Any] { state.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        state.failed = true
        return KeyedEncodingContainer(ProtobufKeyedEncoder<Key>(state: state, frame: -1))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { self }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        state.failed = true
        return ProtobufFailedSingleValue(state: state)
    }

    private func fail() -> any Error { state.giveUp() }

    mutating func encode<T: Encodable>(_ value: T) throws {
        guard number != 0, elements < Int32.max, ProtobufTypedEncoding.isPlainModel(T.self), !state.failed,
            state.frames.count == frame + 1
        else { throw fail() }
        state.writer.key(number, 2)
        let position = state.writer.reserveLength()
        try state.push(state.writer.runtime.messages[Int(messageIndex)], depth: state.frames[frame].depth + 1)
        state.keys.append(IndexKey(intValue: count))
        try value.encode(to: ProtobufMessageEncoder(state: state, frame: frame + 1))
        state.keys.removeLast()
        try state.pop(frame + 1)
        state.writer.patchLength(at: position)
        elements += 1
    }

    mutating func encodeNil() throws { throw fail() }
    mutating func encode(_ value: Bool) throws { throw fail() }
    mutating func encode(_ value: String) throws { throw fail() }
    mutating func encode(_ value: Double) throws { throw fail() }
    mutating func encode(_ value: Float) throws { throw fail() }
    mutating func encode(_ value: Int) throws { throw fail() }
    mutating func encode(_ value: Int8) throws { throw fail() }
    mutating func encode(_ value: Int16) throws { throw fail() }
    mutating func encode(_ value: Int32) throws { throw fail() }
    mutating func encode(_ value: Int64) throws { throw fail() }
    mutating func encode(_ value: UInt) throws { throw fail() }
    mutating func encode(_ value: UInt8) throws { throw fail() }
    mutating func encode(_ value: UInt16) throws { throw fail() }
    mutating func encode(_ value: UInt32) throws { throw fail() }
    mutating func encode(_ value: UInt64) throws { throw fail() }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        state.failed = true
        return self
    }

    mutating func superEncoder() -> any Encoder {
        state.failed = true
        return self
    }
}

/// An array index as a coding key.
struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { intValue.map(String.init) ?? "" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// The container handed out where the direct write gave up: every call fails.
struct ProtobufFailedSingleValue: SingleValueEncodingContainer {
    let state: ProtobufTypedEncoding
    var codingPath: [any CodingKey] { state.keys }
    private func fail() -> any Error { state.giveUp() }
    mutating func encodeNil() throws { throw fail() }
    mutating func encode(_ value: Bool) throws { throw fail() }
    mutating func encode(_ value: String) throws { throw fail() }
    mutating func encode(_ value: Double) throws { throw fail() }
    mutating func encode(_ value: Float) throws { throw fail() }
    mutating func encode(_ value: Int) throws { throw fail() }
    mutating func encode(_ value: Int8) throws { throw fail() }
    mutating func encode(_ value: Int16) throws { throw fail() }
    mutating func encode(_ value: Int32) throws { throw fail() }
    mutating func encode(_ value: Int64) throws { throw fail() }
    mutating func encode(_ value: UInt) throws { throw fail() }
    mutating func encode(_ value: UInt8) throws { throw fail() }
    mutating func encode(_ value: UInt16) throws { throw fail() }
    mutating func encode(_ value: UInt32) throws { throw fail() }
    mutating func encode(_ value: UInt64) throws { throw fail() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw fail() }
}
