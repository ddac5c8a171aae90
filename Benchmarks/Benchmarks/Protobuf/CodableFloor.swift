import Foundation

/// The floor of any decoder that goes through `Decodable`: a decoder that parses nothing. Its input is a tape of
/// the page's values already in the order the models' synthesized `init(from:)` asks for them (strings as byte
/// ranges, made into `String`s on every decode as any decoder must), and it ignores keys (a real decoder must
/// map each key to a field). What it costs is Codable's own machinery: a container box per message, a witness
/// call per member, the arrays and strings the model holds. No decoder of a `Decodable` model, ours or another,
/// can go below it; the benchmark `protobuf.decode.floor` sets it beside swift-protobuf's generated code.
final class FloorTape: @unchecked Sendable {  // one benchmark reads it at a time
    enum Entry {
        case int(Int64)
        case double(Double)
        case bool(Bool)
        case string(start: Int, count: Int)
        case array(count: Int)
        case object
        case absent
    }

    private(set) var entries: [Entry] = []
    private(set) var bytes: [UInt8] = []
    var position = 0

    /// The tape of `page`, in its `init(from:)` order.
    init(_ page: UserListResponse) {
        entries.append(.int(Int64(page.code)))
        append(page.message)
        guard let data = page.data else {
            entries.append(.absent)
            return
        }
        entries.append(.object)
        entries.append(.int(Int64(data.page)))
        entries.append(.int(Int64(data.total)))
        entries.append(.array(count: data.users.count))
        for user in data.users {
            entries.append(.object)
            entries.append(.int(user.id))
            append(user.name)
            append(user.email)
            entries.append(.int(Int64(user.age)))
            entries.append(.double(user.score))
            entries.append(.bool(user.active))
            entries.append(.array(count: user.tags.count))
            for tag in user.tags { append(tag) }
            if let address = user.address {
                entries.append(.object)
                append(address.city)
                append(address.street)
                append(address.zip)
            } else {
                entries.append(.absent)
            }
        }
    }

    private func append(_ string: String) {
        entries.append(.string(start: bytes.count, count: string.utf8.count))
        bytes.append(contentsOf: string.utf8)
    }

    @inline(__always)
    func next() -> Entry {
        defer { position += 1 }
        return entries[position]
    }

    @inline(__always)
    func peek() -> Entry { entries[position] }

    @inline(__always)
    func string(_ start: Int, _ count: Int) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<start + count]), as: UTF8.self) }
    }

    struct Mismatch: Error {}

    /// Decodes `page` again from the tape.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        position = 0
        return try T(from: FloorDecoder(tape: self, arrayCount: 0))
    }
}

