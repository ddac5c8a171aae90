#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes any `Decodable` model from a ``Value`` — the "typed" half of a call's result, for every format.
///
/// Failures are ``CourierError``s with code ``CourierError/Code/typeMismatch``,
/// ``CourierError/Code/missingValue`` or ``CourierError/Code/valueOutOfRange`` and the path in
/// ``CourierError/Context/codingPath``; the message names it (`... at data.users[3].age`). Integers are
/// exact: a value that does not fit the requested width is out of range, never truncated.
///
/// ```swift
/// struct User: Decodable { var id: Int64; var name: String; var joined: Date }
/// var decoder = ValueDecoder()
/// decoder.keyStrategy = .convertFromSnakeCase
/// let users = try decoder.decode([User].self, from: value["data"]?["users"] ?? .null)
/// ```
public struct ValueDecoder: Sendable {
    /// How dates are read. Default ``DateCodingStrategy/iso8601``.
    public var dateStrategy = DateCodingStrategy.iso8601
    /// How `Data` is read. Both strategies accept bytes and base64 strings; default ``DataCodingStrategy/base64``.
    public var dataStrategy = DataCodingStrategy.base64
    /// How member names map to coding keys. Default ``KeyCodingStrategy/useDefaultKeys``.
    public var keyStrategy = KeyCodingStrategy.useDefaultKeys
    /// Whether numbers may also be read from strings (`"42"` for an `Int`). Default `false`.
    public var lenientNumbers = false
    /// Values handed to the models' `init(from:)` through `decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// A decoder with the default options.
    public init() {}

    /// Decodes a `T` from `value`.
    public func decode<T: Decodable>(_ type: T.Type, from value: Value) throws -> T {
        let shared = DecodingOptions(
            dateStrategy: dateStrategy, dataStrategy: dataStrategy, keyStrategy: keyStrategy,
            lenientNumbers: lenientNumbers, userInfo: userInfo)
        let decoder = ValueDecoding(value: value, parent: nil, component: nil, options: shared)
        do {
            return try decoder.unwrap(value, as: T.self, component: nil)
        } catch let error as CourierError {
            throw error.resolved()
        } catch let error as DecodingError {
            throw CourierError(decodingError: error)
        } catch {
            throw CourierError.wrap(error, as: .typeMismatch)
        }
    }
}

extension ValueDecoder {
    /// Decodes a `T` from the value at `path` inside `value` (Moya's `map(_:atKeyPath:)`), so a model inside
    /// an envelope needs no envelope type. Nothing at `path` (or `null` there, for a non-optional `T`) fails
    /// with ``CourierError/Code/missingValue``; errors inside carry the whole path.
    ///
    /// ```swift
    /// let users = try ValueDecoder().decode([User].self, from: body, at: PathComponent.parse("data.items"))
    /// ```
    public func decode<T: Decodable>(_ type: T.Type, from value: Value, at path: [PathComponent]) throws -> T {
        guard let nested = value[lenientPath: path] else {
            // The longest prefix that exists, to say where the path stopped (walked once, component by component).
            var found = 0
            var parent = value
            while found < path.count, let next = parent[lenientPath: [path[found]]] {
                parent = next
                found += 1
            }
            var error = CourierError(.missingValue, detail: "the response has nothing at \(PathComponent.render(path)): "
                + (found == 0 ? "the body" : PathComponent.render(Array(path[..<found]))) + " is \(parent.kindName)"
                + (parent.objectValue.map { object in
                    object.isEmpty ? "" : " with " + object.keys.prefix(8).joined(separator: ", ")
                } ?? ""))
            error.context.codingPath = path
            throw error
        }
        do {
            return try decode(T.self, from: nested)
        } catch var error as CourierError {
            error.context.codingPath = path + error.context.codingPath
            throw error
        }
    }
}

extension Value {
    /// Decodes a `T` from the value at the dotted `path` (``PathComponent/parse(_:)``) with `decoder`.
    ///
    /// ```swift
    /// let raw = try await client.send(.users)
    /// let first = try raw.value.decode(User.self, at: "data.items[0]")
    /// ```
    public func decode<T: Decodable>(_ type: T.Type, at path: String, decoder: ValueDecoder = ValueDecoder()) throws -> T {
        try decoder.decode(type, from: self, at: PathComponent.parse(path))
    }

