#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CProtobufC

/// Builds protobuf-c message structs from a ``Value`` in an arena, ready for `protobuf_c_message_pack`.
///
/// protobuf-c writes strings with `strlen`, so a string holding a NUL character cannot go through the struct:
/// such a field is written as an unknown field with the same number instead, which is the same on the wire.
struct ProtobufEncodeBuilder {
    let runtime: ProtobufRuntime
    let options: ProtobufCodec.Options
    let arena: Arena

    private struct UnknownEntry {
        var tag: UInt32
        var wireType: UInt8
        var bytes: [UInt8]  // what follows the key (the length prefix included for length-delimited values)
    }

    private static let descriptorOffset = MemoryLayout<ProtobufCMessage>.offset(of: \.descriptor)!
    private static let unknownCountOffset = MemoryLayout<ProtobufCMessage>.offset(of: \.n_unknown_fields)!
    private static let unknownFieldsOffset = MemoryLayout<ProtobufCMessage>.offset(of: \.unknown_fields)!

    private func allocate(_ size: Int) throws(PathedError) -> UnsafeMutableRawPointer {
        guard let p = arena.allocateZeroed(size) else {
            throw PathedError(.sizeLimitExceeded, "out of memory while encoding")
        }
        return p
    }

    mutating func message(_ value: Value, _ layout: MessageLayout, depth: Int) throws(PathedError)
        -> UnsafeMutableRawPointer
    {
        guard depth <= options.maxDepth else {
            throw PathedError(.depthLimitExceeded, "messages nest deeper than \(options.maxDepth) levels")
        }
        guard case .object(let object) = value else {
            throw PathedError(.typeMismatch, "expected an object for message \(layout.fullName), found \(value.kindName)")
        }
        let base = try allocate(layout.sizeofMessage)
        (base + Self.descriptorOffset).storeBytes(of: UnsafeRawPointer(layout.descriptor), as: UnsafeRawPointer.self)
        var unknown: [UnknownEntry] = []
        var seenRequired: [Bool] = layout.hasRequiredFields ? [Bool](repeating: false, count: layout.fields.count) : []
        let fields = layout.hot
        let names = layout.jsonNames
        let keys = object.keys
        let values = object.values
        var guess = 0
        for m in keys.indices {
            let key = keys[m]
            let member = values[m]
            let index: Int
            if guess < names.count, names[guess] == key {
                index = guess
            } else if let found = layout.fieldsByName[key] {
                index = found
            } else if key == ProtobufCodec.unknownFieldsKey {
                do throws(PathedError) {
                    try parseUnknown(member, into: &unknown)
                } catch {
                    var e = error
                    e.reversedPath.append(.key(key))
                    throw e
                }
                continue
            } else {
                if options.ignoreUnknownMembers { continue }
                var e = PathedError(.encodingFailed, "message \(layout.fullName) has no field named \"\(key)\"")
                e.reversedPath.append(.key(key))
                throw e
            }
            guess = index + 1
            if case .null = member { continue }
            do throws(PathedError) {
                try set(fields[index], member, in: base, unknown: &unknown, depth: depth)
            } catch {
                var e = error
                e.reversedPath.append(.key(key))
                throw e
            }
            if !seenRequired.isEmpty { seenRequired[index] = true }
        }
        if !seenRequired.isEmpty {
            for (i, f) in layout.fields.enumerated() where f.storage == .required && !seenRequired[i] && f.cDefault == nil {
                throw PathedError(.missingValue, "required field \(f.name) of \(layout.fullName) is missing")
            }
        }
        if !unknown.isEmpty { try attachUnknown(unknown, to: base) }
        return base
    }

    private func attachUnknown(_ unknown: [UnknownEntry], to base: UnsafeMutableRawPointer) throws(PathedError) {
        let array = try allocate(MemoryLayout<ProtobufCMessageUnknownField>.stride * unknown.count)
            .bindMemory(to: ProtobufCMessageUnknownField.self, capacity: unknown.count)
        for (i, entry) in unknown.enumerated() {
            let data = try allocate(entry.bytes.count)
            entry.bytes.withUnsafeBytes { data.copyMemory(from: $0.baseAddress!, byteCount: entry.bytes.count) }
            array[i] = ProtobufCMessageUnknownField(
                tag: entry.tag, wire_type: ProtobufCWireType(rawValue: UInt32(entry.wireType)), len: entry.bytes.count,
                data: data.assumingMemoryBound(to: UInt8.self))
        }
        (base + Self.unknownCountOffset).storeBytes(of: UInt32(unknown.count), as: UInt32.self)
        (base + Self.unknownFieldsOffset).storeBytes(
            of: UnsafeMutablePointer(array), as: UnsafeMutablePointer<ProtobufCMessageUnknownField>.self)
    }

