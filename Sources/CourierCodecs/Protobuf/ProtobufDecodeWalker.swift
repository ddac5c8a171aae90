import CProtobufC

/// Walks a message unpacked by protobuf-c into a ``Value``, using the precomputed field layouts: a switch on
/// the field's type and a load at its offset, no lookups by name.
struct ProtobufDecodeWalker {
    let runtime: ProtobufRuntime
    let options: ProtobufCodec.Options
    /// The decode's arena, for the zeroed stand-ins of absent map values.
    let arena: Arena

    func message(_ base: UnsafeRawPointer, _ layout: MessageLayout) throws(PathedError) -> Value {
        let fields = layout.hot
        let names = layout.jsonNames
        var values: [Value] = []
        values.reserveCapacity(fields.count)
        // While every field is emitted the object shares the type's names array; the first omission makes
        // a names array of its own.
        var keys: [String]? = nil
        for i in fields.indices {
            let value: Value?
            do throws(PathedError) {
                value = try field(base, fields[i])
            } catch {
                var e = error
                e.reversedPath.append(.key(names[i]))
                throw e
            }
            if let value {
                values.append(value)
                keys?.append(names[i])
            } else if keys == nil {
                keys = Array(names[0..<i])
            }
        }
        let header = base.assumingMemoryBound(to: ProtobufCMessage.self)
        let unknownCount = Int(header.pointee.n_unknown_fields)
        if unknownCount > 0, let unknown = header.pointee.unknown_fields {
            // protobuf-c lets a non-minimal key for field number 0 through; the number is invalid.
            for k in 0..<unknownCount where unknown[k].tag == 0 {
                throw PathedError(.malformedInput, "field number 0 is not allowed (in \(layout.fullName))")
            }
            switch options.unknownFields {
            case .discard: break
            case .reject:
                let first = unknown[0]
                throw PathedError(
                    .malformedInput,
                    "unknown field \(first.tag) (wire type \(first.wire_type.rawValue)) in \(layout.fullName)")
            case .keep:
                var bytes: [UInt8] = []
                for k in 0..<unknownCount {
                    let u = unknown[k]
                    WireWriter.appendVarint(UInt64(u.tag) << 3 | UInt64(u.wire_type.rawValue), to: &bytes)
                    if let data = u.data { bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: u.len)) }
                }
                if keys == nil { keys = names }
                keys!.append(ProtobufCodec.unknownFieldsKey)
                values.append(.bytes(bytes))
            }
        }
        return .object(Value.Object(uniqueKeys: keys ?? names, values: values))
    }

    /// The value of one field, or nil when it is left out (absent with presence, or a default when
    /// ``ProtobufCodec/Options/includeDefaultValues`` is off).
    @inline(__always)
    private func field(_ base: UnsafeRawPointer, _ f: HotField) throws(PathedError) -> Value? {
        switch f.storage {
        case .implicit:
            let p = base + f.offset
            if f.type == .message {
                guard let sub = p.load(as: UnsafeRawPointer?.self) else { return nil }
                return try message(sub, runtime.messages[f.messageIndex])
            }
            if !options.includeDefaultValues && Self.isZero(p, f.type) { return nil }
            return try scalar(p, f)
        case .required:
            return try scalar(base + f.offset, f)
        case .hasFlag:
            guard (base + f.quantifierOffset).load(as: Int32.self) != 0 else { return nil }
            return try scalar(base + f.offset, f)
        case .pointer:
            let pointer = (base + f.offset).load(as: UnsafeRawPointer?.self)
            guard let pointer, pointer != f.cDefault else { return nil }
            return try scalar(base + f.offset, f)
        case .oneof:
            guard (base + f.quantifierOffset).load(as: UInt32.self) == f.number else { return nil }
            return try scalar(base + f.offset, f)
        case .repeated:
            let count = (base + f.quantifierOffset).load(as: Int.self)
            guard count > 0, let elements = (base + f.offset).load(as: UnsafeRawPointer?.self) else {
                guard options.includeDefaultValues else { return nil }
                return f.isMap ? .object(Value.Object()) : .array([])
            }
            if f.isMap { return try map(elements, count: count, f) }
            var array: [Value] = []
            array.reserveCapacity(count)
            let stride = f.type.cSize
            for k in 0..<count {
                do throws(PathedError) {
                    array.append(try scalar(elements + k * stride, f))
                } catch {
                    var e = error
                    e.reversedPath.append(.index(k))
                    throw e
                }
            }
            return .array(array)
        }
    }

    @inline(__always)
    static func isZero(_ p: UnsafeRawPointer, _ type: ProtobufSchema.FieldType) -> Bool {
        switch type {
        case .int32, .sint32, .sfixed32, .uint32, .fixed32, .bool, .enumeration:
            return p.load(as: UInt32.self) == 0
        case .float:
            return p.load(as: UInt32.self) == 0  // +0.0 only: -0.0 is written on the wire
        case .int64, .sint64, .sfixed64, .uint64, .fixed64, .double:
            return p.load(as: UInt64.self) == 0
        case .string:
            guard let s = p.load(as: UnsafePointer<UInt8>?.self) else { return true }
            return s[0] == 0 && Arena.blockSize(s) <= 1
        case .bytes:
            return p.load(as: ProtobufCBinaryData.self).len == 0
        case .message:
            return p.load(as: UnsafeRawPointer?.self) == nil
        }
    }

    @inline(__always)
    func scalar(_ p: UnsafeRawPointer, _ f: HotField) throws(PathedError) -> Value {
        switch f.type {
        case .int32, .sint32, .sfixed32: return .int(Int64(p.load(as: Int32.self)))
        case .uint32, .fixed32: return .int(Int64(p.load(as: UInt32.self)))
        case .int64, .sint64, .sfixed64: return .int(p.load(as: Int64.self))
        case .uint64, .fixed64:
            let u = p.load(as: UInt64.self)
            return u <= UInt64(Int64.max) ? .int(Int64(u)) : .uint(u)
        case .float: return .double(Double(p.load(as: Float.self)))
        case .double: return .double(p.load(as: Double.self))
        case .bool: return .bool(p.load(as: Int32.self) != 0)
        case .enumeration:
            let number = p.load(as: Int32.self)
            if !options.enumsAsNumbers, let name = runtime.enums[f.enumIndex].nameByNumber[number] { return name }
            return .int(Int64(number))
        case .string:
            guard let s = p.load(as: UnsafePointer<UInt8>?.self) else { return .string("") }
            if UnsafeRawPointer(s) == f.cDefault, let value = runtime.messages[f.owner].fields[f.index].defaultValue {
                return value
            }
            // protobuf-c allocated length + 1 bytes from our arena and NUL-terminated them.
            let size = Arena.blockSize(s)
            let length = size >= 1 && s[size - 1] == 0 ? size - 1 : strlenBytes(s)
            guard let string = Self.string(UnsafeBufferPointer(start: s, count: length)) else {
                throw PathedError(.invalidUTF8, "string field \(runtime.name(f)) is not valid UTF-8")
            }
            return .string(string)
        case .bytes:
            let b = p.load(as: ProtobufCBinaryData.self)
            guard b.len > 0, let data = b.data else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: data, count: b.len)))
        case .message:
            guard let sub = p.load(as: UnsafeRawPointer?.self) else {
                return try message(emptyMessage(f.messageIndex), runtime.messages[f.messageIndex])
            }
            return try message(sub, runtime.messages[f.messageIndex])
        }
    }

    /// A String from UTF-8 bytes, nil when they are not valid UTF-8: checked first (ASCII eight bytes at a
    /// time), then made by `String(decoding:)`, the specialised fast path, which then has nothing to repair.
    @inline(__always)
    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard ProtobufRawValueBuilder.isUTF8(bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func strlenBytes(_ s: UnsafePointer<UInt8>) -> Int {
        var n = 0
        while s[n] != 0 { n += 1 }
        return n
    }

    /// A zeroed struct standing for an absent message (a map value with no value on the wire).
    private func emptyMessage(_ index: Int) -> UnsafeRawPointer {
        UnsafeRawPointer(arena.allocateZeroed(runtime.messages[index].sizeofMessage)!)
    }

    private func map(_ entries: UnsafeRawPointer, count: Int, _ f: HotField) throws(PathedError) -> Value {
        let entryLayout = runtime.messages[f.messageIndex]
        guard let keyIndex = entryLayout.field(number: 1), let valueIndex = entryLayout.field(number: 2) else {
            return .object(Value.Object())
        }
        let keyField = entryLayout.hot[keyIndex]
        let valueField = entryLayout.hot[valueIndex]
        var object = Value.Object(minimumCapacity: count)
        for k in 0..<count {
            guard let entry = (entries + k * 8).load(as: UnsafeRawPointer?.self) else { continue }
            let key: String
            switch try scalar(entry + keyField.offset, keyField) {
            case .string(let s): key = s
            case .int(let i): key = String(i)
            case .uint(let u): key = String(u)
            case .bool(let b): key = b ? "true" : "false"
            default: key = ""
            }
            do throws(PathedError) {
                let value = try scalar(entry + valueField.offset, valueField)
                object.updateValue(value, forKey: key)
            } catch {
                var e = error
                e.reversedPath.append(.key(key))
                throw e
            }
        }
        return .object(object)
    }
}
