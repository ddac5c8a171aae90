#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Decodes protobuf bytes without a schema, as `protoc --decode_raw` does: into a `Value` for programs,
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
    /// How deep nested messages are guessed. Default 64 (protoc's own limit is similar); at most
    /// `DecodingLimits.depthCeiling` (a larger value is taken as that).
    public var maxDepth = 64
    /// The limits decoding enforces while it reads: input size, fields per message
    /// (`DecodingLimits.maximumContainerCount`), values in all, string and bytes lengths, and the nesting
    /// of groups (`DecodingLimits.maximumDepth`; guessed nesting stops at ``maxDepth`` instead, without
    /// an error). Default `DecodingLimits.init()`.
    public var limits = DecodingLimits()

    /// A decoder with the default depth and limits.
    public init() {}

    /// Decodes `data` into an object keyed by field number. Throws `CourierError.Code.malformedInput`
    /// (with the byte offset) when the bytes are not a protobuf message, and
    /// `CourierError.Code.sizeLimitExceeded` or `CourierError.Code.depthLimitExceeded` (with the offset)
    /// beyond ``limits``. Linear in the bytes: a payload that is tried as a message and is not one costs the
    /// bytes it read, however deep the tries nest.
    public func decode(_ data: Data) throws -> Value {
        try scan(data) { bytes, tape, shape in
            var builder = ProtobufRawValueBuilder(bytes: bytes, tape: tape)
            return builder.object(0, tape.count, shape: shape)
        }
    }

    /// Renders `data` in the text format of `protoc --decode_raw`.
    public func text(_ data: Data) throws -> String {
        // The whole input is checked first (protoc prints nothing for bytes it cannot parse), and the scan
        // remembers which payloads read as messages, so that rendering never guesses again.
        try scan(data) { bytes, tape, _ in
            var out = ""
            Self.render(bytes, tape, 0, tape.count, indent: 0, into: &out)
            return out
        }
    }

    /// Scans `data` (the first pass, which enforces every limit and throws every error) and hands its tape
    /// and the outermost message's ``ProtobufRawScanner/shape`` to `body`.
    private func scan<Result>(
        _ data: Data, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<ProtobufRawEntry>, UInt16) -> Result
    ) throws -> Result {
        guard data.count <= limits.maximumInputSize else {
            throw DecodingLimits.sizeFailure(
                "maximumInputSize", limits.maximumInputSize, what: "the protobuf message has \(data.count) bytes",
                at: "in all")
        }
        return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Result in
            let bytes = raw.bindMemory(to: UInt8.self)
            var scanner = ProtobufRawScanner(bytes, limits: limits, maxDepth: maxDepth)
            defer { scanner.deallocate() }
            if scanner.scanMessage(from: 0, to: bytes.count, depth: 1, endGroup: 0) < 0 {
                throw Self.courierError(scanner.failure.wireError)
            }
            return body(bytes, scanner.entries, scanner.shape)
        }
    }

    private static func courierError(_ error: WireError) -> CourierError {
        let detail = error.code == .malformedInput
            ? "not a protobuf message: \(error.message) at offset \(error.offset)"
            : "\(error.message) at offset \(error.offset)"
        return CourierError(error.code, detail: detail, context: .init(offset: error.offset))
    }

    // MARK: text

    /// Renders the fields in `tape[from..<to]` (one message's, nested ones included).
    private static func render(
        _ bytes: UnsafeBufferPointer<UInt8>, _ tape: UnsafeBufferPointer<ProtobufRawEntry>, _ from: Int, _ to: Int,
        indent: Int, into out: inout String
    ) {
        let pad = String(repeating: " ", count: indent)
        var i = from
        while i < to {
            let entry = tape[i]
            let scalar: String
            switch entry.kind {
            case .varint: scalar = String(entry.value)
            case .fixed64: scalar = "0x" + hex(entry.value, digits: 16)
            case .fixed32: scalar = "0x" + hex(entry.value, digits: 8)
            case .lengthDelimited:
                scalar = "\"" + escape(bytes[ProtobufRawValueBuilder.payload(bytes, entry)]) + "\""
            case .message, .group:
                out += "\(pad)\(entry.number) {\n"
                render(bytes, tape, i + 1, entry.next(after: i), indent: indent + 2, into: &out)
                out += "\(pad)}\n"
                i = entry.next(after: i)
                continue
            }
            out += "\(pad)\(entry.number): \(scalar)\n"
            i += 1
        }
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
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
