#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A wire format Courier can encode to and decode from. An open set: add your own as a static member.
///
/// ```swift
/// extension ContentFormat {
///     static let msgpack = ContentFormat("msgpack", mediaType: "application/msgpack")
/// }
/// ```
public struct ContentFormat: Hashable, Sendable, CustomStringConvertible {
    /// A short lower-case name (`json`, `xml`, `protobuf`).
    public var name: String
    /// The media type written to `Content-Type` and `Accept`.
    public var mediaType: String

    /// A format with a name and a media type.
    public init(_ name: String, mediaType: String) {
        self.name = name
        self.mediaType = mediaType
    }

    /// JSON (RFC 8259), `application/json`.
    public static let json = ContentFormat("json", mediaType: "application/json")
    /// XML, `application/xml`.
    public static let xml = ContentFormat("xml", mediaType: "application/xml")
    /// Protocol Buffers binary wire format, `application/x-protobuf`.
    public static let protobuf = ContentFormat("protobuf", mediaType: "application/x-protobuf")
    /// HTML form encoding, `application/x-www-form-urlencoded`.
    public static let form = ContentFormat("form", mediaType: "application/x-www-form-urlencoded")
    /// Plain text, `text/plain`.
    public static let text = ContentFormat("text", mediaType: "text/plain")
    /// Opaque bytes, `application/octet-stream`.
    public static let binary = ContentFormat("binary", mediaType: "application/octet-stream")

    public var description: String { name }

    /// The formats Courier knows by name.
    public static let known: [ContentFormat] = [.json, .xml, .protobuf, .form, .text, .binary]

    /// The format named `name` (`json`, `xml`, `protobuf`/`pb`, `form`, `text`, `binary`).
    public init?(name: String) {
        let lowered = name.lowercased()
        if lowered == "pb" || lowered == "proto" {
            self = .protobuf
            return
        }
        guard let found = Self.known.first(where: { $0.name == lowered }) else { return nil }
        self = found
    }

    /// The format a `Content-Type` header value names, if Courier knows it.
    public init?(contentType: String) {
        // Every response goes through here: compare the essence's bytes (spaces and tabs dropped, ASCII
        // lower-cased, up to the first `;`) with the known types instead of building strings.
        var text = contentType
        let found = text.withUTF8 { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { essence in
                var count = 0
                for byte in bytes {
                    if byte == UInt8(ascii: ";") { break }
                    if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { continue }
                    essence[count] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                    count += 1
                }
                return Self.format(ofEssence: UnsafeBufferPointer(rebasing: essence[..<count]))
            }
        }
        guard let found else { return nil }
        self = found
    }

    /// The media types Courier reads as each format, lower-case.
    private static let mediaTypes: [(essence: [UInt8], format: ContentFormat)] = ([
        ("application/json", .json), ("text/json", .json), ("application/xml", .xml), ("text/xml", .xml),
        ("application/x-protobuf", .protobuf), ("application/protobuf", .protobuf),
        ("application/vnd.google.protobuf", .protobuf), ("application/octet-stream+protobuf", .protobuf),
        ("application/x-www-form-urlencoded", .form), ("text/plain", .text), ("application/octet-stream", .binary),
    ] as [(String, ContentFormat)]).map { (Array($0.0.utf8), $0.1) }

    private static func format(ofEssence essence: UnsafeBufferPointer<UInt8>) -> ContentFormat? {
        for known in mediaTypes where known.essence.count == essence.count && same(known.essence, essence[...]) {
            return known.format
        }
        if essence.count >= 5, same(Self.jsonSuffix, essence[(essence.count - 5)...]) { return .json }
        if essence.count >= 4, same(Self.xmlSuffix, essence[(essence.count - 4)...]) { return .xml }
        return nil
    }

    private static let jsonSuffix = Array("+json".utf8)
    private static let xmlSuffix = Array("+xml".utf8)

