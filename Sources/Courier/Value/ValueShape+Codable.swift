#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ValueShape {
    /// The shape a `Decodable` model expects, found by running its `init(from:)` against a recording
    /// decoder: members and their kinds, optionals, arrays, nested objects, and string- or
    /// integer-keyed dictionaries (``map(_:)``). `Date` and `URL` are strings, `Data` is bytes, `Decimal`
    /// a number, `Value` anything.
    ///
    /// Recursive models end in ``any`` where a type recurs (and below a depth of 32), so this always
    /// terminates. A member whose type rejects the recorder's placeholder values (an enum with raw values,
    /// say) still contributes its shape; plain-data types get a throwaway zero value so the members after
    /// it are recorded too. Enums with associated values decode through keys the recorder cannot list,
    /// so their shape is an object with no known members (`.object([:])`, whose members decode as `.any`).
    ///
    /// ```swift
    /// struct Page: Decodable { var total: Int; var users: [User]; var next: String? }
    /// var hints = CodingHints()
    /// hints.shape = ValueShape(of: Page.self)
    /// // .object(["total": .integer, "users": .array(.object([...])), "next": .optional(.string)])
    /// ```
    public init<T: Decodable>(of type: T.Type) {
        let root = ShapeNode()
        let recorder = ShapeRecorder(node: root, depth: 0, types: [], exhausted: false)
        _ = try? recorder.record(T.self, into: root)
        self = root.shape()
    }
}

/// What the recorder learned about one position.
private final class ShapeNode {
    enum Kind {
        case unknown
        case scalar(ValueShape)
        case object
        case array
        case map
    }

    var kind = Kind.unknown
    var optional = false
    var members: [String: ShapeNode] = [:]
    var element: ShapeNode?

    func member(_ name: String) -> ShapeNode {
        if case .unknown = kind { kind = .object }
        if let existing = members[name] { return existing }
        let node = ShapeNode()
        members[name] = node
        return node
    }

    func elementNode(as kind: Kind) -> ShapeNode {
        self.kind = kind
        if let element { return element }
        let node = ShapeNode()
        element = node
        return node
    }

    func shape() -> ValueShape {
        let base: ValueShape
        switch kind {
        case .unknown: base = .any
        case .scalar(let s): base = s
        case .object: base = .object(members.mapValues { $0.shape() })
        case .array: base = .array(element?.shape() ?? .any)
        case .map: base = .map(element?.shape() ?? .any)
        }
        if optional, case .optional = base { return base }
        return optional ? .optional(base) : base
    }
}

private protocol OptionalShapeMarker {
    static var wrappedDecodable: (any Decodable.Type)? { get }
    static var noneValue: Self { get }
}

extension Optional: OptionalShapeMarker {
    fileprivate static var wrappedDecodable: (any Decodable.Type)? { Wrapped.self as? any Decodable.Type }
    fileprivate static var noneValue: Self { nil }
}

private protocol DictionaryShapeMarker {
    static var isKeyed: Bool { get }
    static var valueDecodable: any Decodable.Type { get }
    static var empty: Self { get }
}

extension Dictionary: DictionaryShapeMarker where Key: Decodable, Value: Decodable {
    fileprivate static var isKeyed: Bool {
        Key.self == String.self || Key.self == Int.self || Key.self is any CodingKeyRepresentable.Type
    }
    fileprivate static var valueDecodable: any Decodable.Type { Value.self }
    fileprivate static var empty: Self { [:] }
}

private struct ShapeRecordingStopped: Error {}

/// A decoder that returns placeholder values and writes down what it was asked for.
private final class ShapeRecorder: Decoder, SingleValueDecodingContainer {
    static let maximumDepth = 32

    let node: ShapeNode
    let depth: Int
    let types: [ObjectIdentifier]
    /// Past a recursion or the depth cap: report everything as absent and record nothing.
    let exhausted: Bool