    /// Decodes a `T` from this value with a default ``ValueDecoder``.
    ///
    /// ```swift
    /// let user = try value.decode(User.self)
    /// ```
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueDecoder().decode(type, from: self)
    }
}

extension CourierError {
    /// A `DecodingError` thrown by a model's own code, mapped to Courier's codes with its path.
    init(decodingError error: DecodingError) {
        let code: Code
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let c):
            code = .typeMismatch
            context = c
        case .valueNotFound(_, let c):
            code = .missingValue
            context = c
        case .keyNotFound(let key, let c):
            code = .missingValue
            context = DecodingError.Context(
                codingPath: c.codingPath + [key], debugDescription: c.debugDescription, underlyingError: c.underlyingError)
        case .dataCorrupted(let c):
            code = .typeMismatch
            context = c
        @unknown default:
            self.init(.typeMismatch, underlying: error)
            return
        }
        let path = context.codingPath.map { PathComponent($0) }
        let rendered = PathComponent.render(path)
        self.init(
            code, detail: rendered.isEmpty ? context.debugDescription : "\(context.debugDescription) (at \(rendered))",
            context: .init(codingPath: path), underlying: error)
    }
}

/// Options shared by all nested decoders of one `decode` call.
final class DecodingOptions {
    let dateStrategy: DateCodingStrategy
    let dataStrategy: DataCodingStrategy
    let keyStrategy: KeyCodingStrategy
    let lenientNumbers: Bool
    let userInfo: [CodingUserInfoKey: Any]

    init(
        dateStrategy: DateCodingStrategy, dataStrategy: DataCodingStrategy, keyStrategy: KeyCodingStrategy,
        lenientNumbers: Bool, userInfo: [CodingUserInfoKey: any Sendable]
    ) {
        self.dateStrategy = dateStrategy
        self.dataStrategy = dataStrategy
        self.keyStrategy = keyStrategy
        self.lenientNumbers = lenientNumbers
        self.userInfo = userInfo
    }
}

/// The `Decoder` for one value. Nested decoders link to their parent, which is also the coding path.
final class ValueDecoding: Decoder, SingleValueDecodingContainer {
    let value: Value
    let parent: ValueDecoding?
    let component: PathComponent?
    let options: DecodingOptions
    /// Where the next keyed lookup probably is (models usually read members in order). Only the
    /// containers of this decoder touch it, one call at a time.
    @exclusivity(unchecked) var hint = 0

    init(value: Value, parent: ValueDecoding?, component: PathComponent?, options: DecodingOptions) {
        self.value = value
        self.parent = parent
        self.component = component
        self.options = options
    }

    var path: [PathComponent] {
        var result: [PathComponent] = []
        var node: ValueDecoding? = self
        while let n = node {
            if let c = n.component { result.append(c) }
            node = n.parent
        }
        return result.reversed()
    }

