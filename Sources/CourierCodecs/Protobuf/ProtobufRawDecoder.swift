#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Decodes protobuf bytes without a schema, as `protoc --decode_raw` does: into a ``Value`` for programs,
/// or into protoc's text for people.
///
/// The value is an object keyed by field number (`"1"`, `"2"`, …) in order of first appearance; a number that
/// repeats holds an array of its values. Varints are integers (`.int`, or `.uint` above `Int64.max`), fixed64
/// and fixed32 values are their unsigned integers, groups are nested objects, and a length-delimited value
/// is a nested object when it parses completely as a message (as protoc guesses), else a string when it is
/// UTF-8, else `.bytes`. Below ``maxDepth`` no more nesting is guessed (values stay strings or bytes).
///
/// ```swift
/// let raw = try ProtobufRawDecoder().decode(body)
/// raw["3"]?["3"]?[0]?["2"]                      // .string("Zoë Hernández")
/// print(try ProtobufRawDecoder().text(body))    // 1: 200 / 2: "OK" / 3 { ... }
/// ```
public struct ProtobufRawDecoder: Sendable {
    /// How deep nested messages are guessed. Default 64 (protoc's own limit is similar).
    public var maxDepth = 64

    /// A decoder with the default depth.
    public init() {}

    /// Decodes `data` into an object keyed by field number. Throws ``CourierError/Code/malformedInput``
    /// (with the byte offset) when the bytes are not a protobuf message.
    public func decode(_ data: Data) throws -> Value {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Value in
            let bytes = raw.bindMemory(to: UInt8.self)
            do throws(WireError) {
                return try Self.parseMessage(bytes, 0..<bytes.count, depth: 1, maxDepth: maxDepth)
            } catch {
                throw CourierError(
                    .malformedInput, detail: "not a protobuf message: \(error.message) at offset \(error.offset)",
                    context: .init(offset: error.offset))
            }
        }
    }

    /// Renders `data` in the text format of `protoc --decode_raw`.
    public func text(_ data: Data) throws -> String {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> String in
            let bytes = raw.bindMemory(to: UInt8.self)
            var out = ""
            do throws(WireError) {
                // Validate first (protoc prints nothing for bytes it cannot parse).
                _ = try Self.parseMessage(bytes, 0..<bytes.count, depth: 1, maxDepth: maxDepth)
                try Self.render(bytes, 0..<bytes.count, indent: 0, depth: 1, maxDepth: maxDepth, into: &out)
            } catch {
                throw CourierError(
                    .malformedInput, detail: "not a protobuf message: \(error.message) at offset \(error.offset)",
                    context: .init(offset: error.offset))
            }
            return out
        }
    }

    // MARK: value

    private static func parseMessage(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, depth: Int, maxDepth: Int,
        endGroup: UInt32? = nil, consumed: UnsafeMutablePointer<Int>? = nil
    ) throws(WireError) -> Value {
        var object = Value.Object()
        var reader = WireReader(bytes, range: range)
        var ended = false
        while !reader.isAtEnd {
            let keyOffset = reader.offset
            let (number, wireType) = try reader.readKey(lenient: true)
            let value: Value
            switch wireType {
            case .varint: value = Value(try reader.readVarint())
            case .fixed64: value = Value(try reader.readFixed64())
            case .fixed32: value = .int(Int64(try reader.readFixed32()))
            case .lengthDelimited:
                let payload = try reader.readLengthDelimited()
                value = lengthDelimitedValue(bytes, payload, depth: depth, maxDepth: maxDepth)
            case .startGroup:
                guard depth < maxDepth else { throw WireError(message: "groups nest too deeply", offset: keyOffset) }
                var used = 0
                value = try parseMessage(
                    bytes, reader.offset..<reader.end, depth: depth + 1, maxDepth: maxDepth, endGroup: number,
                    consumed: &used)
                reader.offset = used
            case .endGroup:
                guard endGroup == number else {
                    throw WireError(message: "unmatched end of group \(number)", offset: keyOffset)
                }
                consumed?.pointee = reader.offset
                ended = true
                value = .null
            }
            if ended { break }
            let key = String(number)
            if let existing = object[key] {
                if case .array(var values) = existing {
                    object[key] = .null  // drop the reference so the append does not copy
                    values.append(value)
                    object[key] = .array(values)
                } else {
                    object[key] = .array([existing, value])
                }
            } else {
                object.append(key, value)
            }
        }
        if endGroup != nil && !ended {
            throw WireError(message: "group \(endGroup!) is not closed", offset: reader.offset)
        }
        return .object(object)
    }

    private static func lengthDelimitedValue(
        _ bytes: UnsafeBufferPointer<UInt8>, _ payload: Range<Int>, depth: Int, maxDepth: Int
    ) -> Value {
        if !payload.isEmpty, depth < maxDepth,
            let nested = try? parseMessage(bytes, payload, depth: depth + 1, maxDepth: maxDepth)
        {
            return nested
        }
        if let text = String(validating: bytes[payload], as: UTF8.self) { return .string(text) }
        return .bytes(Array(bytes[payload]))
    }

    // MARK: text

    private static func render(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, indent: Int, depth: Int, maxDepth: Int,
        into out: inout String, endGroup: UInt32? = nil, consumed: UnsafeMutablePointer<Int>? = nil
    ) throws(WireError) {
        var reader = WireReader(bytes, range: range)
        let pad = String(repeating: " ", count: indent)
        while !reader.isAtEnd {
            let (number, wireType) = try reader.readKey(lenient: true)
            switch wireType {
            case .varint:
                out += "\(pad)\(number): \(try reader.readVarint())\n"
            case .fixed64:
                out += "\(pad)\(number): 0x\(hex(try reader.readFixed64(), digits: 16))\n"
            case .fixed32:
                out += "\(pad)\(number): 0x\(hex(UInt64(try reader.readFixed32()), digits: 8))\n"
            case .lengthDelimited:
                let payload = try reader.readLengthDelimited()
                if !payload.isEmpty, depth < maxDepth,
                    (try? parseMessage(bytes, payload, depth: depth + 1, maxDepth: maxDepth)) != nil
                {
                    out += "\(pad)\(number) {\n"
                    try render(bytes, payload, indent: indent + 2, depth: depth + 1, maxDepth: maxDepth, into: &out)
                    out += "\(pad)}\n"
                } else {
                    out += "\(pad)\(number): \"\(escape(bytes[payload]))\"\n"
                }
            case .startGroup:
                out += "\(pad)\(number) {\n"
                var used = 0
                try render(
                    bytes, reader.offset..<reader.end, indent: indent + 2, depth: depth + 1, maxDepth: maxDepth,
                    into: &out, endGroup: number, consumed: &used)
                reader.offset = used
                out += "\(pad)}\n"
            case .endGroup:
                consumed?.pointee = reader.offset
                return
            }
        }
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// protoc's C escaping: `\n \r \t \" \' \\`, other bytes outside printable ASCII as three octal digits.
    static func escape(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        var out = ""
        out.reserveCapacity(bytes.count)
        for b in bytes {
            switch b {
            case 0x0a: out += "\\n"
            case 0x0d: out += "\\r"
            case 0x09: out += "\\t"
            case 0x22: out += "\\\""
            case 0x27: out += "\\'"
            case 0x5c: out += "\\\\"
            case 0x20..<0x7f: out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "\\" + String(b >> 6) + String((b >> 3) & 7) + String(b & 7)
            }
        }
        return out
    }
}
