#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// `application/x-www-form-urlencoded` bodies: an object's members as `name=value` pairs written by
/// ``ParameterEncoding`` (``encoding``; by default arrays as `tags[]=x`, nested objects as `filter[a]=1`,
/// spaces as `%20`) — the same renderer the codec stage uses for queries, so a form body and a query of the
/// same parameters read alike. Decoding gives an object of strings (a repeated name becomes an array; `+`
/// and `%20` are spaces; bracketed names are kept as they are, not nested).
///
/// ```swift
/// let body = try FormCodec().encode(["q": "swift", "page": 2], hints: CodingHints())   // q=swift&page=2
/// ```
public struct FormCodec: Codec {
    public var format: ContentFormat { .form }

    /// The limits decoding enforces: input size, names (``DecodingLimits/maximumContainerCount``) and
    /// values of one name, values in all. ``CodingHints/limits`` replaces them for a call.
    public var limits = DecodingLimits()

    /// The conventions bodies are written with. Default ``ParameterEncoding/standard``; an endpoint's or
    /// module's ``Endpoint/parameterEncoding`` replaces it for its calls.
    public var encoding = ParameterEncoding()

    /// The codec.
    public init() {}

    /// A codec writing bodies with `encoding`.
    public init(encoding: ParameterEncoding) {
        self.encoding = encoding
    }

    /// Decodes a form body into an object of strings; a repeated name becomes an array (grouped in one
    /// pass, linear in the number of pairs).
    public func decode(_ data: Data, hints: CodingHints) throws -> Value {
        let limits = hints.limits ?? self.limits
        guard data.count <= limits.maximumInputSize else {
            throw DecodingLimits.sizeFailure(
                "maximumInputSize", limits.maximumInputSize, what: "the form body has \(data.count) bytes", at: "in all")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw CourierError(.invalidUTF8, detail: "form body is not UTF-8")
        }
        var order: [String] = []
        var groups: [String: [Value]] = [:]
        var total = 0
        for item in ParameterEncoding.parse(text, plusAsSpace: true) {
            total += 1
            if total > limits.maximumTotalValues {
                throw DecodingLimits.sizeFailure(
                    "maximumTotalValues", limits.maximumTotalValues, what: "the form body has more pairs",
                    at: "at pair \(total)")
            }
            let value: Value = item.value.map(Value.string) ?? .null
            let isNew = groups[item.name] == nil
            groups[item.name, default: []].append(value)
            if isNew {
                order.append(item.name)
                if order.count > limits.maximumContainerCount {
                    throw DecodingLimits.sizeFailure(
                        "maximumContainerCount", limits.maximumContainerCount, what: "the form body has more names",
                        at: "at '\(item.name)'", context: .init(codingPath: [.key(item.name)]))
                }
            } else if groups[item.name]!.count > limits.maximumContainerCount {
                throw DecodingLimits.sizeFailure(
                    "maximumContainerCount", limits.maximumContainerCount, what: "the form field repeats more often",
                    at: "at '\(item.name)'", context: .init(codingPath: [.key(item.name)]))
            }
        }
        var object = Value.Object(minimumCapacity: order.count)
        for name in order {
            let values = groups[name]!
            object.append(name, values.count == 1 ? values[0] : .array(values))
        }
        return .object(object)
    }

    /// Encodes an object as `name=value&…` with ``encoding`` (see ``ParameterEncoding`` for the scalar
    /// texts, the array and object conventions and the percent-encoding; a space is `%20`).
    ///
    /// - Throws: ``CourierError/Code/encodingFailed`` for a value that is not an object, or a member the
    ///   conventions cannot write (naming it).
    public func encode(_ value: Value, hints: CodingHints) throws -> Data {
        guard case .object(let object) = value else {
            throw CourierError(.encodingFailed, detail: "a form body must be an object, not \(value.kindName)")
        }
        return Data(try encoding.render(object).utf8)
    }
}

/// `text/plain` bodies: a string value (UTF-8).
///
/// ```swift
/// let value = try TextCodec().decode(Data("hello".utf8), hints: CodingHints())   // .string("hello")
/// ```
public struct TextCodec: Codec {
    public var format: ContentFormat { .text }

    /// The limits decoding enforces (``DecodingLimits/maximumInputSize``). ``CodingHints/limits``
    /// replaces them for a call.
    public var limits = DecodingLimits()

    /// The codec.
    public init() {}

    /// Decodes a UTF-8 body into a string.
    public func decode(_ data: Data, hints: CodingHints) throws -> Value {
        let limits = hints.limits ?? self.limits
        guard data.count <= limits.maximumInputSize else {
            throw DecodingLimits.sizeFailure(
                "maximumInputSize", limits.maximumInputSize, what: "the text body has \(data.count) bytes", at: "in all")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw CourierError(.invalidUTF8, detail: "text body is not UTF-8")
        }
        return .string(text)
    }

    public func encode(_ value: Value, hints: CodingHints) throws -> Data {
        switch value {
        case .string(let s), .number(let s): return Data(s.utf8)
        case .int, .uint, .double, .bool: return Data((ParameterEncoding.scalarText(value) ?? "").utf8)
        case .bytes(let b): return Data(b)
        default: throw CourierError(.encodingFailed, detail: "a text body cannot hold \(value.kindName)")
        }
    }
}

/// `application/octet-stream` bodies: bytes as they are.
///
/// ```swift
/// let value = try BinaryCodec().decode(Data([1, 2]), hints: CodingHints())   // .bytes([1, 2])
/// ```
public struct BinaryCodec: Codec {
    public var format: ContentFormat { .binary }

    /// The limits decoding enforces (``DecodingLimits/maximumInputSize``). ``CodingHints/limits``
    /// replaces them for a call.
    public var limits = DecodingLimits()

    /// The codec.
    public init() {}

    /// The body's bytes, as they are.
    public func decode(_ data: Data, hints: CodingHints) throws -> Value {
        let limits = hints.limits ?? self.limits
        guard data.count <= limits.maximumInputSize else {
            throw DecodingLimits.sizeFailure(
                "maximumInputSize", limits.maximumInputSize, what: "the binary body has \(data.count) bytes", at: "in all")
        }
        return .bytes(Array(data))
    }

    public func encode(_ value: Value, hints: CodingHints) throws -> Data {
        guard case .bytes(let bytes) = value else {
            throw CourierError(.encodingFailed, detail: "a binary body must be bytes, not \(value.kindName)")
        }
        return Data(bytes)
    }
}

extension CodecSet {
    /// The codecs built into the core: JSON, form, text and binary. Add XML and protobuf from
    /// `CourierCodecs`.
    public static var standard: CodecSet {
        CodecSet([JSONCodec(), FormCodec(), TextCodec(), BinaryCodec()])
    }
}