    var codingPath: [any CodingKey] { path.map { ValueCodingKey($0) } }
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    // MARK: Containers

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else { throw mismatch("an object", value, nil) }
        if options.keyStrategy == .convertFromSnakeCase {
            var converted = Value.Object(minimumCapacity: object.count)
            for (key, member) in object {
                converted.updateValue(member, forKey: KeyCodingStrategy.camelCase(fromSnakeCase: key))
            }
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, object: converted))
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, object: object))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch value {
        case .array(let elements): return UnkeyedContainer(decoder: self, elements: elements)
        case .bytes(let bytes): return UnkeyedContainer(decoder: self, elements: bytes.map { .int(Int64($0)) })
        default: throw mismatch("an array", value, nil)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Errors

    func fullPath(_ extra: PathComponent?) -> [PathComponent] {
        var p = path
        if let extra { p.append(extra) }
        return p
    }

    // The path and the detail are spelled out when read: a model that tries one type after another at every
    // level of a deep value throws most failures away unread, and spelling each at once took time in the depth.

    func mismatch(_ expected: String, _ found: Value, _ extra: PathComponent?) -> CourierError {
        CourierError(
            .typeMismatch, deferred: DeferredDecodingFailure(self, extra, .mismatch(expected, found: found.kindName)))
    }

    func outOfRange(_ type: Any.Type, _ found: Value, _ extra: PathComponent?) -> CourierError {
        CourierError(
            .valueOutOfRange, deferred: DeferredDecodingFailure(self, extra, .outOfRange(Self.describe(found), type)))
    }

    func missing(_ what: String, _ extra: PathComponent?) -> CourierError {
        CourierError(.missingValue, deferred: DeferredDecodingFailure(self, extra, .missing(what)))
    }

    static func describe(_ value: Value) -> String {
        switch value {
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        case .double(let d): return d.description
        case .number(let s): return s
        case .string(let s): return "\"\(s.prefix(40))\""
        default: return value.kindName
        }
    }

    // MARK: Scalars

    @inline(__always)
    func unwrapBool(_ value: Value, _ extra: @autoclosure () -> PathComponent?) throws -> Bool {
        guard case .bool(let b) = value else { throw mismatch("a boolean", value, extra()) }
        return b
    }

    @inline(__always)
    func unwrapString(_ value: Value, _ extra: @autoclosure () -> PathComponent?) throws -> String {
        guard case .string(let s) = value else { throw mismatch("a string", value, extra()) }
        return s
    }

    @inline(__always)
    func unwrapInteger<T: FixedWidthInteger>(_ value: Value, as type: T.Type, _ extra: @autoclosure () -> PathComponent?) throws -> T {
        switch value {
        case .int(let i):
            if let v = T(exactly: i) { return v }
        case .uint(let u):
            if let v = T(exactly: u) { return v }
        case .double(let d):
            guard d.isFinite, d.rounded(.towardZero) == d else { throw mismatch("an integer", value, extra()) }
            if let v = T(exactly: d) { return v }
        case .number(let text):
            return try integer(fromLexical: text, as: T.self, value, extra())
        case .string(let text) where options.lenientNumbers:
            guard JSONWriter.isJSONNumber(text) else { throw mismatch("an integer", value, extra()) }
            return try integer(fromLexical: text, as: T.self, value, extra())
        default:
            throw mismatch("an integer", value, extra())
        }
        throw outOfRange(T.self, value, extra())
    }

    private func integer<T: FixedWidthInteger>(
        fromLexical text: String, as type: T.Type, _ value: Value, _ extra: PathComponent?
    ) throws -> T {
        if let v = T(text) { return v }
        guard let canonical = ExactDecimal(lexical: text) else { throw mismatch("an integer", value, extra) }
        guard canonical.exponent >= 0 else { throw mismatch("an integer", value, extra) }
        guard canonical.digits.count + canonical.exponent <= 40 else { throw outOfRange(T.self, value, extra) }
        let digits = (canonical.negative ? "-" : "") + String(decoding: canonical.digits.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
            + String(repeating: "0", count: canonical.exponent)
        guard let v = T(digits.isEmpty || digits == "-" ? "0" : digits) else { throw outOfRange(T.self, value, extra) }
        return v
    }

    @inline(__always)
    func unwrapDouble(_ value: Value, _ extra: @autoclosure () -> PathComponent?) throws -> Double {
        switch value {
        case .double(let d): return d
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .number(let text):
            if let d = Double(text) { return d }
        case .string(let text) where options.lenientNumbers:
            if JSONWriter.isJSONNumber(text), let d = Double(text) { return d }
        default: break
        }
        throw mismatch("a number", value, extra())
    }

    func unwrapFloat(_ value: Value, _ extra: @autoclosure () -> PathComponent?) throws -> Float {
        guard let f = Value.float(narrowing: try unwrapDouble(value, extra())) else {
            throw outOfRange(Float.self, value, extra())
        }
        return f
    }

    // MARK: Nested values

    /// Decodes `T` from `value` found at `component` below this decoder.
    func unwrap<T: Decodable>(_ value: Value, as type: T.Type, component: PathComponent?) throws -> T {
        // Arrays of common scalars skip the generic `Array.init(from:)`; anything unusual (a wrong element,
        // a non-array) falls through to it, which reports the exact path.
        if T.self == [String].self, let fast = Self.scalars(value, { $0.stringValue }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Int].self, let fast = Self.scalars(value, { $0.exactInteger(as: Int.self) }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Int64].self, let fast = Self.scalars(value, { $0.exactInteger(as: Int64.self) }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Double].self, let fast = Self.scalars(value, { $0.plainNumber }) {
            return unsafeBitCast(fast, to: T.self)
        }
        if T.self == [Bool].self, let fast = Self.scalars(value, { $0.boolValue }) {
            return unsafeBitCast(fast, to: T.self)
        }
        // The other arrays of scalars. `Any`, not `T?`: an optional of an unspecialized `T` would look up its
        // metadata on every call, whatever `T` is.
        if mayBeScalarArray(T.self), let fast = ValueList(value: value).floatOrIntegerList(as: T.self) {
            return fast as! T
        }
        if T.self == Value.self { return value as! T }
        if T.self == Date.self { return try unwrapDate(value, component) as! T }
        if T.self == Data.self { return try unwrapData(value, component) as! T }
        if T.self == URL.self { return try unwrapURL(value, component) as! T }
        if T.self == Decimal.self { return try unwrapDecimal(value, component) as! T }
        let nested = component == nil ? self : ValueDecoding(value: value, parent: self, component: component, options: options)
        return try T(from: nested)
    }

    private static func scalars<E>(_ value: Value, _ convert: (Value) -> E?) -> [E]? {
        ValueList(value: value).scalars(convert)
    }

    /// An array `Value` as a ``ScalarListSource``.
    private struct ValueList: ScalarListSource {
        let value: Value

        func scalars<E>(_ convert: (Value) -> E?) -> [E]? {
            guard case .array(let elements) = value else { return nil }
            var result: [E] = []
            result.reserveCapacity(elements.count)
            for element in elements {
                guard let converted = convert(element) else { return nil }
                result.append(converted)
            }
            return result
        }
    }

    private static let iso8601 = Date.ISO8601FormatStyle()
    private static let iso8601Fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    func unwrapDate(_ value: Value, _ extra: PathComponent?) throws -> Date {
        switch options.dateStrategy.base {
        case .iso8601:
            let text = try unwrapString(value, extra)
            let style = text.contains(".") ? Self.iso8601Fractional : Self.iso8601
            guard let date = try? style.parse(text) else {
                throw mismatch("an ISO 8601 date", value, extra)
            }
            return date
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try unwrapDouble(value, extra))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try unwrapDouble(value, extra) / 1000)
        }
    }

    func unwrapData(_ value: Value, _ extra: PathComponent?) throws -> Data {
        switch value {
        case .bytes(let bytes): return Data(bytes)
        case .string(let text):
            guard let bytes = Base64.decode(text) else { throw mismatch("base64 data", value, extra) }
            return Data(bytes)
        default:
            throw mismatch(options.dataStrategy == .bytes ? "bytes" : "a base64 string", value, extra)
        }
    }

    func unwrapURL(_ value: Value, _ extra: PathComponent?) throws -> URL {
        let text = try unwrapString(value, extra)
        guard let url = URL(string: text) else { throw mismatch("a URL", value, extra) }
        return url
    }

    func unwrapDecimal(_ value: Value, _ extra: PathComponent?) throws -> Decimal {
        switch value {
        case .int(let i): return Decimal(i)
        case .uint(let u): return Decimal(u)
        case .double(let d):
            if let decimal = Decimal(string: d.description) { return decimal }
        case .number(let text):
            if let decimal = Decimal(string: text) { return decimal }
        case .string(let text) where options.lenientNumbers:
            if JSONWriter.isJSONNumber(text), let decimal = Decimal(string: text) { return decimal }
        default: break
        }
        throw mismatch("a decimal number", value, extra)
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try unwrapBool(value, nil) }
    func decode(_ type: String.Type) throws -> String { try unwrapString(value, nil) }
    func decode(_ type: Double.Type) throws -> Double { try unwrapDouble(value, nil) }
    func decode(_ type: Float.Type) throws -> Float { try unwrapFloat(value, nil) }
    func decode(_ type: Int.Type) throws -> Int { try unwrapInteger(value, as: Int.self, nil) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unwrapInteger(value, as: Int8.self, nil) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unwrapInteger(value, as: Int16.self, nil) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unwrapInteger(value, as: Int32.self, nil) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unwrapInteger(value, as: Int64.self, nil) }
    func decode(_ type: UInt.Type) throws -> UInt { try unwrapInteger(value, as: UInt.self, nil) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unwrapInteger(value, as: UInt8.self, nil) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unwrapInteger(value, as: UInt16.self, nil) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unwrapInteger(value, as: UInt32.self, nil) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unwrapInteger(value, as: UInt64.self, nil) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try unwrap(value, as: T.self, component: nil)
    }
}

