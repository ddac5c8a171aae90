#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes a ``Value`` as protobuf wire bytes directly, without protobuf-c structs: the same bytes as
/// ``ProtobufEncodeBuilder`` + `protobuf_c_message_pack` (fields in number order, proto3 implicit zeros
/// skipped as protobuf-c skips them, unknown fields last). It gives up (`nil`) on anything it does not
/// reproduce exactly (any error, a field named twice, proto2 `required` fields, strings holding NUL) and
/// the caller then goes through the pivot, which gives the exact bytes or error.
struct ProtobufValueWriter {
    struct GiveUp: Error {}

    let runtime: ProtobufRuntime
    let maxDepth: Int
    let ignoreUnknownMembers: Bool
    let out: ProtobufWireOutput

    init(runtime: ProtobufRuntime, options: ProtobufCodec.Options, capacity: Int = 256) {
        self.runtime = runtime
        self.maxDepth = options.maxDepth
        self.ignoreUnknownMembers = options.ignoreUnknownMembers
        self.out = ProtobufWireOutput(capacity: capacity)
    }

    /// The wire bytes of `value` as message `layout`, or `nil` to leave it to the pivot.
    static func encode(_ value: Value, _ layout: MessageLayout, runtime: ProtobufRuntime, options: ProtobufCodec.Options)
        -> Data?
    {
        let writer = ProtobufValueWriter(runtime: runtime, options: options)
        do throws(GiveUp) {
            try writer.message(value, layout, depth: 1)
        } catch {
            return nil
        }
        return writer.out.takeData()
    }

    // MARK: primitives

    @inline(__always)
    func varint(_ value: UInt64) {
        out.varint(value)
    }

    @inline(__always)
    func key(_ number: UInt32, _ wireType: UInt8) {
        out.varint(UInt64(number) << 3 | UInt64(wireType))
    }

    @inline(__always)
    func fixed32(_ value: UInt32) {
        out.fixed(value)
    }

    @inline(__always)
    func fixed64(_ value: UInt64) {
        out.fixed(value)
    }

    /// Reserves one byte for a length written by ``patchLength(at:)``.
    @inline(__always)
    func reserveLength() -> Int {
        out.append(0)
        return out.count - 1
    }

    /// Writes the length of what follows `position` there, widening the reserved byte when needed.
    @inline(__always)
    func patchLength(at position: Int) {
        out.patchLength(at: position)
    }

    // MARK: messages

    func message(_ value: Value, _ layout: MessageLayout, depth: Int) throws(GiveUp) {
        guard depth <= maxDepth, !layout.hasRequiredFields else { throw GiveUp() }
        let start = out.count
        guard let ordered = try members(value, layout, depth: depth, start: start, segmented: false) else {
            throw GiveUp()
        }
        if ordered { return }
        out.truncate(to: start)
        _ = try members(value, layout, depth: depth, start: start, segmented: true)
    }

    /// Writes the members of `object`, an object. Unsegmented, it returns false as soon as the members are not in
    /// increasing field order (the caller then starts again segmented: each field's bytes recorded, then
    /// put in field order); nil when `object` is not an object.
    private func members(
        _ object: Value, _ layout: MessageLayout, depth: Int, start: Int, segmented: Bool
    ) throws(GiveUp) -> Bool? {
        let fields = layout.hot
        let names = layout.jsonNames
        var unknown: [UInt8] = []
        var oneofSet: [Bool] = layout.oneofNames.isEmpty ? [] : [Bool](repeating: false, count: layout.oneofNames.count)
        var segments: [(index: Int, start: Int, end: Int)] = []
        var last = -1
        var guess = 0
        // The members are read in place (borrowed from the object's storage, not copied out one by one).
        let members = try object.withObjectMembers { (keys, values) throws(GiveUp) -> Bool in
            for m in keys.indices {
                let key = keys[m]
                let index: Int
                if let found = Self.field(named: key, names, layout, guess: guess) {
                    index = found
                } else if key == ProtobufCodec.unknownFieldsKey {
                    try parseUnknown(values[m], into: &unknown)
                    continue
                } else {
                    if ignoreUnknownMembers { continue }
                    throw GiveUp()
                }
                guess = index + 1
                if case .null = values[m] { continue }
                let f = fields[index]
                if f.storage == .oneof {
                    let group = layout.fields[index].oneofIndex
                    if oneofSet[group] { throw GiveUp() }
                    oneofSet[group] = true
                }
                if segmented {
                    if segments.contains(where: { $0.index == index }) { throw GiveUp() }
                    let s = out.count
                    try field(values[m], f, layout, index, depth: depth)
                    segments.append((index, s, out.count))
                } else {
                    if index <= last { return false }
                    last = index
                    try field(values[m], f, layout, index, depth: depth)
                }
            }
            return true
        }
        guard let ordered = members else { return nil }
        if !ordered { return false }
        if segments.count > 1 {
            out.reorder(from: start, segments.sorted(by: { $0.index < $1.index }).map { ($0.start, $0.end) })
        }
        if !unknown.isEmpty { out.append(unknown) }
        return true
    }

