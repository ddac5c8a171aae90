#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a ``ProtobufModel`` from wire bytes for its generated `init(protobuf:)`: the members' fields one by
/// one, by slot.
///
/// It checks the input as it goes the way the codec's `Value` read does (framing, UTF-8, limits, a singular
/// field given twice, two members of a oneof); anything it does not reproduce exactly throws ``Stop``, and the
/// codec then reads the model through `Codable`, which gives the answer or the error.
public struct ProtobufModelReader {
    /// Ends a direct read; the codec then goes through `Codable`.
    public struct Stop: Error {
        @usableFromInline init() {}
    }

    let wire: ProtobufWireReader
    /// The next byte to read.
    var offset: Int
    /// Where the message (or the packed run) being read ends.
    var end: Int
    /// The plan of the message being read.
    var plan: ProtobufModelPlan
    var depth: Int
    /// The singular fields and the oneof groups met in this message, as bit masks.
    var seen: UInt64 = 0
    var oneofs: UInt64 = 0
    /// Field occurrences in this message so far (packed elements one by one).
    var occurrences = 0
    /// The field after the last one read (fields usually come in order).
    var guess = 0
    /// The type of the field whose value is next, its wire type and the slot reading it.
    var fieldType = ProtobufSchema.FieldType.int32
    var fieldWire: UInt8 = 0
    var fieldIndex = 0
    var slot = 0
    /// Whether ``nextMember()`` has reached the end of the message.
    var finished = false

    init(wire: ProtobufWireReader, plan: ProtobufModelPlan, range: Range<Int>, depth: Int) {
        self.wire = wire
        self.offset = range.lowerBound
        self.end = range.upperBound
        self.plan = plan
        self.depth = depth
    }

    /// Decodes `type` from `bytes`, or `nil` when the codec must go through `Codable`.
    static func decode<M: ProtobufModel>(
        _ type: M.Type, _ bytes: UnsafeBufferPointer<UInt8>, plan: ProtobufModelPlan, runtime: ProtobufRuntime,
        options: ProtobufCodec.Options
    ) -> M? {
        guard plan.type == ObjectIdentifier(M.self), plan.decodable else { return nil }
        let wire = ProtobufWireReader(bytes: bytes, runtime: runtime, options: options)
        wire.startBudget(plan.layout)
        var reader = ProtobufModelReader(wire: wire, plan: plan, range: 0..<bytes.count, depth: 1)
        guard let model = try? M(protobuf: &reader), reader.finished else { return nil }
        return model
    }

    // MARK: members

    /// The slot of the next member whose field the input holds, or `nil` at the end of the message. Fields no
    /// member reads are checked and skipped.
    public mutating func nextMember() throws(Stop) -> Int? {
        let fields = plan.fields
        let limits = wire.options.limits
        while offset < end {
            let (number, wireType) = try stopping { () throws(WireAnomaly) in try wire.key(&offset, end: end) }
            occurrences += 1
            guard let i = fieldIndex(number, fields) else {
                guard wire.options.unknownFields != .reject else { throw Stop() }
                try stopping { () throws(WireAnomaly) in try wire.skip(wireType, &offset, end: end) }
                continue
            }
            guess = i + 1
            let f = fields[i]
            if f.storage != .repeated {
                let bit: UInt64 = 1 << UInt64(i)
                guard seen & bit == 0 else { throw Stop() }
                seen |= bit
                if f.storage == .oneof {
                    let group = plan.oneofGroups[i]
                    guard group >= 0, group < 64, oneofs & (1 << UInt64(group)) == 0 else { throw Stop() }
                    oneofs |= 1 << UInt64(group)
                }
            }
            let expected = ProtobufWireReader.wireType(of: f.type)
            guard wireType == expected || (wireType == 2 && f.storage == .repeated && f.type.isPackable) else {
                throw Stop()
            }
            let slot = plan.slotOfField[i]
            if slot >= 0 {
                fieldType = f.type
                fieldWire = wireType
                fieldIndex = i
                self.slot = slot
                return slot
            }
            // A field no member reads: checked as the `Value` read checks it.
            try checkUnread(f, wireType)
        }
        wire.total += occurrences
        guard occurrences <= limits.maximumContainerCount, wire.total <= limits.maximumTotalValues else {
            throw Stop()
        }
        finished = true
        return nil
    }

    /// An empty slot of the type of the member `member` reads (what the generated `init(protobuf:)` reads the
    /// member into). `member` is never called: it only names the member, whose type need not be spelled.
    @inlinable
    public static func unset<Root, T>(_ member: (Root) -> T) -> T? { nil }

    /// Reads the value of the member ``nextMember()`` returned into `value`.
    @inlinable
    public mutating func read<T: ProtobufField>(_ value: inout T?) throws(Stop) {
        try T.mergeProtobuf(into: &value, from: &self)
    }

