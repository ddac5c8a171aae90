#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CProtobufC

/// The Protocol Buffers codec: binary protobuf ⇄ `Value` through protobuf-c, with message types from a
/// ``ProtobufSchema`` loaded at run time. The message type comes from `CodingHints.messageType`.
///
/// Decoding reads well-formed bytes directly (into a `Value`, or into a `Decodable` model without the
/// `Value` tree) and leaves anything unusual or invalid to protobuf-c, so both give the same answers and
/// the same errors. Encoding likewise writes the wire bytes directly (from a `Value`, or from an `Encodable`
/// model without the `Value` tree) and leaves anything unusual or invalid to protobuf-c: the same bytes, or
/// the same error.
///
/// Decoding yields an object keyed by the fields' proto3 JSON names (`authorId`) in field-number order, so a
/// protobuf body decodes to the same `Value` as its proto3 JSON form: 64-bit integers are `.int` (`.uint`
/// above `Int64.max`), floats `.double`, bytes `.bytes`, enums their value name, maps objects with string
/// keys, a oneof only its set member. Encoding accepts JSON names and `.proto` names, enum names or numbers,
/// and range-checks every number.
///
/// ```swift
/// let schema = try ProtobufSchema(contentsOf: URL(fileURLWithPath: "Schemas/demo.pb"))
/// let codec = ProtobufCodec(schema: schema)
/// var hints = CodingHints()
/// hints.messageType = "demo.UserListResponse"
/// let page = try codec.decode(body, hints: hints)
/// page["data"]?["users"]?[0]?["name"]            // .string("Zoë Hernández")
/// let bytes = try codec.encode(page, hints: hints)
/// ```
public struct ProtobufCodec: Codec {
    /// The member under which decoding keeps unknown fields (``Options/UnknownFieldPolicy/keep``): the unknown
    /// fields' own wire bytes (tags included), as `.bytes`. Encoding writes them back, so decode → encode
    /// preserves them; `ProtobufRawDecoder().decode(Data(bytes))` shows what they hold.
    public static let unknownFieldsKey = "@unknown"

    /// How the codec reads and writes. Safe defaults; change what you need.
    ///
    /// ```swift
    /// var options = ProtobufCodec.Options()
    /// options.enumsAsNumbers = true
    /// options.unknownFields = .reject
    /// let codec = ProtobufCodec(schema: schema, options: options)
    /// ```
    public struct Options: Sendable {
        /// What decoding does with fields the schema does not declare.
        public enum UnknownFieldPolicy: Sendable, Hashable {
            /// Keep them, as wire bytes under ``ProtobufCodec/unknownFieldsKey`` (written back by encoding).
            case keep
            /// Drop them silently.
            case discard
            /// Fail with `CourierError.Code.malformedInput`.
            case reject
        }

        /// Whether decoding emits fields without presence that are absent on the wire (proto3 scalars,
        /// strings, bytes, repeated fields and maps) with their default value: `0`, `false`, `""`, `[]`, `{}`.
        /// Fields with presence (messages, `optional`, oneof members, proto2 fields) appear only when set.
        /// Default `true`.
        public var includeDefaultValues = true
        /// Whether decoding writes enum values as numbers instead of names. Default `false`.
        public var enumsAsNumbers = false
        /// What to do with unknown fields when decoding. Default ``UnknownFieldPolicy/keep``.
        public var unknownFields = UnknownFieldPolicy.keep
        /// Whether encoding skips object members that name no field (otherwise
        /// `CourierError.Code.encodingFailed`). Default `false`.
        public var ignoreUnknownMembers = false
        /// The limits decoding enforces before protobuf-c reads the bytes (nesting, fields per message,
        /// values in all, string and bytes lengths, input size). Default `DecodingLimits.init()` with
        /// `DecodingLimits.maximumDepth` lowered to `DecodingLimits.defaultProtobufDepth` (100), since
        /// protobuf-c recurses once per level. `CodingHints.limits` or `CodecSet.decodingLimits`
        /// replace them for a call.
        public var limits: DecodingLimits = {
            var limits = DecodingLimits()
            limits.maximumDepth = DecodingLimits.defaultProtobufDepth
            return limits
        }()
        /// The deepest nesting of messages accepted in either direction. Default 100. The same setting as
        /// `limits.maximumDepth`.
        public var maxDepth: Int {
            get { limits.maximumDepth }
            set { limits.maximumDepth = newValue }
        }

        /// The defaults.
        public init() {}
    }

    /// The schema whose message types this codec reads and writes.
    public var schema: ProtobufSchema
    /// The options.
    public var options: Options

    /// A codec for the message types of `schema`.
    public init(schema: ProtobufSchema, options: Options = Options()) {
        self.schema = schema
        self.options = options
    }

    /// `ContentFormat.protobuf`.
    public var format: ContentFormat { .protobuf }