    private func parseUnknown(_ value: Value, into unknown: inout [UnknownEntry]) throws(PathedError) {
        guard case .bytes(let bytes) = value else {
            throw PathedError(.typeMismatch, "\(ProtobufCodec.unknownFieldsKey) must hold bytes, found \(value.kindName)")
        }
        let failure: WireError? = bytes.withUnsafeBufferPointer { buffer -> WireError? in
            var reader = WireReader(buffer)
            do throws(WireError) {
                while !reader.isAtEnd {
                    let (number, wireType) = try reader.readWideKey()
                    let start = reader.offset
                    try reader.skip(wireType)
                    unknown.append(UnknownEntry(tag: number, wireType: wireType.rawValue, bytes: Array(buffer[start..<reader.offset])))
                }
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            throw PathedError(
                .typeMismatch, "\(ProtobufCodec.unknownFieldsKey) is not valid wire data: \(failure.message) at offset \(failure.offset)")
        }
    }

    private mutating func set(
        _ f: HotField, _ value: Value, in base: UnsafeMutableRawPointer, unknown: inout [UnknownEntry], depth: Int
    ) throws(PathedError) {
        switch f.storage {
        case .implicit, .required, .pointer:
            if !(try store(value, f, at: base + f.offset, depth: depth)) { divert(value, f, &unknown) }
        case .hasFlag:
            _ = try store(value, f, at: base + f.offset, depth: depth)
            (base + f.quantifierOffset).storeBytes(of: 1, as: Int32.self)
        case .oneof:
            let current = (base + f.quantifierOffset).load(as: UInt32.self)
            if current != 0 && current != f.number {
                throw PathedError(.encodingFailed, "more than one member of a oneof is set (\(runtime.name(f)) and field \(current))")
            }
            if try store(value, f, at: base + f.offset, depth: depth) {
                (base + f.quantifierOffset).storeBytes(of: f.number, as: UInt32.self)
            } else {
                divert(value, f, &unknown)
            }
        case .repeated:
            if f.isMap {
                try setMap(f, value, in: base, depth: depth)
                return
            }
            guard case .array(let elements) = value else {
                throw PathedError(.typeMismatch, "expected an array for repeated field \(runtime.name(f)), found \(value.kindName)")
            }
            if elements.isEmpty { return }
            let stride = f.type.cSize
            let array = try allocate(stride * elements.count)
            for (k, element) in elements.enumerated() {
                do throws(PathedError) {
                    if !(try store(element, f, at: array + k * stride, depth: depth)) {
                        // A string with NUL: the whole field goes out as unknown fields, in order.
                        for e in elements { divert(e, f, &unknown) }
                        return
                    }
                } catch {
                    var e = error
                    e.reversedPath.append(.index(k))
                    throw e
                }
            }
            (base + f.quantifierOffset).storeBytes(of: elements.count, as: Int.self)
            (base + f.offset).storeBytes(of: array, as: UnsafeMutableRawPointer.self)
        }
    }

    /// Writes a string field as an unknown field (its text holds NUL, which protobuf-c's `strlen` would cut).
    private func divert(_ value: Value, _ f: HotField, _ unknown: inout [UnknownEntry]) {
        guard case .string(let s) = value else { return }
        var bytes: [UInt8] = []
        WireWriter.appendVarint(UInt64(s.utf8.count), to: &bytes)
        bytes.append(contentsOf: s.utf8)
        unknown.append(UnknownEntry(tag: f.number, wireType: WireType.lengthDelimited.rawValue, bytes: bytes))
    }

    private mutating func setMap(_ f: HotField, _ value: Value, in base: UnsafeMutableRawPointer, depth: Int)
        throws(PathedError)
    {
        guard case .object(let object) = value else {
            throw PathedError(.typeMismatch, "expected an object for map field \(runtime.name(f)), found \(value.kindName)")
        }
        if object.isEmpty { return }
        let entryLayout = runtime.messages[f.messageIndex]
        guard let keyIndex = entryLayout.field(number: 1), let valueIndex = entryLayout.field(number: 2) else {
            throw PathedError(.encodingFailed, "map entry \(entryLayout.fullName) lacks a key or value field")
        }
        let keyField = entryLayout.hot[keyIndex]
        let valueField = entryLayout.hot[valueIndex]
        let entries = try allocate(8 * object.count)
        for (k, key) in object.keys.enumerated() {
            let entry = try allocate(entryLayout.sizeofMessage)
            (entry + Self.descriptorOffset).storeBytes(
                of: UnsafeRawPointer(entryLayout.descriptor), as: UnsafeRawPointer.self)
            var unknown: [UnknownEntry] = []
            do throws(PathedError) {
                let keyValue: Value
                switch keyField.type {
                case .string: keyValue = .string(key)
                case .bool:
                    guard key == "true" || key == "false" else {
                        throw PathedError(.typeMismatch, "map key \"\(key)\" is not a boolean")
                    }
                    keyValue = .bool(key == "true")
                default:
                    keyValue = .string(key)
                }
                try set(keyField, keyValue, in: entry, unknown: &unknown, depth: depth)
                let element = object.values[k]
                if case .null = element {
                    throw PathedError(.typeMismatch, "map values cannot be null")
                }
                try set(valueField, element, in: entry, unknown: &unknown, depth: depth)
            } catch {
                var e = error
                e.reversedPath.append(.key(key))
                throw e
            }
            if !unknown.isEmpty { try attachUnknown(unknown, to: entry) }
            (entries + 8 * k).storeBytes(of: entry, as: UnsafeMutableRawPointer.self)
        }
        (base + f.quantifierOffset).storeBytes(of: object.count, as: Int.self)
        (base + f.offset).storeBytes(of: entries, as: UnsafeMutableRawPointer.self)
    }

    // MARK: scalars

    /// Stores one value of the field's type at `p`. Returns false for a string holding NUL (not stored).
    @inline(__always)
    private mutating func store(_ value: Value, _ f: HotField, at p: UnsafeMutableRawPointer, depth: Int)
        throws(PathedError) -> Bool
    {
        switch f.type {
        case .int32, .sint32, .sfixed32:
            p.storeBytes(of: Int32(try runtime.signed(value, f, min: Int64(Int32.min), max: Int64(Int32.max))), as: Int32.self)
        case .uint32, .fixed32:
            p.storeBytes(of: UInt32(try runtime.unsigned(value, f, max: UInt64(UInt32.max))), as: UInt32.self)
        case .int64, .sint64, .sfixed64:
            p.storeBytes(of: try runtime.signed(value, f, min: Int64.min, max: Int64.max), as: Int64.self)
        case .uint64, .fixed64:
            p.storeBytes(of: try runtime.unsigned(value, f, max: UInt64.max), as: UInt64.self)
        case .double:
            p.storeBytes(of: try runtime.floating(value, f), as: Double.self)
        case .float:
            let d = try runtime.floating(value, f)
            if d.isFinite && abs(d) > Double(Float.greatestFiniteMagnitude) {
                throw PathedError(.valueOutOfRange, "\(d) is out of range for float field \(runtime.name(f))")
            }
            p.storeBytes(of: Float(d), as: Float.self)
        case .bool:
            guard case .bool(let b) = value else { throw runtime.mismatch(value, f, "a boolean") }
            p.storeBytes(of: b ? 1 : 0, as: Int32.self)
        case .enumeration:
            p.storeBytes(of: try runtime.enumNumber(value, f), as: Int32.self)
        case .string:
            guard case .string(let s) = value else { throw runtime.mismatch(value, f, "a string") }
            let arena = arena
            let copy = { (utf8: UnsafeBufferPointer<UInt8>) -> UnsafeMutableRawPointer?? in
                let count = utf8.count
                if count > 0 && Self.containsNUL(utf8) { return .some(nil) }
                guard let c = arena.allocate(count + 1) else { return nil }
                if count > 0 { c.copyMemory(from: utf8.baseAddress!, byteCount: count) }
                c.storeBytes(of: 0, toByteOffset: count, as: UInt8.self)
                return .some(c)
            }
            let stored: UnsafeMutableRawPointer??
            if let direct = s.utf8.withContiguousStorageIfAvailable(copy) {
                stored = direct
            } else {
                var bridged = s
                stored = bridged.withUTF8(copy)
            }
            guard let result = stored else { throw PathedError(.sizeLimitExceeded, "out of memory while encoding") }
            guard let pointer = result else { return false }
            p.storeBytes(of: pointer, as: UnsafeMutableRawPointer.self)
        case .bytes:
            let bytes: [UInt8]
            switch value {
            case .bytes(let b): bytes = b
            case .string(let text):
                guard let decoded = Self.base64(text) else {
                    throw PathedError(.typeMismatch, "bytes field \(runtime.name(f)) holds a string that is not base64")
                }
                bytes = decoded
            default: throw runtime.mismatch(value, f, "bytes")
            }
            var data: UnsafeMutableRawPointer? = nil
            if !bytes.isEmpty {
                let d = try allocate(bytes.count)
                bytes.withUnsafeBytes { d.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                data = d
            }
            p.storeBytes(
                of: ProtobufCBinaryData(len: bytes.count, data: data?.assumingMemoryBound(to: UInt8.self)),
                as: ProtobufCBinaryData.self)
        case .message:
            let sub = try message(value, runtime.messages[f.messageIndex], depth: depth + 1)
            p.storeBytes(of: sub, as: UnsafeMutableRawPointer.self)
        }
        return true
    }

    /// Whether UTF-8 text holds a NUL byte (word at a time: short strings make a `memchr` call costly).
    @inline(__always)
    static func containsNUL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawPointer(bytes.baseAddress!)
        var i = 0
        while i + 8 <= bytes.count {
            let v = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            if (v &- 0x0101_0101_0101_0101) & ~v & 0x8080_8080_8080_8080 != 0 { return true }
            i += 8
        }
        while i < bytes.count {
            if bytes[i] == 0 { return true }
            i += 1
        }
        return false
    }

    /// Standard or URL-safe base64, padding optional (the proto3 JSON mapping accepts both).
    static func base64(_ text: String) -> [UInt8]? {
        var normalized = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        let remainder = normalized.utf8.count % 4
        if remainder == 2 { normalized += "==" } else if remainder == 3 { normalized += "=" }
        guard let data = Data(base64Encoded: normalized) else { return nil }
        return [UInt8](data)
    }
}
