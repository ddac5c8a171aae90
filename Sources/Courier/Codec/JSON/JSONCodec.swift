#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// JSON (RFC 8259) ⇄ ``Value``: a strict, fast, bounded codec.
///
/// Decoding is strict: invalid UTF-8, lone surrogates in `\u` escapes, trailing commas, leading zeros,
/// `NaN`/`Infinity`, unescaped control characters and (unless ``Options/allowsByteOrderMark`` is set) a
/// leading byte order mark are all rejected with a ``CourierError`` that names the 1-based line and
/// column. Numbers keep their exactness: integers that fit 64 bits become ``Value/int(_:)`` (or
/// ``Value/uint(_:)`` above `Int64.max`), decimals become ``Value/double(_:)`` only when the double
/// reproduces the text's value exactly, and everything else becomes ``Value/number(_:)`` with its exact
/// digits. Object members keep their order, so decoding and re-encoding compact JSON reproduces it.
///
/// ```swift
/// let codec = JSONCodec()
/// let value = try codec.decode(Array(#"{"id":7,"price":19.99}"#.utf8))
/// value["price"]                          // .double(19.99)
///
/// var options = JSONCodec.Options()
/// options.pretty = true
/// options.sortedKeys = true
/// let text: [UInt8] = try JSONCodec(options: options).encode(value)
/// ```
///
/// Models skip the ``Value`` tree: `decode(_:from:decoder:)` reads a `Decodable` straight from the bytes
/// and ``encode(model:encoder:)`` writes an `Encodable` straight to them (also through ``CodecSet``), with
/// exactly the results, errors and bytes of the Value path.
///
/// ```swift
/// let user = try JSONCodec().decode(User.self, from: bytes)
/// let body = try JSONCodec().encode(model: user)
/// ```
public struct JSONCodec: Codec {
    /// What to do when an object names the same member twice.
    ///
    /// ```swift
    /// var options = JSONCodec.Options()
    /// options.duplicateKeys = .reject
    /// ```
    public struct DuplicateKeyPolicy: Hashable, Sendable, CustomStringConvertible {
        enum Base: Hashable { case lastWins, firstWins, reject }
        let base: Base

        /// The member keeps the position where its name first appeared and takes the last value
        /// (what most JSON parsers do). The default.
        public static let lastWins = DuplicateKeyPolicy(base: .lastWins)
        /// The first value is kept; later ones are ignored.
        public static let firstWins = DuplicateKeyPolicy(base: .firstWins)
        /// A repeated name is an error (``CourierError/Code/malformedInput`` with the repeat's position).
        public static let reject = DuplicateKeyPolicy(base: .reject)

        public var description: String { "\(base)" }
    }

    /// How the codec reads and writes. Every option has a safe default.
    ///
    /// ```swift
    /// var options = JSONCodec.Options()
    /// options.maximumDepth = 64
    /// options.maximumInputSize = 1 << 20
    /// let codec = JSONCodec(options: options)
    /// ```
    public struct Options: Sendable {
        /// The limits decoding enforces while it reads (nesting, input size, elements per container,
        /// values in all, string and number lengths). Default ``DecodingLimits/init()``;
        /// ``CodingHints/limits`` or ``CodecSet/decodingLimits`` replace them for a call.
        public var limits = DecodingLimits()
        /// The deepest nesting of arrays and objects accepted when decoding and written when encoding;
        /// deeper input fails with ``CourierError/Code/depthLimitExceeded``. Default 512. The same
        /// setting as `limits.maximumDepth`.
        public var maximumDepth: Int {
            get { limits.maximumDepth }
            set { limits.maximumDepth = newValue }
        }
        /// What to do with repeated member names. Default ``DuplicateKeyPolicy/lastWins``.
        public var duplicateKeys = DuplicateKeyPolicy.lastWins
        /// The largest input accepted, in bytes; larger input fails with
        /// ``CourierError/Code/sizeLimitExceeded`` before parsing starts. Default 64 MiB. The same
        /// setting as `limits.maximumInputSize`.
        public var maximumInputSize: Int {
            get { limits.maximumInputSize }
            set { limits.maximumInputSize = newValue }
        }
        /// Whether a leading UTF-8 byte order mark (EF BB BF) is skipped. RFC 8259 §8.1 forbids
        /// senders from adding one and lets parsers ignore it; Courier is strict by default and rejects it.
        public var allowsByteOrderMark = false
        /// Whether output is indented (two spaces, one member per line, `"key": value`). Default `false`.
        public var pretty = false
        /// Whether object members are written sorted by name instead of in their order. Default `false`.
        public var sortedKeys = false
        /// Whether `/` is written as `\/` (safe inside HTML `<script>`). Default `false`.
        public var escapeSlashes = false