    /// The index of the field named `key` (JSON or `.proto` name) in `layout` (`names` is its
    /// ``MessageLayout/jsonNames``), trying `guess` (the field after the last member's) first.
    @inline(__always)
    static func field(named key: String, _ names: [String], _ layout: MessageLayout, guess: Int) -> Int? {
        if guess < names.count, names[guess] == key { return guess }
        return layout.fieldsByName[key]
    }

    /// The `@unknown` member: its fields re-keyed as protobuf-c writes them.
    private func parseUnknown(_ value: Value, into unknown: inout [UInt8]) throws(GiveUp) {
        guard case .bytes(let bytes) = value else { throw GiveUp() }
        let ok = bytes.withUnsafeBufferPointer { buffer -> Bool in
            var reader = WireReader(buffer)
            do throws(WireError) {
                while !reader.isAtEnd {
                    let (number, wireType) = try reader.readWideKey()
                    let start = reader.offset
                    try reader.skip(wireType)
                    WireWriter.appendVarint(UInt64(number) << 3 | UInt64(wireType.rawValue), to: &unknown)
                    unknown.append(contentsOf: buffer[start..<reader.offset])
                }
                return true
            } catch {
                return false
            }
        }
        if !ok { throw GiveUp() }
    }

    @inline(__always)
    func field(_ value: Value, _ f: HotField, _ layout: MessageLayout, _ index: Int, depth: Int)
        throws(GiveUp)
    {
        switch f.storage {
        case .implicit:
            try single(value, f, skipZero: true, depth: depth)
        case .hasFlag, .pointer, .oneof, .required:
            try single(value, f, skipZero: false, depth: depth)
        case .repeated:
            if f.isMap {
                try map(value, f, depth: depth)
                return
            }
            guard case .array(let elements) = value else { throw GiveUp() }
            // Read in place, not copied out one by one.
            try elements.withUnsafeBufferPointer { (elements) throws(GiveUp) in
                try self.elements(elements, f, layout, index, depth: depth)
            }
        }
    }

    /// The elements of repeated (not map) field `index` of `layout`, packed when the field is.
    @inline(__always)
    func elements<C: Collection<Value>>(
        _ elements: C, _ f: HotField, _ layout: MessageLayout, _ index: Int, depth: Int
    ) throws(GiveUp) {
        if elements.isEmpty { return }
        if layout.fields[index].packed {
            key(f.number, 2)
            let position = reserveLength()
            for i in elements.indices { try payload(elements[i], f, skipZero: false, depth: depth) }
            patchLength(at: position)
        } else {
            for i in elements.indices { try single(elements[i], f, skipZero: false, depth: depth) }
        }
    }

    private func map(_ value: Value, _ f: HotField, depth: Int) throws(GiveUp) {
        guard case .object(let object) = value else { throw GiveUp() }
        if object.isEmpty { return }
        let entryLayout = runtime.messages[f.messageIndex]
        guard let keyIndex = entryLayout.field(number: 1), let valueIndex = entryLayout.field(number: 2),
            keyIndex < valueIndex, !entryLayout.hasRequiredFields
        else { throw GiveUp() }
        let keyField = entryLayout.hot[keyIndex]
        let valueField = entryLayout.hot[valueIndex]
        let values = object.values
        for (k, key) in object.keys.enumerated() {
            let keyValue: Value
            switch keyField.type {
            case .bool:
                guard key == "true" || key == "false" else { throw GiveUp() }
                keyValue = .bool(key == "true")
            default:
                keyValue = .string(key)
            }
            let element = values[k]
            if case .null = element { throw GiveUp() }
            self.key(f.number, 2)
            let position = reserveLength()
            try field(keyValue, keyField, entryLayout, keyIndex, depth: depth)
            try field(element, valueField, entryLayout, valueIndex, depth: depth)
            patchLength(at: position)
        }
    }