    func layout(for hints: CodingHints) throws -> MessageLayout {
        guard let name = hints.messageType, !name.isEmpty else {
            throw CourierError(
                .unknownMessageType,
                detail: "the protobuf codec needs the message type: set CodingHints.messageType (e.g. \"demo.UserListResponse\")")
        }
        let trimmed = name.utf8.first == UInt8(ascii: ".") ? String(name.dropFirst()) : name
        guard let index = schema.runtime.messageIndex(named: trimmed) else {
            throw CourierError(.unknownMessageType, detail: "the schema has no message type named \(name)")
        }
        return schema.runtime.messages[index]
    }

    /// Decodes a binary protobuf message of type `hints.messageType`.
    ///
    /// Throws `CourierError.Code.unknownMessageType` without a known type, `CourierError.Code.malformedInput`
    /// (with the byte offset) for bytes that are not a valid message of that type,
    /// `CourierError.Code.invalidUTF8` for a string field that is not UTF-8,
    /// `CourierError.Code.depthLimitExceeded` beyond ``Options/maxDepth`` (or `hints.limits`),
    /// `CourierError.Code.sizeLimitExceeded` beyond any other of ``Options/limits`` (checked before
    /// protobuf-c allocates anything) and `CourierError.Code.missingValue` for a missing proto2 `required`
    /// field.
    public func decode(_ data: Data, hints: CodingHints) throws -> Value {
        try decodeValue(data, hints: hints, direct: true)
    }

    /// The `Value` decode; `direct: false` always goes through protobuf-c (the reference the direct read is
    /// tested against).
    func decodeValue(_ data: Data, hints: CodingHints, direct: Bool) throws -> Value {
        let layout = try layout(for: hints)
        let runtime = schema.runtime
        var options = self.options
        if let limits = hints.limits { options.limits = limits }
        let limits = options.limits
        guard data.count <= limits.maximumInputSize else {
            throw DecodingLimits.sizeFailure(
                "maximumInputSize", limits.maximumInputSize, what: "the protobuf message has \(data.count) bytes",
                at: "in all")
        }
        return try data.withUnsafeBytes { raw -> Value in
            let bytes = raw.bindMemory(to: UInt8.self)
            // The direct read answers for every input whose meaning is plain and within the limits; anything
            // else goes through the scanner and protobuf-c, which give the exact answer or error.
            if direct {
                let reader = ProtobufWireReader(bytes: bytes, runtime: runtime, options: options)
                reader.startBudget(layout)
                if let value = try? reader.value(layout, 0..<bytes.count, depth: 1) { return value }
            }
            // protobuf-c recurses and allocates once per nested message: bound nesting, fields and values
            // in one iterative pass first.
            let scanner = ProtobufLimitScanner(
                runtime: runtime, limits: limits, countsDeclaredFields: options.includeDefaultValues)
            if let error = scanner.firstViolation(in: bytes, root: layout) {
                throw error
            }
            return try pivotValue(bytes, layout: layout, options: options)
        }
    }

    /// Decodes through protobuf-c and the walker (bytes already checked against the limits).
    func pivotValue(_ bytes: UnsafeBufferPointer<UInt8>, layout: MessageLayout, options: Options) throws -> Value {
        let runtime = schema.runtime
        do {
            let arena = Arena(initialSize: min(bytes.count * 3 + 1024, 64 * 1024))
            let base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
            guard let message = protobuf_c_message_unpack(layout.descriptor, &arena.allocator, bytes.count, base)
            else {
                if arena.state.pointee.failed {
                    throw CourierError(.sizeLimitExceeded, detail: "out of memory decoding \(layout.fullName)")
                }
                throw ProtobufErrorLocator(runtime: runtime, maxDepth: options.maxDepth)
                    .firstError(in: bytes, layout: layout)
                    ?? CourierError(.malformedInput, detail: "protobuf-c rejected the bytes as \(layout.fullName)")
            }
            let walker = ProtobufDecodeWalker(runtime: runtime, options: options, arena: arena)
            do throws(PathedError) {
                return try walker.message(UnsafeRawPointer(message), layout)
            } catch {
                throw error.courierError
            }
            // The arena (and with it the unpacked tree) is released here; no per-node frees are needed.
        }
    }

    /// Decodes a binary protobuf message of type `hints.messageType` straight into a `T`, without building
    /// the `Value` tree: the same model, or the same error, as `decoder.decode(T.self, from: decode(data,
    /// hints: hints))`.
    ///
    /// ```swift
    /// let page = try codec.decode(UserListResponse.self, from: body, hints: hints, decoder: ValueDecoder())
    /// ```
    public func decode<T: Decodable>(
        _ type: T.Type, from data: Data, hints: CodingHints, decoder: ValueDecoder
    ) throws -> T {
        if T.self != Value.self {
            let layout = try layout(for: hints)
            var options = self.options
            if let limits = hints.limits { options.limits = limits }
            if let model = T.self as? any ProtobufModel.Type,
                let result = decodeModel(model, from: data, layout: layout, options: options, decoder: decoder)
            {
                return result as! T  // swift-format-ignore: NeverForceUnwrap (decodeModel returns a T)
            }
            if let result = directDecode(T.self, from: data, layout: layout, options: options, decoder: decoder) {
                return result
            }
        }
        return try decoder.decode(T.self, from: decode(data, hints: hints))
    }