    /// A member of a type without a direct form (its model's plan never reads directly).
    public mutating func read<T>(_ value: inout T?) throws(Stop) {
        throw Stop()
    }

    /// Skips the value of the member ``nextMember()`` returned: a slot the model writes but does not read (a
    /// `let` with a value, which `Codable` encodes and does not decode), checked as the `Value` read checks it.
    public mutating func skipMember() throws(Stop) {
        try checkUnread(plan.fields[fieldIndex], fieldWire)
    }

    /// Checks and skips a value of field `f` that no member reads, as the `Value` read checks it.
    private mutating func checkUnread(_ f: HotField, _ wireType: UInt8) throws(Stop) {
        let limits = wire.options.limits
        try stopping { () throws(WireAnomaly) in
            if wireType == ProtobufWireReader.wireType(of: f.type) {
                switch f.type {
                case .string, .bytes:
                    let payload = try wire.lengthDelimited(&offset, end: end)
                    if payload.count > limits.maximumStringLength { throw WireAnomaly() }
                    if f.type == .string, !ProtobufWireReader.isUTF8(wire.bytes, payload) { throw WireAnomaly() }
                case .message:
                    let payload = try wire.lengthDelimited(&offset, end: end)
                    let sub = wire.runtime.messages[f.messageIndex]
                    wire.total += sub.fields.count
                    try wire.check(sub, payload, depth: depth + 1)
                default:
                    try wire.skip(wireType, &offset, end: end)
                }
            } else {
                let payload = try wire.lengthDelimited(&offset, end: end)
                occurrences += try wire.checkPacked(payload, f.type) - 1
            }
        }
    }

    /// The member in `slot` once the message is read: `value`, or what `Codable` sees for an absent field.
    @inlinable
    public func finish<T: ProtobufField>(_ value: consuming T?, _ slot: Int) throws(Stop) -> T {
        if let value = value.take() { return value }
        guard let absent = T.absentProtobufValue(try absence(slot)) else { throw Stop() }
        return absent
    }

    /// What `Codable` sees when the field of `slot` is absent.
    @usableFromInline
    func absence(_ slot: Int) throws(Stop) -> ProtobufAbsence {
        guard slot >= 0, slot < plan.absences.count else { throw Stop() }
        return plan.absences[slot]
    }

    /// A member of a type without a direct form (its model's plan never reads directly).
    public func finish<T>(_ value: T?, _ slot: Int) throws(Stop) -> T {
        guard let value else { throw Stop() }
        return value
    }

    // MARK: values (for the ProtobufField conformances)

    /// The current field's integer value, as `ValueDecoder` reads it (the plan allows only exact fits).
    mutating func signed() throws(Stop) -> Int64 {
        try stopping { () throws(WireAnomaly) in
            switch fieldType {
            case .int32: return Int64(Int32(truncatingIfNeeded: try wire.varint(&offset, end: end)))
            case .sint32:
                let u = UInt32(truncatingIfNeeded: try wire.varint(&offset, end: end))
                return Int64(Int32(bitPattern: (u >> 1) ^ (0 &- (u & 1))))
            case .sfixed32: return Int64(Int32(bitPattern: try wire.fixed32(&offset, end: end)))
            case .uint32: return Int64(UInt32(truncatingIfNeeded: try wire.varint(&offset, end: end)))
            case .fixed32: return Int64(try wire.fixed32(&offset, end: end))
            case .int64: return Int64(bitPattern: try wire.varint(&offset, end: end))
            case .sint64:
                let u = try wire.varint(&offset, end: end)
                return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
            case .sfixed64: return Int64(bitPattern: try wire.fixed64(&offset, end: end))
            default: throw WireAnomaly()
            }
        }
    }

    /// The current field's unsigned value (and a bool's varint).
    mutating func unsigned() throws(Stop) -> UInt64 {
        try stopping { () throws(WireAnomaly) in
            switch fieldType {
            case .uint32: return UInt64(UInt32(truncatingIfNeeded: try wire.varint(&offset, end: end)))
            case .fixed32: return UInt64(try wire.fixed32(&offset, end: end))
            case .uint64, .bool: return try wire.varint(&offset, end: end)
            case .fixed64: return try wire.fixed64(&offset, end: end)
            default: throw WireAnomaly()
            }
        }
    }

    /// The current field's floating-point value.
    mutating func floating() throws(Stop) -> Double {
        try stopping { () throws(WireAnomaly) in
            switch fieldType {
            case .double: return Double(bitPattern: try wire.fixed64(&offset, end: end))
            case .float: return Double(Float(bitPattern: try wire.fixed32(&offset, end: end)))
            default: throw WireAnomaly()
            }
        }
    }