        /// The default options.
        public init() {}
    }

    /// The codec's options.
    public var options: Options

    /// A codec with `options`.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// ``ContentFormat/json``.
    public var format: ContentFormat { .json }

    // MARK: Decoding

    /// Decodes a whole JSON document. Only ``CodingHints/limits`` is read (replacing
    /// ``Options/limits`` for this call); JSON needs no other hint.
    public func decode(_ data: Data, hints: CodingHints) throws -> Value {
        let limits = hints.limits ?? options.limits
        return try data.withUnsafeBytes { try decode($0, limits: limits) }
    }

    /// Decodes a whole JSON document from bytes.
    public func decode(_ bytes: some Collection<UInt8>) throws -> Value {
        if let result = try bytes.withContiguousStorageIfAvailable({ try decode(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return try Array(bytes).withUnsafeBytes { try decode($0) }
    }

    /// Decodes a whole JSON document from raw memory (the fastest entry point).
    public func decode(_ buffer: UnsafeRawBufferPointer) throws -> Value {
        try decode(buffer, limits: options.limits)
    }

    /// Decodes a whole JSON document from raw memory within `limits`.
    private func decode(_ buffer: UnsafeRawBufferPointer, limits: DecodingLimits) throws -> Value {
        guard buffer.count <= limits.maximumInputSize else {
            throw DecodingLimits.sizeFailure(
                "maximumInputSize", limits.maximumInputSize, what: "the JSON input has \(buffer.count) bytes",
                at: "in all")
        }
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            throw CourierError(
                .malformedInput, detail: "The input is empty at line 1, column 1.", context: .init(line: 1, column: 1, offset: 0))
        }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        var start = 0
        if buffer.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            guard options.allowsByteOrderMark else {
                throw CourierError(
                    .malformedInput, detail: "a byte order mark is not allowed at the start of JSON text",
                    context: .init(line: 1, column: 1))
            }
            start = 3
        }
        var parser = JSONParser(
            bytes: bytes + start, count: buffer.count - start, limits: limits, duplicateKeys: options.duplicateKeys)
        do {
            return try parser.parse()
        } catch {
            let offset = error.offset + start
            let (line, column) = JSONParser.location(of: offset, in: bytes, count: buffer.count)
            throw CourierError(
                error.code, detail: "\(error.reason.prefix(1).uppercased())\(error.reason.dropFirst()) at line \(line), column \(column).",
                context: .init(line: line, column: column, offset: offset))
        }
    }

    // MARK: Typed decoding

    /// Decodes a `T` straight from the JSON bytes, without building the intermediate ``Value`` tree.
    ///
    /// Gives exactly what the Value path gives (`decoder.decode(type, from: decode(data, hints: hints))`):
    /// the same model, or a ``CourierError`` with the same code and coding path, under the same limits
    /// (``CodingHints/limits`` or ``Options/limits``), strictness and duplicate-key policy. Rare shapes
    /// (a repeated member name, `T == Value`) take the Value path itself.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data, hints: CodingHints, decoder: ValueDecoder) throws -> T {
        let limits = hints.limits ?? options.limits
        return try data.withUnsafeBytes { try decodeModel(type, from: $0, limits: limits, decoder: decoder) }
    }