struct FloorDecoder: Decoder, SingleValueDecodingContainer {
    let tape: FloorTape
    let arrayCount: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(FloorKeyed<Key>(tape: tape))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { FloorUnkeyed(tape: tape, count: arrayCount) }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try FloorValue.decode(tape) }
    // The page's models read no bare scalars.
    func decode(_ type: Bool.Type) throws -> Bool { throw FloorTape.Mismatch() }
    func decode(_ type: String.Type) throws -> String { throw FloorTape.Mismatch() }
    func decode(_ type: Double.Type) throws -> Double { throw FloorTape.Mismatch() }
    func decode(_ type: Float.Type) throws -> Float { throw FloorTape.Mismatch() }
    func decode(_ type: Int.Type) throws -> Int { throw FloorTape.Mismatch() }
    func decode(_ type: Int8.Type) throws -> Int8 { throw FloorTape.Mismatch() }
    func decode(_ type: Int16.Type) throws -> Int16 { throw FloorTape.Mismatch() }
    func decode(_ type: Int32.Type) throws -> Int32 { throw FloorTape.Mismatch() }
    func decode(_ type: Int64.Type) throws -> Int64 { throw FloorTape.Mismatch() }
    func decode(_ type: UInt.Type) throws -> UInt { throw FloorTape.Mismatch() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { throw FloorTape.Mismatch() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { throw FloorTape.Mismatch() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { throw FloorTape.Mismatch() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { throw FloorTape.Mismatch() }
}

/// One value off the tape as `T`.
enum FloorValue {
    @inline(__always)
    static func decode<T: Decodable>(_ tape: FloorTape) throws -> T {
        switch tape.next() {
        case .object: return try T(from: FloorDecoder(tape: tape, arrayCount: 0))
        case .array(let count):
            // `[String]` built at its size, as Courier's decoders build it (Array's own `init(from:)` grows it).
            if T.self == [String].self {
                var strings: [String] = []
                strings.reserveCapacity(count)
                for _ in 0..<count { strings.append(try string(tape)) }
                return unsafeBitCast(strings, to: T.self)
            }
            return try T(from: FloorDecoder(tape: tape, arrayCount: count))
        // `[String]`'s `init(from:)` asks for its elements generically.
        case .string(let start, let count) where T.self == String.self:
            return unsafeBitCast(tape.string(start, count), to: T.self)
        default: throw FloorTape.Mismatch()
        }
    }

    @inline(__always)
    static func integer<T: FixedWidthInteger>(_ tape: FloorTape) throws -> T {
        guard case .int(let i) = tape.next(), let v = T(exactly: i) else { throw FloorTape.Mismatch() }
        return v
    }

    @inline(__always)
    static func string(_ tape: FloorTape) throws -> String {
        guard case .string(let start, let count) = tape.next() else { throw FloorTape.Mismatch() }
        return tape.string(start, count)
    }
}

struct FloorKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let tape: FloorTape
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool {
        if case .absent = tape.peek() {
            tape.position += 1
            return false
        }
        return true
    }
    func decodeNil(forKey key: Key) throws -> Bool { false }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        guard case .bool(let b) = tape.next() else { throw FloorTape.Mismatch() }
        return b
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try FloorValue.string(tape) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        guard case .double(let d) = tape.next() else { throw FloorTape.Mismatch() }
        return d
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decode(Double.self, forKey: key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try FloorValue.integer(tape) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try FloorValue.integer(tape) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try FloorValue.integer(tape) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try FloorValue.integer(tape) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try FloorValue.integer(tape) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try FloorValue.integer(tape) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try FloorValue.integer(tape) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try FloorValue.integer(tape) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try FloorValue.integer(tape) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try FloorValue.integer(tape) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try FloorValue.decode(tape) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw FloorTape.Mismatch()
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw FloorTape.Mismatch() }
    func superDecoder() throws -> any Decoder { throw FloorTape.Mismatch() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw FloorTape.Mismatch() }
}

struct FloorUnkeyed: UnkeyedDecodingContainer {
    let tape: FloorTape
    let total: Int
    var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }

    init(tape: FloorTape, count: Int) {
        self.tape = tape
        total = count
    }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode(_ type: String.Type) throws -> String {
        currentIndex += 1
        return try FloorValue.string(tape)
    }
    // The page's arrays hold strings and messages only.
    mutating func decode(_ type: Bool.Type) throws -> Bool { throw FloorTape.Mismatch() }
    mutating func decode(_ type: Double.Type) throws -> Double { throw FloorTape.Mismatch() }
    mutating func decode(_ type: Float.Type) throws -> Float { throw FloorTape.Mismatch() }
    mutating func decode(_ type: Int.Type) throws -> Int { throw FloorTape.Mismatch() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { throw FloorTape.Mismatch() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { throw FloorTape.Mismatch() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { throw FloorTape.Mismatch() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { throw FloorTape.Mismatch() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { throw FloorTape.Mismatch() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { throw FloorTape.Mismatch() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { throw FloorTape.Mismatch() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { throw FloorTape.Mismatch() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { throw FloorTape.Mismatch() }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        currentIndex += 1
        return try FloorValue.decode(tape)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw FloorTape.Mismatch()
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw FloorTape.Mismatch() }
    mutating func superDecoder() throws -> any Decoder { throw FloorTape.Mismatch() }
}

/// The floor of any encoder that goes through `Encodable`: it formats nothing, and only copies each member's
/// bytes (a string's UTF-8, a number's eight bytes) into one growing buffer, as any encoder must at least do.
/// What it costs is Codable's own machinery: a container box per message, a witness call per member. No encoder
/// of an `Encodable` model can go below it; the benchmark `protobuf.encode.floor` sets it beside swift-protobuf.
final class FloorSink: @unchecked Sendable {  // one benchmark writes it at a time
    var bytes: [UInt8] = []

    /// Encodes `model` into a fresh buffer (sized like the last one), returned as `Data` as an encoder would.
    func encode<T: Encodable>(_ model: T) throws -> Data {
        bytes = []
        bytes.reserveCapacity(64 * 1024)
        try model.encode(to: FloorEncoder(sink: self))
        return Data(bytes)
    }

    @inline(__always)
    func append(_ string: String) {
        var string = string
        string.withUTF8 { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: Int64(truncatingIfNeeded: value).littleEndian) { bytes.append(contentsOf: $0) }
    }
}

struct FloorEncoder: Encoder, SingleValueEncodingContainer {
    let sink: FloorSink
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(FloorKeyedEncoding<Key>(sink: sink))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { FloorUnkeyedEncoding(sink: sink) }
    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    mutating func encodeNil() throws {}
    mutating func encode(_ value: Bool) throws { sink.append(value ? 1 : 0) }
    mutating func encode(_ value: String) throws { sink.append(value) }
    mutating func encode(_ value: Double) throws { sink.append(value.bitPattern) }
    mutating func encode(_ value: Float) throws { sink.append(value.bitPattern) }
    mutating func encode(_ value: Int) throws { sink.append(value) }
    mutating func encode(_ value: Int8) throws { sink.append(value) }
    mutating func encode(_ value: Int16) throws { sink.append(value) }
    mutating func encode(_ value: Int32) throws { sink.append(value) }
    mutating func encode(_ value: Int64) throws { sink.append(value) }
    mutating func encode(_ value: UInt) throws { sink.append(value) }
    mutating func encode(_ value: UInt8) throws { sink.append(value) }
    mutating func encode(_ value: UInt16) throws { sink.append(value) }
    mutating func encode(_ value: UInt32) throws { sink.append(value) }
    mutating func encode(_ value: UInt64) throws { sink.append(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: FloorEncoder(sink: sink)) }
}

struct FloorKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: FloorSink
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Bool, forKey key: Key) throws { sink.append(value ? 1 : 0) }
    mutating func encode(_ value: String, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { sink.append(value.bitPattern) }
    mutating func encode(_ value: Float, forKey key: Key) throws { sink.append(value.bitPattern) }
    mutating func encode(_ value: Int, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { sink.append(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { sink.append(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try value.encode(to: FloorEncoder(sink: sink))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(FloorKeyedEncoding<NestedKey>(sink: sink))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        FloorUnkeyedEncoding(sink: sink)
    }
    mutating func superEncoder() -> any Encoder { FloorEncoder(sink: sink) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { FloorEncoder(sink: sink) }
}

struct FloorUnkeyedEncoding: UnkeyedEncodingContainer {
    let sink: FloorSink
    var count = 0
    var codingPath: [any CodingKey] { [] }

    init(sink: FloorSink) { self.sink = sink }

    mutating func encodeNil() throws { count += 1 }
    mutating func encode(_ value: Bool) throws { try encode(value ? 1 : 0 as Int) }
    mutating func encode(_ value: String) throws {
        count += 1
        sink.append(value)
    }
    mutating func encode(_ value: Double) throws { try encode(value.bitPattern) }
    mutating func encode(_ value: Float) throws { try encode(value.bitPattern) }
    mutating func encode(_ value: Int) throws { try encode(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try encode(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try encode(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try encode(Int64(value)) }
    mutating func encode(_ value: Int64) throws {
        count += 1
        sink.append(value)
    }
    mutating func encode(_ value: UInt) throws { try encode(Int64(bitPattern: UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { try encode(Int64(value)) }
    mutating func encode(_ value: UInt16) throws { try encode(Int64(value)) }
    mutating func encode(_ value: UInt32) throws { try encode(Int64(value)) }
    mutating func encode(_ value: UInt64) throws { try encode(Int64(bitPattern: value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        count += 1
        try value.encode(to: FloorEncoder(sink: sink))
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        count += 1
        return KeyedEncodingContainer(FloorKeyedEncoding<NestedKey>(sink: sink))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        count += 1
        return FloorUnkeyedEncoding(sink: sink)
    }
    mutating func superEncoder() -> any Encoder { FloorEncoder(sink: sink) }
}