    /// The current field's string (checked against the length limit and for UTF-8).
    mutating func string() throws(Stop) -> String {
        try stopping { () throws(WireAnomaly) in
            guard fieldType == .string else { throw WireAnomaly() }
            let payload = try wire.lengthDelimited(&offset, end: end)
            guard payload.count <= wire.options.limits.maximumStringLength, let s = wire.string(payload) else {
                throw WireAnomaly()
            }
            return s
        }
    }

    /// The current field's nested message, read by `M`'s generated code under the slot's nested plan.
    @inlinable
    mutating func message<M: ProtobufModel>(_ type: M.Type) throws(Stop) -> M {
        let parent = try enterMessage(ObjectIdentifier(M.self))
        let model = try M(protobuf: &self)
        try exitMessage(parent)
        return model
    }

    /// What a nested message's read replaces of its parent's state (``enterMessage(_:)``).
    @usableFromInline
    struct ParentState {
        var end: Int
        var plan: ProtobufModelPlan
        var seen: UInt64
        var oneofs: UInt64
        var occurrences: Int
        var guess: Int
        var slot: Int
    }

    /// Starts reading the current field's nested message (of the model type `type`) in place.
    @usableFromInline
    mutating func enterMessage(_ type: ObjectIdentifier) throws(Stop) -> ParentState {
        guard fieldType == .message, slot < plan.children.count, let child = plan.children[slot], child.type == type,
            depth + 1 <= wire.options.limits.maximumDepth
        else { throw Stop() }
        let payload = try stopping { () throws(WireAnomaly) in try wire.lengthDelimited(&offset, end: end) }
        wire.total += child.fieldCount
        let parent = ParentState(
            end: end, plan: plan, seen: seen, oneofs: oneofs, occurrences: occurrences, guess: guess, slot: slot)
        offset = payload.lowerBound
        end = payload.upperBound
        plan = child
        depth += 1
        seen = 0
        oneofs = 0
        occurrences = 0
        guess = 0
        finished = false
        return parent
    }

    /// Ends the nested message (which its model must have read to the end): back to the parent.
    @usableFromInline
    mutating func exitMessage(_ parent: ParentState) throws(Stop) {
        guard finished, offset == end else { throw Stop() }
        end = parent.end
        plan = parent.plan
        seen = parent.seen
        oneofs = parent.oneofs
        occurrences = parent.occurrences
        guess = parent.guess
        slot = parent.slot
        depth -= 1
        fieldType = .message
        fieldWire = 2
        finished = false
    }

    // MARK: packed runs

    /// Whether the current repeated field's value is a packed run of elements.
    @usableFromInline
    var isPackedRun: Bool { fieldWire == 2 && fieldType.isPackable }

    /// Starts reading the packed run (one element per read until ``isAtRunEnd``); returns the message's end
    /// for ``endPackedRun(_:)``.
    @usableFromInline
    mutating func beginPackedRun() throws(Stop) -> Int {
        let payload = try stopping { () throws(WireAnomaly) in try wire.lengthDelimited(&offset, end: end) }
        guard !payload.isEmpty else { throw Stop() }
        let outer = end
        offset = payload.lowerBound
        end = payload.upperBound
        fieldWire = ProtobufWireReader.wireType(of: fieldType)
        occurrences -= 1
        return outer
    }

    @usableFromInline
    var isAtRunEnd: Bool { offset >= end }

    /// Counts one element of a packed run (each counts against the limits as an occurrence).
    @usableFromInline
    mutating func countPackedElement() {
        occurrences += 1
    }

    /// Ends the packed run: back to the message, whose end `beginPackedRun()` returned.
    @usableFromInline
    mutating func endPackedRun(_ outer: Int) {
        end = outer
        fieldWire = 2
    }

    // MARK: support

    @inline(__always)
    private func fieldIndex(_ number: UInt32, _ fields: UnsafeMutableBufferPointer<HotField>) -> Int? {
        if guess < fields.count, fields[guess].number == number { return guess }
        if guess > 0, guess <= fields.count, fields[guess - 1].number == number { return guess - 1 }
        return plan.layout.field(number: number)
    }
}

/// Runs a wire read, turning its anomaly into ``ProtobufModelReader/Stop``.
@inline(__always)
private func stopping<R>(_ body: () throws(WireAnomaly) -> R) throws(ProtobufModelReader.Stop) -> R {
    do throws(WireAnomaly) {
        return try body()
    } catch {
        throw ProtobufModelReader.Stop()
    }
}

extension HotField {
    /// A placeholder for a reader of a message type without fields.
    static var none: HotField {
        HotField(
            number: 0, type: .int32, storage: .implicit, isMap: false, offset: 0, quantifierOffset: 0, messageIndex: -1,
            enumIndex: -1, cDefault: nil, owner: -1, index: -1)
    }
}
