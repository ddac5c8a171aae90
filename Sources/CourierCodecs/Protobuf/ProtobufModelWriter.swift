#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes a ``ProtobufModel`` as wire bytes for its generated `encodeProtobufMember(_:to:)`: the members in
/// field order, each straight to the wire.
///
/// It writes the bytes the codec's `Value` writer gives the model's `Value` (fields in number order, proto3
/// zeros left out, packed runs where the field is packed); whatever it does not reproduce exactly (a string
/// holding NUL, a NaN `Float`, two members of a oneof, nesting past the limit) throws ``Stop``, and the codec
/// then writes the model through `Codable`, which gives the bytes or the error.
public struct ProtobufModelWriter {
    /// Ends a direct write; the codec then goes through `Codable`.
    public struct Stop: Error {
        @usableFromInline init() {}
    }

    let out: ProtobufWireOutput
    let maxDepth: Int
    /// The plan of the message being written.
    var plan: ProtobufModelPlan
    var depth: Int
    /// The field being written, the slot writing it, and whether it is packed.
    var field = HotField.none
    var slot = 0
    var packed = false
    /// Whether a packed run is open (its elements go without keys).
    var inRun = false

    /// Whether the member being written names no field.
    @usableFromInline
    var unmapped = false
    let ignoreUnknownMembers: Bool

    init(out: ProtobufWireOutput, plan: ProtobufModelPlan, maxDepth: Int, ignoreUnknownMembers: Bool) {
        self.out = out
        self.plan = plan
        self.maxDepth = maxDepth
        self.ignoreUnknownMembers = ignoreUnknownMembers
        self.depth = 1
    }

    /// The bytes of `model`, or `nil` when the codec must go through `Codable`.
    static func encode<M: ProtobufModel>(_ model: M, plan: ProtobufModelPlan, options: ProtobufCodec.Options) -> Data? {
        guard plan.type == ObjectIdentifier(M.self), plan.encodable else { return nil }
        var writer = ProtobufModelWriter(
            out: ProtobufWireOutput(capacity: 256), plan: plan, maxDepth: options.maxDepth,
            ignoreUnknownMembers: options.ignoreUnknownMembers)
        do throws(Stop) {
            try writer.members(of: model)
        } catch {
            return nil
        }
        return writer.out.takeData()
    }

    /// Writes the members of `model` (of the plan's type) in field order.
    private mutating func members<M: ProtobufModel>(of model: M) throws(Stop) {
        guard depth <= maxDepth, plan.type == ObjectIdentifier(M.self) else { throw Stop() }
        var oneofs: UInt64 = 0
        for write in plan.writes {
            if write.field < 0 {
                unmapped = true
                defer { unmapped = false }
                try model.encodeProtobufMember(write.slot, to: &self)
                continue
            }
            field = plan.fields[write.field]
            slot = write.slot
            packed = write.packed
            let before = out.count
            try model.encodeProtobufMember(write.slot, to: &self)
            if field.storage == .oneof, out.count != before {
                let group = plan.oneofGroups[write.field]
                guard group >= 0, group < 64, oneofs & (1 << UInt64(group)) == 0 else { throw Stop() }
                oneofs |= 1 << UInt64(group)
            }
        }
    }

    /// Writes `value` as the member's field.
    @inlinable
    public mutating func write<T: ProtobufField>(_ value: T) throws(Stop) {
        if unmapped { return try writeUnmapped(value) }
        try value.writeProtobuf(to: &self)
    }

    /// A member that names no field: `ValueEncoder` leaves it out when nil; the pivot's writer refuses any other,
    /// unless told to ignore it.
    @usableFromInline
    func writeUnmapped<T>(_ value: T) throws(Stop) {
        if ignoreUnknownMembers || (value as? any ProtobufOptionalMarker)?.isNone == true { return }
        throw Stop()
    }

    /// A member of a type without a direct form (its model's plan never writes directly).
    public mutating func write<T>(_ value: T) throws(Stop) {
        throw Stop()
    }

    // MARK: values (for the ProtobufField conformances)

    /// Whether the current field is packed (its elements go in one run).
    @usableFromInline
    var isPacked: Bool { packed && !inRun }

    /// Writes the key unless a packed run is open; false when the value is a proto3 zero left out.
    @inline(__always)
    private func key(isZero: Bool) -> Bool {
        if inRun { return true }
        if isZero && field.storage == .implicit { return false }
        out.varint(UInt64(field.number) << 3 | UInt64(ProtobufWireReader.wireType(of: field.type)))
        return true
    }