// MARK: - Keyed

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ValueDecoding
    let keys: [String]
    let values: [Value]
    let object: Value.Object

    init(decoder: ValueDecoding, object: Value.Object) {
        self.decoder = decoder
        self.object = object
        keys = object.keys
        values = object.values
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    @inline(__always)
    private func find(_ key: Key) -> Value? {
        let name = key.stringValue
        let h = decoder.hint
        if h < keys.count, keys[h] == name {
            decoder.hint = h + 1
            return values[h]
        }
        guard let i = object.position(of: name) else { return nil }
        decoder.hint = i + 1
        return values[i]
    }

    @inline(__always)
    private func require(_ key: Key) throws -> Value {
        guard let value = find(key) else { throw decoder.missing("A value", .key(key.stringValue)) }
        return value
    }

    /// The member for `decodeIfPresent`: `nil` when absent or null.
    @inline(__always)
    private func present(_ key: Key) -> Value? {
        guard let value = find(key), !value.isNull else { return nil }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try require(key).isNull }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try decoder.unwrapBool(require(key), .key(key.stringValue))
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try decoder.unwrapString(require(key), .key(key.stringValue))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decoder.unwrapDouble(require(key), .key(key.stringValue))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try decoder.unwrapFloat(require(key), .key(key.stringValue))
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unwrap(require(key), as: T.self, component: .key(key.stringValue))
    }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        try decoder.unwrapInteger(require(key), as: T.self, .key(key.stringValue))
    }

    @inline(__always)
    private func optionalInteger<T: FixedWidthInteger>(_ key: Key) throws -> T? {
        guard let value = present(key) else { return nil }
        return try decoder.unwrapInteger(value, as: T.self, .key(key.stringValue))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let value = present(key) else { return nil }
        return try decoder.unwrapBool(value, .key(key.stringValue))
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let value = present(key) else { return nil }
        return try decoder.unwrapString(value, .key(key.stringValue))
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let value = present(key) else { return nil }
        return try decoder.unwrapDouble(value, .key(key.stringValue))
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let value = present(key) else { return nil }
        return try decoder.unwrapFloat(value, .key(key.stringValue))
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optionalInteger(key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = present(key) else { return nil }
        return try decoder.unwrap(value, as: T.self, component: .key(key.stringValue))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try nested(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try nested(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoding(value: object["super"] ?? .null, parent: decoder, component: .key("super"), options: decoder.options)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoding(value: find(key) ?? .null, parent: decoder, component: .key(key.stringValue), options: decoder.options)
    }

    private func nested(_ key: Key) throws -> ValueDecoding {
        ValueDecoding(value: try require(key), parent: decoder, component: .key(key.stringValue), options: decoder.options)
    }
}

// MARK: - Unkeyed

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: ValueDecoding
    let elements: [Value]
    private(set) var currentIndex = 0

    init(decoder: ValueDecoding, elements: [Value]) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    @inline(__always)
    private func current() throws -> Value {
        guard currentIndex < elements.count else {
            throw decoder.missing("Element \(currentIndex) (the array has \(elements.count))", .index(currentIndex))
        }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard try current().isNull else { return false }
        currentIndex += 1
        return true
    }

    @inline(__always)
    private mutating func next<T>(_ body: (Value, PathComponent) throws -> T) throws -> T {
        let result = try body(current(), .index(currentIndex))
        currentIndex += 1
        return result
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let decoder = decoder
        return try next { try decoder.unwrapBool($0, $1) }
    }
    mutating func decode(_ type: String.Type) throws -> String {
        let decoder = decoder
        return try next { try decoder.unwrapString($0, $1) }
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        let decoder = decoder
        return try next { try decoder.unwrapDouble($0, $1) }
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        let decoder = decoder
        return try next { try decoder.unwrapFloat($0, $1) }
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = decoder
        return try next { try decoder.unwrap($0, as: T.self, component: $1) }
    }

    private mutating func integer<T: FixedWidthInteger>() throws -> T {
        let decoder = decoder
        return try next { try decoder.unwrapInteger($0, as: T.self, $1) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try nestedDecoder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nestedDecoder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try nestedDecoder() }

    private mutating func nestedDecoder() throws -> ValueDecoding {
        let value = try current()
        let nested = ValueDecoding(value: value, parent: decoder, component: .index(currentIndex), options: decoder.options)
        currentIndex += 1
        return nested
    }
}

/// Whether `T` may be an array of scalars, for the decoders' one-pass reads of them: a type of one reference
/// (an array's size) that is not trivially copied (which rules out `Int`, `Double` and the other scalars that
/// reach a generic read, as `Optional`'s `init(from:)` asks for its wrapped type). It reads `T`'s value
/// witnesses only: cheap enough for every generic read, unlike a conformance check.
@inline(__always)
package func mayBeScalarArray<T>(_ type: T.Type) -> Bool {
    MemoryLayout<T>.size == MemoryLayout<[Int]>.size && !_isPOD(T.self)
}

/// A list of scalar `Value`s that a decoder reads in one pass: an array `Value` for ``ValueDecoding``, the
/// items of a list node for the typed XML decoder.
package protocol ScalarListSource {
    /// The items converted by `convert`; `nil` when this is not a list or an item does not convert.
    func scalars<E>(_ convert: (Value) -> E?) -> [E]?
}

extension ScalarListSource {
    /// The list as a `type` that is `[Float]` or an array of a fixed-width integer other than `Int` and `Int64`,
    /// when every item converts as ``ValueDecoder`` converts a plain number; `nil` otherwise (then
    /// `Array.init(from:)` reads it, and names a failing item).
    @inline(never)
    package func floatOrIntegerList(as type: Any.Type) -> Any? {
        func integers<E: FixedWidthInteger>(_: E.Type) -> [E]? { scalars { $0.exactInteger(as: E.self) } }
        if type == [Float].self { return scalars { $0.plainFloat } }
        if type == [Int32].self { return integers(Int32.self) }
        if type == [Int16].self { return integers(Int16.self) }
        if type == [Int8].self { return integers(Int8.self) }
        if type == [UInt].self { return integers(UInt.self) }
        if type == [UInt64].self { return integers(UInt64.self) }
        if type == [UInt32].self { return integers(UInt32.self) }
        if type == [UInt16].self { return integers(UInt16.self) }
        if type == [UInt8].self { return integers(UInt8.self) }
        return nil
    }
}

extension Value {
    /// An `.int` or `.uint` that `T` holds exactly, as ``ValueDecoder`` reads it; `nil` for anything else
    /// (which ``ValueDecoder`` may still read: a whole `.double`, a spelled `.number`, a lenient string).
    package func exactInteger<T: FixedWidthInteger>(as type: T.Type) -> T? {
        switch self {
        case .int(let i): return T(exactly: i)
        case .uint(let u): return T(exactly: u)
        default: return nil
        }
    }

    /// The number of a `.double`, `.int` or `.uint`, as ``ValueDecoder`` reads a `Double`; `nil` otherwise.
    package var plainNumber: Double? {
        switch self {
        case .double(let d): return d
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        default: return nil
        }
    }

    /// ``plainNumber`` as a `Float`, when it is finite as a `Float` or was not finite to begin with (else
    /// ``ValueDecoder`` reports it out of range).
    package var plainFloat: Float? { plainNumber.flatMap(Value.float(narrowing:)) }

    /// `d` as a `Float`, when that is finite or `d` was not finite to begin with; `nil` when `d` is beyond
    /// `Float`'s range (which ``ValueDecoder`` reports out of range).
    package static func float(narrowing d: Double) -> Float? {
        let f = Float(d)
        return f.isFinite || !d.isFinite ? f : nil
    }
}

/// What a ``ValueDecoding`` failed at, spelled out when its error's detail or coding path is read.
///
/// `@unchecked Sendable`: the decoder is read only through its `parent` and `component`, constants that no
/// thread changes. It holds the decoded value and its parents until the error is resolved
/// (``CourierError/resolved()``), which the decode entry points do before an error leaves them.
final class DeferredDecodingFailure: @unchecked Sendable {
    enum Kind {
        case mismatch(String, found: String)
        case outOfRange(String, Any.Type)
        case missing(String)
    }

    private let decoder: ValueDecoding
    private let extra: PathComponent?
    private let kind: Kind

    init(_ decoder: ValueDecoding, _ extra: PathComponent?, _ kind: Kind) {
        self.decoder = decoder
        self.extra = extra
        self.kind = kind
    }

    var path: [PathComponent] { decoder.fullPath(extra) }

    var detail: String {
        let path = path
        let at = path.isEmpty ? "" : " at \(PathComponent.render(path))"
        switch kind {
        case .mismatch(let expected, let found): return "Expected \(expected)\(at), found \(found)."
        case .outOfRange(let found, let type): return "\(found) does not fit \(type)\(at)."
        case .missing(let what): return "\(what) is missing at \(PathComponent.render(path))."
        }
    }
}