    /// Decodes a `T` from JSON bytes without the intermediate ``Value`` tree (see
    /// ``decode(_:from:hints:decoder:)``), within ``Options/limits``.
    ///
    /// ```swift
    /// struct User: Decodable { var id: Int; var name: String }
    /// let user = try JSONCodec().decode(User.self, from: Array(#"{"id":7,"name":"Ada"}"#.utf8))
    /// ```
    public func decode<T: Decodable>(
        _ type: T.Type, from bytes: some Collection<UInt8>, decoder: ValueDecoder = ValueDecoder()
    ) throws -> T {
        if let result = try bytes.withContiguousStorageIfAvailable({
            try decodeModel(type, from: UnsafeRawBufferPointer($0), limits: options.limits, decoder: decoder)
        }) {
            return result
        }
        return try Array(bytes).withUnsafeBytes { try decodeModel(type, from: $0, limits: options.limits, decoder: decoder) }
    }

    /// Decodes a `T` from JSON in raw memory without the intermediate ``Value`` tree (the fastest entry
    /// point; see ``decode(_:from:hints:decoder:)``), within ``Options/limits``.
    public func decode<T: Decodable>(
        _ type: T.Type, from buffer: UnsafeRawBufferPointer, decoder: ValueDecoder = ValueDecoder()
    ) throws -> T {
        try decodeModel(type, from: buffer, limits: options.limits, decoder: decoder)
    }

    private func decodeModel<T: Decodable>(
        _ type: T.Type, from buffer: UnsafeRawBufferPointer, limits: DecodingLimits, decoder: ValueDecoder
    ) throws -> T {
        if let direct = try decodeDirect(type, buffer, limits: limits, decoder: decoder) { return direct }
        return try decoder.decode(type, from: decode(buffer, limits: limits))
    }

    // MARK: Encoding

    /// Encodes `value` as JSON text. `hints` are not needed by JSON and are ignored.
    ///
    /// Fails with ``CourierError/Code/encodingFailed`` for a non-finite double or a ``Value/number(_:)``
    /// that is not a JSON number, and with ``CourierError/Code/depthLimitExceeded`` past
    /// ``Options/maximumDepth``.
    public func encode(_ value: Value, hints: CodingHints) throws -> Data {
        try write(value).data
    }

    /// Encodes `model` as JSON text without building the intermediate ``Value`` tree.
    ///
    /// Gives exactly the bytes (or the error) of the Value path,
    /// `encode(encoder.encode(model), hints: hints)`, for every ``Options`` and `encoder` option;
    /// ``Options/sortedKeys``, nested containers, super encoders and members encoded twice take the
    /// Value path itself. `hints` are not needed by JSON.
    public func encode<T: Encodable>(model: T, hints: CodingHints, encoder: ValueEncoder) throws -> Data {
        if let direct = encodeDirect(model, encoder: encoder) { return direct.data }
        return try write(encoder.encode(model)).data
    }

    /// Encodes `model` as JSON text bytes without the intermediate ``Value`` tree (see
    /// ``encode(model:hints:encoder:)``).
    ///
    /// ```swift
    /// struct NewUser: Encodable { var name: String; var age: Int }
    /// let body = try JSONCodec().encode(model: NewUser(name: "Ada", age: 36))   // {"name":"Ada","age":36}
    /// ```
    public func encode<T: Encodable>(model: T, encoder: ValueEncoder = ValueEncoder()) throws -> [UInt8] {
        if let direct = encodeDirect(model, encoder: encoder) { return direct.bytes }
        return try encode(encoder.encode(model))
    }

    /// Encodes `value` as JSON text bytes.
    public func encode(_ value: Value) throws -> [UInt8] {
        try write(value).bytes
    }

    /// `value` as JSON text.
    private func write(_ value: Value) throws -> JSONOutput {
        var writer = JSONWriter(options: options)
        try writer.write(value)
        return writer.output
    }

    /// Encodes `value` as a JSON string.
    public func encodeString(_ value: Value) throws -> String {
        String(decoding: try encode(value) as [UInt8], as: UTF8.self)
    }
}

extension JSONOutput {
    /// The text written so far, as `Data`.
    var data: Data { Data(bytes: base, count: count) }
}