    /// Encodes `model` as a binary protobuf message of type `hints.messageType` without building the `Value`
    /// tree: the same bytes, or the same error, as `encode(encoder.encode(model), hints: hints)`.
    ///
    /// ```swift
    /// let body = try codec.encode(model: page, hints: hints, encoder: ValueEncoder())
    /// ```
    public func encode<T: Encodable>(model: T, hints: CodingHints, encoder: ValueEncoder) throws -> Data {
        if T.self != Value.self {
            let layout = try layout(for: hints)
            if let bytes = encodeModel(model, layout: layout, encoder: encoder) { return bytes }
            if let bytes = ProtobufTypedEncoding.encode(
                model, layout, runtime: schema.runtime, options: options, encoder: encoder)
            {
                return bytes
            }
        }
        return try encode(encoder.encode(model), hints: hints)
    }

    /// A ``ProtobufModel`` read by its generated code, or `nil` to go through `Codable`.
    private func decodeModel<M: ProtobufModel>(
        _ type: M.Type, from data: Data, layout: MessageLayout, options: Options, decoder: ValueDecoder
    ) -> M? {
        guard decoder.keyStrategy == .useDefaultKeys, options.includeDefaultValues,
            data.count <= options.limits.maximumInputSize
        else { return nil }
        let runtime = schema.runtime
        let plan = runtime.modelPlans.plan(layout, M.self, runtime: runtime)
        guard plan.decodable else { return nil }
        return data.withUnsafeBytes { raw in
            ProtobufModelReader.decode(M.self, raw.bindMemory(to: UInt8.self), plan: plan, runtime: runtime, options: options)
        }
    }

    /// A ``ProtobufModel`` written by its generated code, or `nil` to go through `Codable`.
    private func encodeModel<T: Encodable>(_ model: T, layout: MessageLayout, encoder: ValueEncoder) -> Data? {
        guard let model = model as? any ProtobufModel, encoder.keyStrategy == .useDefaultKeys else { return nil }
        return encodeModel(model, layout: layout)
    }

    private func encodeModel<M: ProtobufModel>(_ model: M, layout: MessageLayout) -> Data? {
        let runtime = schema.runtime
        let plan = runtime.modelPlans.plan(layout, M.self, runtime: runtime)
        return ProtobufModelWriter.encode(model, plan: plan, options: options)
    }

    /// Encodes `value` (an object) as a binary protobuf message of type `hints.messageType`.
    ///
    /// Throws `CourierError.Code.typeMismatch` for a member of the wrong kind,
    /// `CourierError.Code.valueOutOfRange` for a number that does not fit its field or an unknown enum name,
    /// `CourierError.Code.missingValue` for a missing proto2 `required` field and
    /// `CourierError.Code.encodingFailed` for members that name no field; the coding path says where.
    public func encode(_ value: Value, hints: CodingHints) throws -> Data {
        try encodeValue(value, hints: hints, direct: true)
    }

    /// The `Value` encode; `direct: false` always goes through protobuf-c (the reference the direct write is
    /// tested against). The direct write gives up on anything unusual or invalid, which protobuf-c then
    /// answers, so both give the same bytes and the same errors.
    func encodeValue(_ value: Value, hints: CodingHints, direct: Bool) throws -> Data {
        let layout = try layout(for: hints)
        if direct, let bytes = ProtobufValueWriter.encode(value, layout, runtime: schema.runtime, options: options) {
            return bytes
        }
        let arena = Arena(initialSize: 16 * 1024)
        var builder = ProtobufEncodeBuilder(runtime: schema.runtime, options: options, arena: arena)
        let message: UnsafeMutableRawPointer
        do throws(PathedError) {
            message = try builder.message(value, layout, depth: 1)
        } catch {
            throw error.courierError
        }
        let cMessage = message.assumingMemoryBound(to: ProtobufCMessage.self)
        let size = protobuf_c_message_get_packed_size(cMessage)
        var out = Data(count: size)
        let written = out.withUnsafeMutableBytes { raw -> Int in
            guard let base = raw.baseAddress else { return 0 }
            return protobuf_c_message_pack(cMessage, base.assumingMemoryBound(to: UInt8.self))
        }
        guard written == size else {
            throw CourierError(.encodingFailed, detail: "protobuf-c packed \(written) of \(size) bytes")
        }
        withExtendedLifetime(arena) {}
        return out
    }
}

/// A codec failure with the path collected while unwinding (cheaper than threading a path down the walk).
struct PathedError: Error {
    var code: CourierError.Code
    var detail: String
    var reversedPath: [PathComponent] = []

    init(_ code: CourierError.Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    var courierError: CourierError {
        CourierError(code, detail: detail, context: .init(codingPath: reversedPath.reversed()))
    }
}
