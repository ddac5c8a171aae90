#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes any `Encodable` model into a ``Value`` — the typed half of a request body, for every format.
///
/// Object members keep the order in which the model encodes them (declaration order for synthesized
/// conformances). Failures thrown by a model's own `encode(to:)` become ``CourierError``s with code
/// ``CourierError/Code/encodingFailed`` and the coding path.
///
/// ```swift
/// struct NewUser: Encodable { var name: String; var birthDate: Date }
/// var encoder = ValueEncoder()
/// encoder.keyStrategy = .convertToSnakeCase
/// let body = try encoder.encode(NewUser(name: "Ada", birthDate: .now))   // {"name":…,"birth_date":…}
/// let json: [UInt8] = try JSONCodec().encode(body)
/// ```
public struct ValueEncoder: Sendable {
    /// How dates are written. Default ``DateCodingStrategy/iso8601``.
    public var dateStrategy = DateCodingStrategy.iso8601
    /// How `Data` is written. Default ``DataCodingStrategy/base64``.
    public var dataStrategy = DataCodingStrategy.base64
    /// How coding keys map to member names. Default ``KeyCodingStrategy/useDefaultKeys``.
    public var keyStrategy = KeyCodingStrategy.useDefaultKeys
    /// Values handed to the models' `encode(to:)` through `encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// An encoder with the default options.
    public init() {}

    /// Encodes `value` into a ``Value``.
    public func encode<T: Encodable>(_ value: T) throws -> Value {
        let options = EncodingOptions(
            dateStrategy: dateStrategy, dataStrategy: dataStrategy, keyStrategy: keyStrategy, userInfo: userInfo)
        let encoder = ValueEncoding(parent: nil, component: nil, options: options)
        do {
            return try encoder.box(value, component: nil)
        } catch let error as CourierError {
            throw error
        } catch let error as EncodingError {
            guard case .invalidValue(_, let context) = error else { throw CourierError(.encodingFailed, underlying: error) }
            let path = context.codingPath.map { PathComponent($0) }
            let rendered = PathComponent.render(path)
            throw CourierError(
                .encodingFailed,
                detail: rendered.isEmpty ? context.debugDescription : "\(context.debugDescription) (at \(rendered))",
                context: .init(codingPath: path), underlying: error)
        } catch {
            throw CourierError.wrap(error, as: .encodingFailed)
        }
    }
}

extension Value {
    /// The value a default ``ValueEncoder`` makes of `model`.
    ///
    /// ```swift
    /// let body = try Value(encoding: NewUser(name: "Ada"))
    /// ```
    public init(encoding model: some Encodable) throws {
        self = try ValueEncoder().encode(model)
    }
}

final class EncodingOptions {
    let dateStrategy: DateCodingStrategy
    let dataStrategy: DataCodingStrategy
    let keyStrategy: KeyCodingStrategy
    let userInfo: [CodingUserInfoKey: Any]
    private var snakeCaseCache: [String: String] = [:]

    init(
        dateStrategy: DateCodingStrategy, dataStrategy: DataCodingStrategy, keyStrategy: KeyCodingStrategy,
        userInfo: [CodingUserInfoKey: any Sendable]
    ) {
        self.dateStrategy = dateStrategy
        self.dataStrategy = dataStrategy
        self.keyStrategy = keyStrategy
        self.userInfo = userInfo
    }

    @inline(__always)
    func name(for key: some CodingKey) -> String {
        guard keyStrategy == .convertToSnakeCase else { return key.stringValue }
        let original = key.stringValue
        if let cached = snakeCaseCache[original] { return cached }
        let converted = KeyCodingStrategy.snakeCase(fromCamelCase: original)
        snakeCaseCache[original] = converted
        return converted
    }
}

/// Something whose final value is known only after the model is done writing (nested containers).
private protocol DeferredValue: AnyObject {
    func finish() -> Value
}

// The boxes and the encoder's storage are written only by the containers of one encoding call, one
// member at a time, so their exclusivity checks are switched off.
private final class ObjectBox: DeferredValue {
    @exclusivity(unchecked) var object = Value.Object(minimumCapacity: 8)
    @exclusivity(unchecked) var deferred: [(String, any DeferredValue)] = []

    func set(_ name: String, _ value: Value) {
        object.updateValue(value, forKey: name)
    }

    func finish() -> Value {
        guard !deferred.isEmpty else { return .object(object) }
        var result = object
        for (name, pending) in deferred { result.updateValue(pending.finish(), forKey: name) }
        return .object(result)
    }
}

private final class ArrayBox: DeferredValue {
    @exclusivity(unchecked) var elements: [Value] = []
    @exclusivity(unchecked) var deferred: [(Int, any DeferredValue)] = []

    func finish() -> Value {
        guard !deferred.isEmpty else { return .array(elements) }
        var result = elements
        for (index, pending) in deferred { result[index] = pending.finish() }
        return .array(result)
    }
}

