// Low-level protobuf wire-format reading and writing shared by the descriptor parser, the raw decoder and the
// error locator. Everything works on an `UnsafeBufferPointer<UInt8>` with explicit bounds checks: no read ever
// leaves the buffer, whatever the input says.

/// A wire-format failure at a byte offset (internal; surfaced as a `CourierError`).
struct WireError: Error {
    var message: String
    var offset: Int
    /// The error code it becomes: ``CourierError/Code/malformedInput`` unless a limit was exceeded.
    var code: CourierError.Code = .malformedInput
}

/// The four wire types protobuf-c understands, plus the two group markers the raw decoder accepts.
enum WireType: UInt8 {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
    case startGroup = 3
    case endGroup = 4
    case fixed32 = 5
}

/// A forward-only reader over a byte buffer. `offset` is absolute in the buffer, so errors name the position in
/// the caller's input.
struct WireReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset: Int
    let end: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>) {
        self.bytes = bytes
        self.offset = range.lowerBound
        self.end = range.upperBound
    }

    var isAtEnd: Bool { offset >= end }
    var remaining: Int { end - offset }

    /// Reads a varint of at most `maxBytes` bytes (10 for values, 5 for lengths and tags as protobuf-c does).
    @inline(__always)
    mutating func readVarint(maxBytes: Int = 10) throws(WireError) -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var i = offset
        while i < end {
            let byte = bytes[i]
            i += 1
            if shift < 64 { result |= UInt64(byte & 0x7f) << shift }
            if byte & 0x80 == 0 {
                offset = i
                return result
            }
            shift += 7
            if i - start >= maxBytes {
                throw WireError(message: "varint longer than \(maxBytes) bytes", offset: start)
            }
        }
        throw WireError(message: "truncated varint", offset: start)
    }

    /// Reads a field key: the field number and the wire type. Strict keys are at most 5 bytes and fit 32 bits
    /// (protobuf-c); lenient ones may take 10 bytes, of which the low 32 bits count (protoc).
    mutating func readKey(lenient: Bool = false) throws(WireError) -> (number: UInt32, wireType: WireType) {
        let start = offset
        var key = try readVarint(maxBytes: lenient ? 10 : 5)
        if lenient { key &= 0xFFFF_FFFF }
        guard key <= UInt64(UInt32.max) else { throw WireError(message: "field key out of range", offset: start) }
        let number = UInt32(truncatingIfNeeded: key >> 3)
        guard number != 0 else { throw WireError(message: "field number 0 is not allowed", offset: start) }
        guard let wireType = WireType(rawValue: UInt8(key & 7)) else {
            throw WireError(message: "invalid wire type \(key & 7) for field \(number)", offset: start)
        }
        return (number, wireType)
    }

    /// Reads a length prefix and returns the range of the payload that follows, checked against the end.
    mutating func readLengthDelimited() throws(WireError) -> Range<Int> {
        let start = offset
        let length = try readVarint(maxBytes: 5)
        guard length <= UInt64(remaining) else {
            throw WireError(
                message: "length prefix \(length) exceeds the \(remaining) bytes that remain", offset: start)
        }
        let payload = offset..<(offset + Int(length))
        offset = payload.upperBound
        return payload
    }

    mutating func readFixed32() throws(WireError) -> UInt32 {
        guard remaining >= 4 else { throw WireError(message: "truncated 32-bit value", offset: offset) }
        var v: UInt32 = 0
        for k in 0..<4 { v |= UInt32(bytes[offset + k]) << (8 * UInt32(k)) }
        offset += 4
        return v
    }

    mutating func readFixed64() throws(WireError) -> UInt64 {
        guard remaining >= 8 else { throw WireError(message: "truncated 64-bit value", offset: offset) }
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(bytes[offset + k]) << (8 * UInt64(k)) }
        offset += 8
        return v
    }

    /// Reads a key whose field number may use all 32 bits (what protobuf-c keeps for unknown fields, whose
    /// numbers it truncates to 32 bits): up to 10 bytes, number = key >> 3.
    mutating func readWideKey() throws(WireError) -> (number: UInt32, wireType: WireType) {
        let start = offset
        let key = try readVarint(maxBytes: 10)
        guard key >> 3 <= UInt64(UInt32.max), key >> 3 != 0 else {
            throw WireError(message: "field number out of range", offset: start)
        }
        guard let wireType = WireType(rawValue: UInt8(key & 7)) else {
            throw WireError(message: "invalid wire type \(key & 7)", offset: start)
        }
        return (UInt32(key >> 3), wireType)
    }

    /// Skips one value of `wireType` (groups are not skippable here: callers handle them).
    mutating func skip(_ wireType: WireType) throws(WireError) {
        switch wireType {
        case .varint: _ = try readVarint()
        case .fixed64: _ = try readFixed64()
        case .fixed32: _ = try readFixed32()
        case .lengthDelimited: _ = try readLengthDelimited()
        case .startGroup, .endGroup:
            throw WireError(message: "groups are not supported", offset: offset)
        }
    }
}

/// Appends wire-format primitives to a byte array.
enum WireWriter {
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }
}