    /// One value with its key (nothing for a skipped implicit zero).
    @inline(__always)
    private func single(_ value: Value, _ f: HotField, skipZero: Bool, depth: Int) throws(GiveUp) {
        let wireType: UInt8
        switch f.type {
        case .fixed32, .sfixed32, .float: wireType = 5
        case .fixed64, .sfixed64, .double: wireType = 1
        case .string, .bytes, .message: wireType = 2
        default: wireType = 0
        }
        let mark = out.count
        key(f.number, wireType)
        if !(try payload(value, f, skipZero: skipZero, depth: depth)) { out.truncate(to: mark) }
    }

    /// The value's bytes without key. Returns false when `skipZero` and the value is protobuf-c's zero (nothing
    /// written).
    @discardableResult
    private func payload(_ value: Value, _ f: HotField, skipZero: Bool, depth: Int) throws(GiveUp) -> Bool {
        switch f.type {
        case .int32, .sint32, .sfixed32:
            guard let v = try? runtime.signed(value, f, min: Int64(Int32.min), max: Int64(Int32.max)) else {
                throw GiveUp()
            }
            if skipZero && v == 0 { return false }
            switch f.type {
            case .int32: varint(UInt64(bitPattern: v))
            case .sint32:
                let n = Int32(v)
                varint(UInt64(UInt32(bitPattern: (n << 1) ^ (n >> 31))))
            default: fixed32(UInt32(bitPattern: Int32(v)))
            }
        case .uint32, .fixed32:
            guard let v = try? runtime.unsigned(value, f, max: UInt64(UInt32.max)) else { throw GiveUp() }
            if skipZero && v == 0 { return false }
            if f.type == .uint32 { varint(v) } else { fixed32(UInt32(v)) }
        case .int64, .sint64, .sfixed64:
            guard let v = try? runtime.signed(value, f, min: Int64.min, max: Int64.max) else { throw GiveUp() }
            if skipZero && v == 0 { return false }
            switch f.type {
            case .int64: varint(UInt64(bitPattern: v))
            case .sint64: varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
            default: fixed64(UInt64(bitPattern: v))
            }
        case .uint64, .fixed64:
            guard let v = try? runtime.unsigned(value, f, max: UInt64.max) else { throw GiveUp() }
            if skipZero && v == 0 { return false }
            if f.type == .uint64 { varint(v) } else { fixed64(v) }
        case .double:
            guard let d = try? runtime.floating(value, f) else { throw GiveUp() }
            if skipZero && d == 0 { return false }
            fixed64(d.bitPattern)
        case .float:
            guard let d = try? runtime.floating(value, f) else { throw GiveUp() }
            if d.isFinite && abs(d) > Double(Float.greatestFiniteMagnitude) { throw GiveUp() }
            let x = Float(d)
            if skipZero && x == 0 { return false }
            fixed32(x.bitPattern)
        case .bool:
            guard case .bool(let b) = value else { throw GiveUp() }
            if skipZero && !b { return false }
            out.append(b ? 1 : 0)
        case .enumeration:
            guard let v = try? runtime.enumNumber(value, f) else { throw GiveUp() }
            if skipZero && v == 0 { return false }
            varint(UInt64(bitPattern: Int64(v)))
        case .string:
            guard case .string(let s) = value else { throw GiveUp() }
            let count = s.utf8.count
            if skipZero && count == 0 { return false }
            varint(UInt64(count))
            // Native strings (all of them on Linux) are contiguous UTF-8: no mutable copy of `s` needed.
            let clean = s.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
                if count > 0 && ProtobufEncodeBuilder.containsNUL(utf8) { return false }
                out.append(UnsafeRawBufferPointer(utf8))
                return true
            }
            if clean != true { throw GiveUp() }
        case .bytes:
            switch value {
            case .bytes(let b):
                if skipZero && b.isEmpty { return false }
                varint(UInt64(b.count))
                out.append(b)
            case .string(let text):
                guard let b = ProtobufEncodeBuilder.base64(text) else { throw GiveUp() }
                if skipZero && b.isEmpty { return false }
                varint(UInt64(b.count))
                out.append(b)
            default: throw GiveUp()
            }
        case .message:
            let position = reserveLength()
            try message(value, runtime.messages[f.messageIndex], depth: depth + 1)
            patchLength(at: position)
        }
        return true
    }
}