    /// Whether `known` and `bytes` (of the same length) hold the same bytes: a plain loop, where the generic
    /// `elementsEqual` walked both through iterators.
    private static func same(_ known: [UInt8], _ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        known.withUnsafeBufferPointer { known in
            var index = bytes.startIndex
            for byte in known {
                if bytes[index] != byte { return false }
                index += 1
            }
            return true
        }
    }
}

/// What a codec may need to know beyond the bytes: the protobuf message type, the XML root name, the
/// expected shape for schema-guided decoding. Options are `var`s with safe defaults.
///
/// ```swift
/// var hints = CodingHints()
/// hints.messageType = "demo.UserList"
/// let value = try codecs.decode(body, format: .protobuf, hints: hints)
/// ```
public struct CodingHints: Sendable {
    /// The full protobuf message name (`demo.UserList`); required by schema-driven protobuf codecs.
    public var messageType: String?
    /// The XML root element name used when encoding (default `response` / `request`).
    public var rootName: String?
    /// The expected shape, used by formats that cannot tell an array of one from a single value or a
    /// number from text (XML).
    public var shape: ValueShape?
    /// Decoding limits for this call, replacing the codec set's ``CodecSet/decodingLimits`` and the
    /// codec's own. `nil` (the default) keeps them.
    public var limits: DecodingLimits?
    /// Hints of codecs outside the core, keyed by ``OptionKey`` types (CourierCodecs' XML array layout).
    private var extensions: [ObjectIdentifier: any Sendable] = [:]

    /// No hints.
    public init() {}

    /// A codec's own hint (its default when unset): how a codec outside the core lets an endpoint or a call
    /// tune it. A codec module defines the key and, usually, a property over this subscript.
    ///
    /// ```swift
    /// enum IndentHint: OptionKey { static let defaultValue = 0 }
    /// extension CodingHints {
    ///     var indent: Int { get { self[IndentHint.self] } set { self[IndentHint.self] = newValue } }
    /// }
    /// ```
    public subscript<K: OptionKey>(key: K.Type) -> K.Value {
        get { extensions.option(key) }
        set { extensions[ObjectIdentifier(key)] = newValue }
    }
}

/// Turns bytes of one format into a ``Value`` and back. Implement it to teach Courier a format; the
/// pipeline picks a codec by ``ContentFormat`` from the client's ``CodecSet``.
///
/// Implementations throw ``CourierError`` with a decoding or encoding code and, where they know it,
/// the line and column (``CourierError/Context``).
///
/// ```swift
/// struct UppercaseTextCodec: Codec {
///     var format: ContentFormat { .text }
///     func decode(_ data: Data, hints: CodingHints) throws -> Value {
///         .string(String(decoding: data, as: UTF8.self).uppercased())
///     }
///     func encode(_ value: Value, hints: CodingHints) throws -> Data {
///         Data((value.stringValue ?? "").utf8)
///     }
/// }
/// ```
public protocol Codec: Sendable {
    /// The format this codec reads and writes.
    var format: ContentFormat { get }
    /// Decodes a whole body.
    func decode(_ data: Data, hints: CodingHints) throws -> Value
    /// Encodes a value into a whole body.
    func encode(_ value: Value, hints: CodingHints) throws -> Data
    /// Decodes a whole body straight into a `Decodable` model, reading `decoder`'s strategies (keys, dates,
    /// data, lenient numbers, user info). The default decodes a ``Value`` and hands it to `decoder`; a codec
    /// that can read its parsed form in place (JSON, XML and protobuf do) overrides it and must give the
    /// same model, or the same ``CourierError`` code and coding path, as that default.
    func decode<T: Decodable>(_ type: T.Type, from data: Data, hints: CodingHints, decoder: ValueDecoder) throws -> T
    /// Encodes an `Encodable` model into a whole body with `encoder`'s strategies. The default encodes a
    /// ``Value`` with `encoder` and then the value; an overriding codec must write the same bytes.
    func encode<T: Encodable>(model: T, hints: CodingHints, encoder: ValueEncoder) throws -> Data
}