/// The `Encoder` for one value.
final class ValueEncoding: Encoder, SingleValueEncodingContainer {
    private enum Storage {
        case none
        case value(Value)
        case object(ObjectBox)
        case array(ArrayBox)
    }

    let parent: ValueEncoding?
    let component: PathComponent?
    let options: EncodingOptions
    @exclusivity(unchecked) private var storage = Storage.none

    init(parent: ValueEncoding?, component: PathComponent?, options: EncodingOptions) {
        self.parent = parent
        self.component = component
        self.options = options
    }

    var path: [PathComponent] {
        var result: [PathComponent] = []
        var node: ValueEncoding? = self
        while let n = node {
            if let c = n.component { result.append(c) }
            node = n.parent
        }
        return result.reversed()
    }

    var codingPath: [any CodingKey] { path.map { ValueCodingKey($0) } }
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    /// The encoded value (an empty object when the model wrote nothing).
    var result: Value {
        switch storage {
        case .none: return .object(Value.Object())
        case .value(let v): return v
        case .object(let box): return box.finish()
        case .array(let box): return box.finish()
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object(let box) = storage { return KeyedEncodingContainer(KeyedContainer(encoder: self, box: box)) }
        let box = ObjectBox()
        storage = .object(box)
        return KeyedEncodingContainer(KeyedContainer(encoder: self, box: box))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array(let box) = storage { return UnkeyedContainer(encoder: self, box: box) }
        let box = ArrayBox()
        storage = .array(box)
        return UnkeyedContainer(encoder: self, box: box)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Values

    /// Encodes `value` found at `component` (or into this encoder when `component` is `nil`).
    func box<T: Encodable>(_ value: T, component: PathComponent?) throws -> Value {
        if let special = try special(value, component) { return special }
        if component == nil {
            try value.encode(to: self)
            return result
        }
        let child = ValueEncoding(parent: self, component: component, options: options)
        try value.encode(to: child)
        return child.result
    }

    private static let iso8601 = Date.ISO8601FormatStyle()
    /// The seconds after 1970 of 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z, as the formatter reads them.
    static let iso8601Range = -62_135_769_600.0..<253_402_300_800.0

    private func special<T: Encodable>(_ value: T, _ component: PathComponent?) throws -> Value? {
        if T.self == [String].self { return .array(unsafeBitCast(value, to: [String].self).map { .string($0) }) }
        if T.self == [Int].self { return .array(unsafeBitCast(value, to: [Int].self).map { .int(Int64($0)) }) }
        if T.self == [Int64].self { return .array(unsafeBitCast(value, to: [Int64].self).map { .int($0) }) }
        if T.self == [Double].self { return .array(unsafeBitCast(value, to: [Double].self).map { .double($0) }) }
        if T.self == [Bool].self { return .array(unsafeBitCast(value, to: [Bool].self).map { .bool($0) }) }
        if T.self == Value.self { return unsafeBitCast(value, to: Value.self) }
        if T.self == Date.self { return try encodeDate(value as! Date, component) }
        if T.self == Data.self {
            let bytes = [UInt8](value as! Data)
            return options.dataStrategy == .bytes ? .bytes(bytes) : .string(Base64.encode(bytes))
        }
        if T.self == URL.self { return .string((value as! URL).absoluteString) }
        if T.self == Decimal.self { return try encodeDecimal(value as! Decimal, component) }
        return nil
    }

    private func encodeDate(_ date: Date, _ component: PathComponent?) throws -> Value {
        let seconds = date.timeIntervalSince1970
        switch options.dateStrategy.base {
        case .iso8601:
            // Milliseconds rounded, not truncated: a date built from whole milliseconds (x.941 s is stored
            // as x.94099…) writes the milliseconds it was built from.
            var whole = seconds.rounded(.down)
            var millis = 0
            // ISO 8601 text as RFC 3339 has it holds the years 0001 to 9999; beyond them (and for an infinite
            // or NaN date) Foundation's formatter writes a clamped year, so the date is refused instead.
            if seconds.isFinite {
                millis = Int(((seconds - whole) * 1000).rounded())
                if millis == 1000 {
                    whole += 1
                    millis = 0
                }
            }
            guard Self.iso8601Range.contains(whole) else {
                let path = path + (component.map { [$0] } ?? [])
                throw CourierError(
                    .encodingFailed,
                    detail: "The date \(seconds) s after 1970 is outside the years 0001 to 9999 that ISO 8601 text "
                        + "holds (at \(PathComponent.render(path))).",
                    context: .init(codingPath: path))
            }
            var text = Self.iso8601.format(Date(timeIntervalSince1970: whole))
            if millis != 0, text.hasSuffix("Z") {
                text.removeLast()
                text += "." + String(repeating: "0", count: millis < 10 ? 2 : millis < 100 ? 1 : 0) + String(millis) + "Z"
            }
            return .string(text)
        case .secondsSince1970: return Self.number(seconds)
        case .millisecondsSince1970: return Self.number(seconds * 1000)
        }
    }

    private static func number(_ d: Double) -> Value {
        if d.rounded(.towardZero) == d, abs(d) < 9e15 { return .int(Int64(d)) }
        return .double(d)
    }

    private func encodeDecimal(_ decimal: Decimal, _ component: PathComponent?) throws -> Value {
        let text = decimal.description
        if let i = Int64(text) { return .int(i) }
        guard JSONWriter.isJSONNumber(text) else {
            let path = path + (component.map { [$0] } ?? [])
            throw CourierError(
                .encodingFailed, detail: "The decimal \(text) is not a number (at \(PathComponent.render(path))).",
                context: .init(codingPath: path))
        }
        return .number(text)
    }

    @inline(__always)
    static func float(_ f: Float) -> Value {
        // Through the shortest decimal text, so 0.1 as Float stays 0.1 rather than 0.10000000149011612.
        guard f.isFinite, let d = Double(f.description) else { return .double(Double(f)) }
        return .double(d)
    }

    // MARK: SingleValueEncodingContainer

    func encodeNil() { storage = .value(.null) }
    func encode(_ value: Bool) { storage = .value(.bool(value)) }
    func encode(_ value: String) { storage = .value(.string(value)) }
    func encode(_ value: Double) { storage = .value(.double(value)) }
    func encode(_ value: Float) { storage = .value(Self.float(value)) }
    func encode(_ value: Int) { storage = .value(.int(Int64(value))) }
    func encode(_ value: Int8) { storage = .value(.int(Int64(value))) }
    func encode(_ value: Int16) { storage = .value(.int(Int64(value))) }
    func encode(_ value: Int32) { storage = .value(.int(Int64(value))) }
    func encode(_ value: Int64) { storage = .value(.int(value)) }
    func encode(_ value: UInt) { storage = .value(Value(UInt64(value))) }
    func encode(_ value: UInt8) { storage = .value(.int(Int64(value))) }
    func encode(_ value: UInt16) { storage = .value(.int(Int64(value))) }
    func encode(_ value: UInt32) { storage = .value(.int(Int64(value))) }
    func encode(_ value: UInt64) { storage = .value(Value(value)) }
    func encode<T: Encodable>(_ value: T) throws {
        if let special = try special(value, nil) {
            storage = .value(special)
        } else {
            try value.encode(to: self)
        }
    }

    fileprivate func deferredEncoder(_ component: PathComponent) -> ValueEncoding {
        ValueEncoding(parent: self, component: component, options: options)
    }
}

extension ValueEncoding: DeferredValue {
    fileprivate func finish() -> Value { result }
}

// MARK: - Keyed

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoding
    let box: ObjectBox

    var codingPath: [any CodingKey] { encoder.codingPath }

    @inline(__always)
    private func set(_ value: Value, _ key: Key) {
        box.set(encoder.options.name(for: key), value)
    }

    mutating func encodeNil(forKey key: Key) { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) { set(ValueEncoding.float(value), key) }
    mutating func encode(_ value: Int, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) { set(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) { set(Value(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) { set(Value(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let name = encoder.options.name(for: key)
        box.set(name, try encoder.box(value, component: .key(name)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = encoder.deferredEncoder(PathComponent(key))
        defer_(nested, key)
        return nested.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = encoder.deferredEncoder(PathComponent(key))
        defer_(nested, key)
        return nested.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let nested = encoder.deferredEncoder(.key("super"))
        box.set("super", .null)
        box.deferred.append(("super", nested))
        return nested
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let nested = encoder.deferredEncoder(PathComponent(key))
        defer_(nested, key)
        return nested
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    // (`defer` is a keyword; the underscore keeps the name readable)
    private func defer_(_ nested: ValueEncoding, _ key: Key) {
        let name = encoder.options.name(for: key)
        box.set(name, .null)  // keeps the member's position
        box.deferred.append((name, nested))
    }
}

// MARK: - Unkeyed

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: ValueEncoding
    let box: ArrayBox

    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { box.elements.count }

    mutating func encodeNil() { box.elements.append(.null) }
    mutating func encode(_ value: Bool) { box.elements.append(.bool(value)) }
    mutating func encode(_ value: String) { box.elements.append(.string(value)) }
    mutating func encode(_ value: Double) { box.elements.append(.double(value)) }
    mutating func encode(_ value: Float) { box.elements.append(ValueEncoding.float(value)) }
    mutating func encode(_ value: Int) { box.elements.append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) { box.elements.append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) { box.elements.append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) { box.elements.append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) { box.elements.append(.int(value)) }
    mutating func encode(_ value: UInt) { box.elements.append(Value(UInt64(value))) }
    mutating func encode(_ value: UInt8) { box.elements.append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) { box.elements.append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) { box.elements.append(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) { box.elements.append(Value(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let encoded = try encoder.box(value, component: .index(box.elements.count))
        box.elements.append(encoded)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        deferred().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        deferred().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { deferred() }

    private mutating func deferred() -> ValueEncoding {
        let index = box.elements.count
        let nested = encoder.deferredEncoder(.index(index))
        box.elements.append(.null)
        box.deferred.append((index, nested))
        return nested
    }
}