extension ProtobufRuntime {
    func mismatch(_ value: Value, _ f: HotField, _ expected: String) -> PathedError {
        PathedError(.typeMismatch, "expected \(expected) for \(f.type.rawValue) field \(name(f)), found \(value.kindName)")
    }

    func outOfRange(_ text: String, _ f: HotField) -> PathedError {
        PathedError(.valueOutOfRange, "\(text) is out of range for \(f.type.rawValue) field \(name(f))")
    }

    func signed(_ value: Value, _ f: HotField, min: Int64, max: Int64) throws(PathedError) -> Int64 {
        let v: Int64
        switch value {
        case .int(let i): v = i
        case .uint(let u): throw outOfRange(String(u), f)
        case .double(let d):
            guard d.isFinite, d.rounded(.towardZero) == d else { throw mismatch(value, f, "an integer") }
            guard d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else { throw outOfRange("\(d)", f) }
            v = Int64(d)
        case .number(let text), .string(let text):
            if let parsed = Int64(text) {
                v = parsed
            } else if UInt64(text) != nil {
                throw outOfRange(text, f)
            } else if let d = Double(text), d.isFinite, d.rounded(.towardZero) == d {
                guard d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else { throw outOfRange(text, f) }
                v = Int64(d)
            } else {
                throw mismatch(value, f, "an integer")
            }
        default: throw mismatch(value, f, "an integer")
        }
        guard v >= min, v <= max else { throw outOfRange(String(v), f) }
        return v
    }

    func unsigned(_ value: Value, _ f: HotField, max: UInt64) throws(PathedError) -> UInt64 {
        let v: UInt64
        switch value {
        case .int(let i):
            guard i >= 0 else { throw outOfRange(String(i), f) }
            v = UInt64(i)
        case .uint(let u): v = u
        case .double(let d):
            guard d.isFinite, d.rounded(.towardZero) == d else { throw mismatch(value, f, "an integer") }
            guard d >= 0, d < 1.8446744073709551616e19 else { throw outOfRange("\(d)", f) }
            v = UInt64(d)
        case .number(let text), .string(let text):
            if let parsed = UInt64(text) {
                v = parsed
            } else if Int64(text) != nil {
                throw outOfRange(text, f)
            } else if let d = Double(text), d.isFinite, d.rounded(.towardZero) == d {
                guard d >= 0, d < 1.8446744073709551616e19 else { throw outOfRange(text, f) }
                v = UInt64(d)
            } else {
                throw mismatch(value, f, "an integer")
            }
        default: throw mismatch(value, f, "an integer")
        }
        guard v <= max else { throw outOfRange(String(v), f) }
        return v
    }

    func floating(_ value: Value, _ f: HotField) throws(PathedError) -> Double {
        switch value {
        case .double(let d): return d
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .number(let text):
            guard let d = Double(text) else { throw mismatch(value, f, "a number") }
            return d
        case .string(let text):
            switch text {
            case "NaN": return .nan
            case "Infinity": return .infinity
            case "-Infinity": return -.infinity
            default:
                guard let d = Double(text) else { throw mismatch(value, f, "a number") }
                return d
            }
        default: throw mismatch(value, f, "a number")
        }
    }

    func enumNumber(_ value: Value, _ f: HotField) throws(PathedError) -> Int32 {
        let layout = enums[f.enumIndex]
        if case .string(let name) = value {
            if let number = layout.numberByName[name] { return number }
            if let number = Int32(name) { return number }
            throw PathedError(.valueOutOfRange, "enum \(layout.fullName) has no value named \(name) (field \(self.name(f)))")
        }
        return Int32(try signed(value, f, min: Int64(Int32.min), max: Int64(Int32.max)))
    }
}