    init(node: ShapeNode, depth: Int, types: [ObjectIdentifier], exhausted: Bool) {
        self.node = node
        self.depth = depth
        self.types = types
        self.exhausted = exhausted
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if !exhausted, case .unknown = node.kind { node.kind = .object }
        return KeyedDecodingContainer(KeyedRecorder<Key>(recorder: self, node: node))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let element = exhausted ? ShapeNode() : node.elementNode(as: .array)
        return UnkeyedRecorder(recorder: self, element: element)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Recording

    func scalar(_ shape: ValueShape, _ node: ShapeNode) {
        guard !exhausted else { return }
        node.kind = .scalar(shape)
    }

    /// Records `T` at `node` and returns a placeholder `T`.
    func record<T: Decodable>(_ type: T.Type, into node: ShapeNode) throws -> T {
        if T.self == Value.self { return placeholder(.any, node, Value.null) as! T }
        if T.self == Date.self { return placeholder(.string, node, Date(timeIntervalSince1970: 0)) as! T }
        if T.self == URL.self { return placeholder(.string, node, URL(string: "https://example.com")!) as! T }
        if T.self == Data.self { return placeholder(.bytes, node, Data()) as! T }
        if T.self == Decimal.self { return placeholder(.number, node, Decimal(0)) as! T }
        if let optional = T.self as? any OptionalShapeMarker.Type {
            if !exhausted { node.optional = true }
            if let wrapped = optional.wrappedDecodable, !exhausted { _ = try? record(wrapped, into: node) }
            return optional.noneValue as! T
        }
        if let dictionary = T.self as? any DictionaryShapeMarker.Type, dictionary.isKeyed {
            if !exhausted {
                let element = node.elementNode(as: .map)
                _ = try? record(dictionary.valueDecodable, into: element)
            }
            return dictionary.empty as! T
        }
        let id = ObjectIdentifier(T.self)
        let recurses = exhausted || depth >= Self.maximumDepth || types.contains(id)
        if recurses && !exhausted { node.kind = .scalar(.any) }
        let child = ShapeRecorder(node: node, depth: depth + 1, types: types + [id], exhausted: recurses)
        do {
            return try T(from: child)
        } catch {
            if let fallback = (T.self as? any CaseIterable.Type).flatMap({ Self.first(of: $0) }) as? T {
                return fallback
            }
            if let collection = T.self as? any RangeReplaceableCollection.Type,
                let empty = Self.empty(collection) as? T
            {
                return empty
            }
            if let set = T.self as? any SetAlgebra.Type, let empty = Self.empty(set) as? T { return empty }
            if let zero = Self.zeroValue(of: T.self) { return zero }
            throw error
        }
    }

    private func placeholder<V>(_ shape: ValueShape, _ node: ShapeNode, _ value: V) -> V {
        scalar(shape, node)
        return value
    }

    private static func empty<C: RangeReplaceableCollection>(_ type: C.Type) -> Any { C() }
    private static func empty<S: SetAlgebra>(_ type: S.Type) -> Any { S() }
    private static func first<C: CaseIterable>(of type: C.Type) -> Any? { C.allCases.first }

    /// An all-zero instance of a plain-data type (the first case of a payload-free enum), used only as a
    /// throwaway placeholder so that recording can go on after a type refused the recorder's values.
    private static func zeroValue<V>(of type: V.Type) -> V? {
        guard _isPOD(V.self) else { return nil }
        return withUnsafeTemporaryAllocation(byteCount: max(MemoryLayout<V>.size, 1),
            alignment: MemoryLayout<V>.alignment) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            return buffer.baseAddress!.load(as: V.self)
        }
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool {
        if exhausted { return true }
        node.optional = true
        return false
    }
    func decode(_ type: Bool.Type) throws -> Bool { placeholder(.bool, node, false) }
    func decode(_ type: String.Type) throws -> String { placeholder(.string, node, "") }
    func decode(_ type: Double.Type) throws -> Double { placeholder(.number, node, 0) }
    func decode(_ type: Float.Type) throws -> Float { placeholder(.number, node, 0) }
    func decode(_ type: Int.Type) throws -> Int { placeholder(.integer, node, 0) }
    func decode(_ type: Int8.Type) throws -> Int8 { placeholder(.integer, node, 0) }
    func decode(_ type: Int16.Type) throws -> Int16 { placeholder(.integer, node, 0) }
    func decode(_ type: Int32.Type) throws -> Int32 { placeholder(.integer, node, 0) }
    func decode(_ type: Int64.Type) throws -> Int64 { placeholder(.integer, node, 0) }
    func decode(_ type: UInt.Type) throws -> UInt { placeholder(.integer, node, 0) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { placeholder(.integer, node, 0) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { placeholder(.integer, node, 0) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { placeholder(.integer, node, 0) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { placeholder(.integer, node, 0) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // A single value container decoding a whole type re-enters the same position.
        try record(T.self, into: node)
    }
}

private struct KeyedRecorder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: ShapeRecorder
    let node: ShapeNode

    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    private func member(_ key: Key) -> ShapeNode {
        recorder.exhausted ? ShapeNode() : node.member(key.stringValue)
    }

    private func nested(_ key: Key) throws -> ShapeRecorder {
        guard !recorder.exhausted else { throw ShapeRecordingStopped() }
        return ShapeRecorder(node: member(key), depth: recorder.depth + 1, types: recorder.types, exhausted: false)
    }

    func contains(_ key: Key) -> Bool { !recorder.exhausted }

    func decodeNil(forKey key: Key) throws -> Bool {
        if recorder.exhausted { return true }
        member(key).optional = true
        return false
    }

    private func scalar<V>(_ shape: ValueShape, _ key: Key, _ value: V) throws -> V {
        guard !recorder.exhausted else { throw ShapeRecordingStopped() }
        recorder.scalar(shape, member(key))
        return value
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try scalar(.bool, key, false) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try scalar(.string, key, "") }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(.number, key, 0) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try scalar(.number, key, 0) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(.integer, key, 0) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try scalar(.integer, key, 0) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try scalar(.integer, key, 0) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try scalar(.integer, key, 0) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(.integer, key, 0) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try scalar(.integer, key, 0) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try scalar(.integer, key, 0) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try scalar(.integer, key, 0) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try scalar(.integer, key, 0) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try scalar(.integer, key, 0) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard !recorder.exhausted else { throw ShapeRecordingStopped() }
        return try recorder.record(T.self, into: member(key))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard !recorder.exhausted else { return nil }
        let node = member(key)
        node.optional = true
        _ = try? recorder.record(T.self, into: node)
        return nil
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
        guard !recorder.exhausted else { throw ShapeRecordingStopped() }
        return ShapeRecorder(node: node.member("super"), depth: recorder.depth + 1, types: recorder.types, exhausted: false)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try nested(key) }
}

private struct UnkeyedRecorder: UnkeyedDecodingContainer {
    let recorder: ShapeRecorder
    let element: ShapeNode
    private(set) var currentIndex = 0

    init(recorder: ShapeRecorder, element: ShapeNode) {
        self.recorder = recorder
        self.element = element
    }

    var codingPath: [any CodingKey] { [] }
    var count: Int? { nil }
    /// One element is enough to learn the element shape.
    var isAtEnd: Bool { recorder.exhausted || currentIndex > 0 }

    /// The node for the next element: the shared element node the first time, a throwaway afterwards.
    private mutating func next() throws -> ShapeNode {
        guard !recorder.exhausted else { throw ShapeRecordingStopped() }
        defer { currentIndex += 1 }
        return currentIndex == 0 ? element : ShapeNode()
    }

    mutating func decodeNil() throws -> Bool {
        if recorder.exhausted { return true }
        if currentIndex == 0 { element.optional = true }
        return false
    }

    private mutating func scalar<V>(_ shape: ValueShape, _ value: V) throws -> V {
        recorder.scalar(shape, try next())
        return value
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try scalar(.bool, false) }
    mutating func decode(_ type: String.Type) throws -> String { try scalar(.string, "") }
    mutating func decode(_ type: Double.Type) throws -> Double { try scalar(.number, 0) }
    mutating func decode(_ type: Float.Type) throws -> Float { try scalar(.number, 0) }
    mutating func decode(_ type: Int.Type) throws -> Int { try scalar(.integer, 0) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try scalar(.integer, 0) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try scalar(.integer, 0) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try scalar(.integer, 0) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try scalar(.integer, 0) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try scalar(.integer, 0) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar(.integer, 0) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar(.integer, 0) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar(.integer, 0) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar(.integer, 0) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try recorder.record(T.self, into: try next())
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try nestedRecorder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nestedRecorder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try nestedRecorder() }

    private mutating func nestedRecorder() throws -> ShapeRecorder {
        ShapeRecorder(node: try next(), depth: recorder.depth + 1, types: recorder.types, exhausted: false)
    }
}