    /// Writes an integer the way the pivot's writer writes its `Value` (out of the field's range: ``Stop``).
    mutating func signed(_ v: Int64) throws(Stop) {
        switch field.type {
        case .int32, .sint32, .sfixed32: guard v >= Int64(Int32.min), v <= Int64(Int32.max) else { throw Stop() }
        case .uint32, .fixed32: guard v >= 0, v <= Int64(UInt32.max) else { throw Stop() }
        case .uint64, .fixed64: guard v >= 0 else { throw Stop() }
        case .int64, .sint64, .sfixed64: break
        default: throw Stop()
        }
        guard key(isZero: v == 0) else { return }
        switch field.type {
        case .int32, .int64, .uint32, .uint64: out.varint(UInt64(bitPattern: v))
        case .sint32:
            let n = Int32(truncatingIfNeeded: v)
            out.varint(UInt64(UInt32(bitPattern: (n << 1) ^ (n >> 31))))
        case .sint64: out.varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
        case .sfixed32, .fixed32: out.fixed(UInt32(truncatingIfNeeded: v))
        default: out.fixed(UInt64(bitPattern: v))
        }
    }

    /// Writes an unsigned integer (`ValueEncoder` gives those above `Int64.max` as `.uint`, which only 64-bit
    /// unsigned fields take).
    mutating func unsigned(_ v: UInt64) throws(Stop) {
        if v <= UInt64(Int64.max) { return try signed(Int64(v)) }
        guard field.type == .uint64 || field.type == .fixed64 else { throw Stop() }
        _ = key(isZero: false)
        if field.type == .uint64 { out.varint(v) } else { out.fixed(v) }
    }

    mutating func double(_ d: Double) throws(Stop) {
        switch field.type {
        case .double:
            guard key(isZero: d == 0) else { return }
            out.fixed(d.bitPattern)
        case .float:
            // The pivot's narrowing, which refuses finite values beyond `Float`'s range.
            guard !(d.isFinite && abs(d) > Double(Float.greatestFiniteMagnitude)), !d.isNaN else { throw Stop() }
            let x = Float(d)
            guard key(isZero: x == 0) else { return }
            out.fixed(x.bitPattern)
        default: throw Stop()
        }
    }

    mutating func float(_ f: Float) throws(Stop) {
        // The `Value` a `Float` encodes to (from its shortest decimal form), then written as `double` above.
        guard !f.isNaN else { throw Stop() }
        try double(f.isFinite ? Double(f.description) ?? Double(f) : Double(f))
    }

    mutating func bool(_ b: Bool) throws(Stop) {
        guard field.type == .bool else { throw Stop() }
        guard key(isZero: !b) else { return }
        out.append(b ? 1 : 0)
    }

    mutating func string(_ s: String) throws(Stop) {
        guard field.type == .string else { throw Stop() }
        let count = s.utf8.count
        guard key(isZero: count == 0) else { return }
        out.varint(UInt64(count))
        let clean = s.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            if count > 0 && ProtobufEncodeBuilder.containsNUL(utf8) { return false }
            out.append(UnsafeRawBufferPointer(utf8))
            return true
        }
        // protobuf-c cannot hold a NUL in a string: the pivot decides.
        if clean != true { throw Stop() }
    }

    /// Writes a nested message under the slot's nested plan.
    @usableFromInline
    mutating func message<M: ProtobufModel>(_ model: M) throws(Stop) {
        guard field.type == .message, slot < plan.children.count, let child = plan.children[slot] else { throw Stop() }
        _ = key(isZero: false)
        out.append(0)
        let position = out.count - 1
        let saved = (plan, field, slot, packed)
        plan = child
        depth += 1
        try members(of: model)
        depth -= 1
        (plan, field, slot, packed) = saved
        out.patchLength(at: position)
    }

    // MARK: packed runs

    /// Opens a packed run: its key and a reserved length. Returns where the length goes.
    @usableFromInline
    mutating func beginPackedRun() -> Int {
        out.varint(UInt64(field.number) << 3 | 2)
        out.append(0)
        inRun = true
        return out.count - 1
    }

    /// Closes the packed run opened at `position`.
    @usableFromInline
    mutating func endPackedRun(_ position: Int) {
        inRun = false
        out.patchLength(at: position)
    }
}

/// Tells a nil optional from other values of a generic type.
protocol ProtobufOptionalMarker {
    var isNone: Bool { get }
}

extension Optional: ProtobufOptionalMarker {
    var isNone: Bool { self == nil }
}