extension Codec {
    /// Decodes a ``Value`` with ``decode(_:hints:)`` and the model from it with `decoder`.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data, hints: CodingHints, decoder: ValueDecoder)
        throws -> T
    {
        try decoder.decode(type, from: decode(data, hints: hints))
    }

    /// Encodes the model into a ``Value`` with `encoder`, then the value with ``encode(_:hints:)``.
    public func encode<T: Encodable>(model: T, hints: CodingHints, encoder: ValueEncoder) throws -> Data {
        try encode(encoder.encode(model), hints: hints)
    }
}

/// The codecs a client uses, one per format, passed explicitly (there is no global codec table).
///
/// ```swift
/// var codecs = CodecSet.standard          // JSON, form, text and binary, built into the core
/// codecs.register(XMLCodec())             // from CourierCodecs
/// let client = CourierClient(configuration: .init(codecs: codecs))
/// ```
public struct CodecSet: Sendable {
    private var byName: [String: any Codec] = [:]

    /// Limits for every decode through this set (``decode(_:format:hints:)``, which the client's pipeline
    /// uses), replacing each codec's own; ``CodingHints/limits`` still wins for one call. `nil` (the
    /// default) leaves each codec's options in charge.
    ///
    /// ```swift
    /// var limits = DecodingLimits()
    /// limits.maximumContainerCount = 5_000_000
    /// codecs.decodingLimits = limits
    /// ```
    public var decodingLimits: DecodingLimits?

    /// An empty set.
    public init() {}

    /// A set holding `codecs` (a later one replaces an earlier one of the same format).
    public init(_ codecs: [any Codec]) {
        for codec in codecs { register(codec) }
    }

    /// Adds or replaces the codec for its format.
    public mutating func register(_ codec: any Codec) {
        byName[codec.format.name] = codec
    }

    /// A copy with `codec` added.
    public func adding(_ codec: any Codec) -> CodecSet {
        var copy = self
        copy.register(codec)
        return copy
    }

    /// The codec for `format`, if registered.
    public func codec(for format: ContentFormat) -> (any Codec)? {
        byName[format.name]
    }

    /// The formats registered.
    public var formats: [String] { byName.keys.sorted() }

    /// The codec for `format`, or a ``CourierError`` with code ``CourierError/Code/missingCodec``.
    public func require(_ format: ContentFormat) throws -> any Codec {
        guard let codec = byName[format.name] else {
            throw CourierError(.missingCodec, detail: "no codec is registered for \(format.name)")
        }
        return codec
    }

    /// Decodes `data` of `format`.
    public func decode(_ data: Data, format: ContentFormat, hints: CodingHints = CodingHints()) throws -> Value {
        var hints = hints
        if hints.limits == nil { hints.limits = decodingLimits }
        return try require(format).decode(data, hints: hints)
    }

    /// Encodes `value` as `format`.
    public func encode(_ value: Value, format: ContentFormat, hints: CodingHints = CodingHints()) throws -> Data {
        try require(format).encode(value, hints: hints)
    }

    /// Decodes `data` of `format` straight into a `T` (the codec's typed path), with `decoder`'s strategies.
    ///
    /// ```swift
    /// let page = try codecs.decode(UserPage.self, from: body, format: .json)
    /// ```
    public func decode<T: Decodable>(
        _ type: T.Type, from data: Data, format: ContentFormat, hints: CodingHints = CodingHints(),
        decoder: ValueDecoder = ValueDecoder()
    ) throws -> T {
        var hints = hints
        if hints.limits == nil { hints.limits = decodingLimits }
        return try require(format).decode(type, from: data, hints: hints, decoder: decoder)
    }

    /// Encodes the model `model` as `format` (the codec's typed path), with `encoder`'s strategies.
    ///
    /// ```swift
    /// let body = try codecs.encode(model: user, format: .json)
    /// ```
    public func encode<T: Encodable>(
        model: T, format: ContentFormat, hints: CodingHints = CodingHints(), encoder: ValueEncoder = ValueEncoder()
    ) throws -> Data {
        try require(format).encode(model: model, hints: hints, encoder: encoder)
    }
}
